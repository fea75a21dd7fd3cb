"""OpenAPI generation tweaks."""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiResponse


class LexragAutoSchema(AutoSchema):
    """Name nested serializers after their view: `CurrentTenantApi.OutputSerializer` becomes the
    component `CurrentTenantApiOutput`, so the many `InputSerializer`/`OutputSerializer` classes of
    the one-view-per-operation style never collide."""

    def get_serializer_name(self, serializer, direction):
        return type(serializer).__qualname__.replace(".", "")


# Request component name -> keys added to its schema (`request_schema`).
_REQUEST_EXTRAS: dict[str, dict] = {}


def request_schema(**extra):
    """Class decorator for a request serializer: `extra` is added to its OpenAPI request component
    (a PATCH's too), for rules the fields cannot state, such as "one of these two" (`oneOf`) or
    "at least one field" (`minProperties`). A body such a component demands is marked required."""

    def decorate(serializer_class):
        name = serializer_class.__qualname__.replace(".", "").removesuffix("Serializer")
        for component in (f"{name}Request", f"Patched{name}Request"):
            _REQUEST_EXTRAS.setdefault(component, {}).update(extra)
        return serializer_class

    return decorate


def strict_request(serializer_class):
    """Class decorator for a request serializer whose body refuses unknown fields: its OpenAPI
    request component says `additionalProperties: false`, so clients (and schemathesis) know."""
    return request_schema(additionalProperties=False)(serializer_class)


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
    body or query it cannot parse), 500, 404 when its path has an id, 415 when it takes a body, and
    — when it needs credentials — 401/403/429, unless the view documented that status itself. It
    adds the `request_schema` extras, and marks a body `required` when its schema demands one."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components["ErrorBody"] = ERROR_BODY_SCHEMA
    for name in _REQUEST_EXTRAS.keys() & set(components):
        components[name].update(_REQUEST_EXTRAS[name])
    for path, path_item in result.get("paths", {}).items():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            codes = {"400": "The request is not valid.", "500": "An unexpected error occurred."}
            if "{" in path:
                codes["404"] = "Not found: no such object for this tenant (or a malformed id)."
            if operation.get("security") != [{}] and "security" in operation:
                codes.update(_COMMON_ERRORS)
            body = operation.get("requestBody")
            if body:
                # The view parses the body on the way in (TenantApiView checks its tenant_id).
                codes["415"] = f"The body is not {_media_types(body)}."
                if all(
                    _demands_a_body(media.get("schema"), components) for media in body["content"].values()
                ):
                    body["required"] = True
            for code, description in codes.items():
                content = {"application/json": {"schema": ERROR_BODY_REF}}
                responses.setdefault(code, {"description": description, "content": content})
    return result


def _media_types(body: dict) -> str:
    """The content types a request body is documented in, in words ("JSON or multipart/form-data")."""
    names = [_MEDIA_NAMES.get(media_type, media_type) for media_type in body["content"]]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


_MEDIA_NAMES = {"application/json": "JSON"}


def _demands_a_body(schema: dict | None, components: dict) -> bool:
    """Whether no body (or `{}`) is refused: a required field, `minProperties`, or only
    alternatives that each demand one."""
    if not schema:
        return False
    if "$ref" in schema:
        return _demands_a_body(components.get(schema["$ref"].rsplit("/", 1)[-1]), components)
    if schema.get("required") or schema.get("minProperties"):
        return True
    branches = schema.get("oneOf") or schema.get("anyOf")
    return bool(branches) and all(_demands_a_body(branch, components) for branch in branches)
