from django.apps import AppConfig


class ArchiveConfig(AppConfig):
    """Export, import and the secret scan of stored memories: reads and writes memories and coderefs,
    has no tables of its own."""

    name = "archive"
    default_auto_field = "django.db.models.BigAutoField"
