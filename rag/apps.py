from django.apps import AppConfig


class RagConfig(AppConfig):
    name = "rag"
    verbose_name = "Legal research"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the receivers)
