from django.apps import AppConfig


class ConversionConfig(AppConfig):
    name = "conversion"
    default_auto_field = "django.db.models.BigAutoField"
