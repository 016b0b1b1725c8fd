from django.apps import AppConfig


class ProjectdocsConfig(AppConfig):
    """A project's Markdown docs stored as memories (issue 17); no tables of its own."""

    name = "projectdocs"
    default_auto_field = "django.db.models.BigAutoField"
