from django.apps import AppConfig


class OauthConfig(AppConfig):
    name = "oauth"
    default_auto_field = "django.db.models.BigAutoField"
