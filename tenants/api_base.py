"""Base class for tenant-scoped API views."""

from __future__ import annotations

from rest_framework.views import APIView

from ragsite.exceptions import PermissionDenied

from .models import Tenant
from .services import TenantCredential

_BODY_METHODS = {"POST", "PUT", "PATCH"}


class TenantApiView(APIView):
    """An APIView acting for the credential's tenant (`self.tenant`, `self.credential`).

    A body may name `tenant_id` (as the spec's requests do); it must be the caller's own tenant.
    """

    @property
    def credential(self) -> TenantCredential:
        return self.request.auth

    @property
    def tenant(self) -> Tenant:
        return self.request.auth.tenant

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in _BODY_METHODS and isinstance(request.data, dict):
            claimed = request.data.get("tenant_id")
            if claimed not in (None, "") and str(claimed) not in {self.tenant.slug, str(self.tenant.pk)}:
                raise PermissionDenied("tenant_id does not match the tenant of your credentials.")
