from django.apps import AppConfig


class SvcxConfig(AppConfig):
    name = "svcx"
    verbose_name = "svcx service"
