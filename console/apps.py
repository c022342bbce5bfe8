from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "console"
    verbose_name = "customer console"
