"""Tenant endpoints: who am I acting as, switch tenant (sessions), and API key management."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ragsite.exceptions import PermissionDenied

from . import selectors, services
from .api_base import API_PARSERS, TenantApiView
from .models import Role
from .permissions import IsAuthenticatedUser


class TenantOutputSerializer(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()


class CurrentTenantApi(TenantApiView):
    """GET: the tenant and role this request acts as, and how it authenticated."""

    class OutputSerializer(serializers.Serializer):
        tenant = TenantOutputSerializer()
        role = serializers.CharField()
        via = serializers.CharField()

    @extend_schema(responses=OutputSerializer)
    def get(self, request):
        via = "api_key" if self.credential.api_key else "session"
        data = {"tenant": self.tenant, "role": self.credential.role, "via": via}
        return Response(self.OutputSerializer(data).data)


class MembershipListApi(APIView):
    """GET: the tenants a logged-in user belongs to (the tenant switcher's choices)."""

    permission_classes = [IsAuthenticatedUser]

    class OutputSerializer(serializers.Serializer):
        tenant = TenantOutputSerializer()
        role = serializers.CharField()

    @extend_schema(responses=OutputSerializer(many=True))
    def get(self, request):
        if request.user.pk is None:  # an API key belongs to exactly one tenant
            credential = request.auth
            memberships = [{"tenant": credential.tenant, "role": credential.role}]
        else:
            memberships = selectors.membership_list_for_user(user=request.user)
        return Response(self.OutputSerializer(memberships, many=True).data)


class TenantSwitchApi(APIView):
    """POST {"tenant": slug}: make another of the user's tenants the session's active one."""

    permission_classes = [IsAuthenticatedUser]
    parser_classes = API_PARSERS

    class InputSerializer(serializers.Serializer):
        tenant = serializers.SlugField()

    @extend_schema(request=InputSerializer, responses=MembershipListApi.OutputSerializer)
    def post(self, request):
        if request.user.pk is None:
            raise PermissionDenied("An API key is bound to its tenant and cannot switch.")
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        credential = services.session_tenant_switch(
            user=request.user, session=request.session, slug=payload.validated_data["tenant"]
        )
        return Response({"tenant": TenantOutputSerializer(credential.tenant).data, "role": credential.role})


class ApiKeyOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    role = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    created_by = serializers.CharField(source="created_by.get_username", allow_null=True, default=None)
    created_by_key = serializers.CharField(source="created_by_key.prefix", allow_null=True, default=None)
    created_via = serializers.CharField()


class ApiKeyCreatedSerializer(ApiKeyOutputSerializer):
    key = serializers.CharField(help_text="The full key. Shown only in this response.")


class ApiKeyListCreateApi(TenantApiView):
    """GET: the tenant's keys (prefix only). POST {name, role}: a new key, shown in full once."""

    required_role = Role.ADMIN

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)
        role = serializers.ChoiceField(choices=[Role.VIEWER, Role.MEMBER, Role.ADMIN], default=Role.MEMBER)

    @extend_schema(responses=ApiKeyOutputSerializer(many=True))
    def get(self, request):
        keys = selectors.api_key_list(tenant=self.tenant).select_related("created_by", "created_by_key")
        return Response(ApiKeyOutputSerializer(keys, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: ApiKeyCreatedSerializer})
    def post(self, request):
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        # Made by a person (session) or by a key, which it cannot outrank (the service checks).
        api_key, raw_key = services.api_key_create(
            tenant=self.tenant,
            created_via="api",
            created_by=request.user if request.user.pk else None,
            created_by_key=self.credential.api_key,
            **payload.validated_data,
        )
        api_key.key = raw_key
        return Response(ApiKeyCreatedSerializer(api_key).data, status=status.HTTP_201_CREATED)


class ApiKeyRevokeApi(TenantApiView):
    """DELETE: revoke one of the tenant's keys (it stops working at once; the row is kept)."""

    required_role = Role.ADMIN

    @extend_schema(responses={200: ApiKeyOutputSerializer})
    def delete(self, request, key_id: int):
        api_key = services.api_key_revoke(tenant=self.tenant, key_id=key_id)
        return Response(ApiKeyOutputSerializer(api_key).data)
