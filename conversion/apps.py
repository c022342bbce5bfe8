from django.apps import AppConfig


class ConversionConfig(AppConfig):
    name = "conversion"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts.engines import engines_register
        from conversion import engine

        # An organization's default engine names one of these (the operator command checks it).
        engines_register(engine.ENGINES)
