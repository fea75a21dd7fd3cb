"""DRF authentication: `Authorization: Api-Key <key>` and Django sessions. Both resolve the tenant
once and put a `TenantCredential` in `request.auth`; views never look the tenant up themselves."""

from __future__ import annotations

from rest_framework.authentication import BaseAuthentication, SessionAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from ragsite.exceptions import NoActiveTenant

from . import services

API_KEY_KEYWORD = "api-key"


class ApiKeyPrincipal:
    """`request.user` for API-key requests: authenticated, but not a Django user."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = id = None

    def __init__(self, api_key):
        self.api_key = api_key
        self.username = f"api-key:{api_key.prefix}"

    def __str__(self) -> str:
        return self.username


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request):
        header = get_authorization_header(request).decode("latin-1").strip()
        scheme, _, key = header.partition(" ")
        if scheme.lower() != API_KEY_KEYWORD:
            return None
        credential = services.api_key_authenticate(raw_key=key) if key.strip() else None
        if credential is None:
            raise AuthenticationFailed("The API key is malformed, unknown or revoked.")
        return ApiKeyPrincipal(credential.api_key), credential

    def authenticate_header(self, request) -> str:
        return 'Api-Key realm="lexrag"'


class TenantSessionAuthentication(SessionAuthentication):
    """Session login (with CSRF on unsafe methods); the tenant is the session's active one."""

    def authenticate(self, request):
        result = super().authenticate(request)
        if result is None:
            return None
        user = result[0]
        try:
            credential = services.session_credential(user=user, session=request._request.session)
        except NoActiveTenant as exc:
            # Authenticated, but HasTenant refuses tenant-scoped endpoints with this reason (no
            # firm, or several and none chosen).
            credential = None
            request._request.no_tenant_reason = exc
        return user, credential
