from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"
    verbose_name = "Tenants"

    def ready(self):
        from . import credentials, schema  # noqa: F401  (keys follow people; OpenAPI auth extensions)
