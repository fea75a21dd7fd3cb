from django.apps import AppConfig


class RagsiteConfig(AppConfig):
    name = "ragsite"
    verbose_name = "Lexrag site"

    def ready(self):
        import logging

        from django.conf import settings

        from ragsite import checks  # noqa: F401  (registers system checks)

        if not settings.REDIS_URL:
            logging.getLogger("ragsite").warning(
                "REDIS_URL is unset: using the in-process cache and running Celery tasks eagerly"
            )
