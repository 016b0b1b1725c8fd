from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "access"
    default_auto_field = "django.db.models.BigAutoField"
