"""OpenAPI generation tweaks."""

from drf_spectacular.openapi import AutoSchema


class LexragAutoSchema(AutoSchema):
    """Name nested serializers after their view: `CurrentTenantApi.OutputSerializer` becomes the
    component `CurrentTenantApiOutput`, so the many `InputSerializer`/`OutputSerializer` classes of
    the one-view-per-operation style never collide."""

    def get_serializer_name(self, serializer, direction):
        return type(serializer).__qualname__.replace(".", "")
