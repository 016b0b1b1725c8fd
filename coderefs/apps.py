from django.apps import AppConfig


class CoderefsConfig(AppConfig):
    name = "coderefs"
    default_auto_field = "django.db.models.BigAutoField"
