from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The firm's own admin console at /manage/ (issue #21): no models, only admin classes."""

    name = "console"
    verbose_name = "Firm admin console"
