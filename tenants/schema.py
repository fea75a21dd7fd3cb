"""OpenAPI descriptions of our authentication schemes (drf-spectacular extensions)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "tenants.authentication.ApiKeyAuthentication"
    name = "ApiKeyAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'Tenant API key: "Api-Key lx_<prefix>_<secret>"',
        }


class TenantSessionScheme(OpenApiAuthenticationExtension):
    target_class = "tenants.authentication.TenantSessionAuthentication"
    name = "SessionAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "cookie", "name": "sessionid"}
