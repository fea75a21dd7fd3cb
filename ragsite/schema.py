"""OpenAPI generation tweaks."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse


class LexragAutoSchema(AutoSchema):
    """Name nested serializers after their view: `CurrentTenantApi.OutputSerializer` becomes the
    component `CurrentTenantApiOutput`, so the many `InputSerializer`/`OutputSerializer` classes of
    the one-view-per-operation style never collide."""

    def get_serializer_name(self, serializer, direction):
        return type(serializer).__qualname__.replace(".", "")


_STRICT_REQUESTS: set[str] = set()


def strict_request(serializer_class):
    """Class decorator for a request serializer whose body refuses unknown fields: its OpenAPI
    request component says `additionalProperties: false`, so clients (and schemathesis) know."""
    name = serializer_class.__qualname__.replace(".", "").removesuffix("Serializer")
    _STRICT_REQUESTS.add(f"{name}Request")
    return serializer_class


# Failures any authenticated endpoint can answer with, whatever it does.
_COMMON_ERRORS = {
    "401": "Not authenticated: no, unknown or revoked credentials.",
    "403": "Authenticated, but the role is too low, or no tenant is active.",
    "429": "Throttled: too many requests for the tenant or the credential; see Retry-After.",
}
ERROR_BODY_REF = {"$ref": "#/components/schemas/ErrorBody"}
ERROR_BODY_SCHEMA = {
    "type": "object",
    "description": "The one error body every failure under /api/ has.",
    "properties": {
        "error_type": {"type": "string", "example": "InvalidQuery"},
        "message": {"type": "string"},
        "request_id": {"type": "string", "nullable": True},
        "details": {"description": "Per-field problems or other specifics; {} when none."},
    },
    "required": ["error_type", "message", "request_id", "details"],
}


def error_response(description: str) -> OpenApiResponse:
    """An error response of the one error body (the `ErrorBody` component)."""
    return OpenApiResponse(ERROR_BODY_REF, description=description)


def add_error_responses(result, generator, request, public):
    """drf-spectacular postprocessing hook: every operation documents the error body for 400 (a
    body or query it cannot parse), 500, 404 when its path has an id, and — when it needs
    credentials — 401/403/429, unless the view documented that status itself."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["ErrorBody"] = ERROR_BODY_SCHEMA
    for name in _STRICT_REQUESTS & set(components):
        components[name]["additionalProperties"] = False
    for path, path_item in result.get("paths", {}).items():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            codes = {"400": "The request is not valid.", "500": "An unexpected error occurred."}
            if "{" in path:
                codes["404"] = "Not found: no such object for this tenant (or a malformed id)."
            if operation.get("security") != [{}] and "security" in operation:
                codes.update(_COMMON_ERRORS)
            for code, description in codes.items():
                content = {"application/json": {"schema": ERROR_BODY_REF}}
                responses.setdefault(code, {"description": description, "content": content})
    return result
