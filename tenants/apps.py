from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    verbose_name = "Tenants"

    def ready(self):
        from . import schema  # noqa: F401  (registers the OpenAPI auth extensions)
