"""Tenant endpoints: who am I acting as, switch tenant (sessions), the signed-in person's own
invitations and leaving a firm, and API key management."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ragsite.exceptions import NotFound, PermissionDenied
from ragsite.schema import error_response

from . import invitations, selectors, services
from .api_base import API_PARSERS, TenantApiView
from .models import InvitationStatus, Role
from .permissions import IsAuthenticatedUser, IsPerson


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


# --- The signed-in person's invitations and firms ---------------------------------------------------
# Session only: an API key belongs to a firm, not a person (403 PermissionDenied, `IsPerson`). The
# rules are tenants.invitations' and tenants.services' (the same as the /accounts/firms/ page): an
# invitation is answered only by the account it names, and someone else's invitation is the same
# 404 as a missing one; the last owner cannot leave.

_PERSON_ONLY = "PermissionDenied: an API key (it belongs to a firm, not a person)."
_INVITATION_ID = OpenApiParameter(
    "invitation_id", int, OpenApiParameter.PATH, description="The invitation's id."
)
_NO_SUCH_INVITATION = (
    "No such invitation for you: missing, someone else's, answered, withdrawn or expired "
    "(the same reply for each)."
)


class InvitationOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    tenant = TenantOutputSerializer()
    role = serializers.CharField(help_text="The role you would have in the firm.")
    status = serializers.ChoiceField(choices=InvitationStatus.choices)
    invited_by = serializers.SerializerMethodField(help_text="Who invited you; null if unknown.")
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()

    def get_invited_by(self, invitation) -> str | None:
        inviter = invitation.invited_by
        return (inviter.get_full_name() or inviter.get_username()) if inviter else None


class MyInvitationListApi(APIView):
    """GET: the signed-in user's open invitations (addressed to their account, in active firms)."""

    permission_classes = [IsPerson]

    @extend_schema(
        operation_id="tenants_invitations_list",
        responses={200: InvitationOutputSerializer(many=True), 403: error_response(_PERSON_ONLY)},
    )
    def get(self, request):
        pending = selectors.invitation_list_for_user(user=request.user)
        return Response(InvitationOutputSerializer(pending, many=True).data)


def _answer_schema(answer: str, reply):
    """The OpenAPI description of answering an invitation (`answer`: accept or decline)."""
    return extend_schema(
        operation_id=f"tenants_invitations_{answer}",
        request=None,
        parameters=[_INVITATION_ID],
        responses={
            200: reply,
            403: error_response(_PERSON_ONLY),
            404: error_response(_NO_SUCH_INVITATION),
        },
    )


class MyInvitationAcceptApi(APIView):
    """POST: accept one of your invitations; you become a member with its role. The active firm
    does not change (switch when you choose to)."""

    permission_classes = [IsPerson]

    @_answer_schema("accept", MembershipListApi.OutputSerializer)
    def post(self, request, invitation_id: int):
        membership = invitations.invitation_accept(invitation_id=invitation_id, user=request.user)
        return Response(MembershipListApi.OutputSerializer(membership).data)


class MyInvitationDeclineApi(APIView):
    """POST: decline one of your invitations; nothing else changes."""

    permission_classes = [IsPerson]

    @_answer_schema("decline", InvitationOutputSerializer)
    def post(self, request, invitation_id: int):
        declined = invitations.invitation_decline(invitation_id=invitation_id, user=request.user)
        return Response(InvitationOutputSerializer(declined).data)


class MembershipLeaveApi(APIView):
    """POST: leave one of your firms (any role; the last owner must make someone else owner
    first). Your API keys there are revoked; your account and other firms stay. Leaving the
    session's active firm unsets it."""

    permission_classes = [IsPerson]

    @extend_schema(
        operation_id="tenants_memberships_leave",
        request=None,
        parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH, description="The firm's slug.")],
        responses={
            204: None,
            403: error_response(_PERSON_ONLY),
            404: error_response("You are not a member of such a firm."),
            409: error_response(
                'Conflict: you are its last owner (details: {"membership": "last_owner"}); make '
                "another member owner first."
            ),
        },
    )
    def post(self, request, slug: str):
        membership = selectors.membership_list_for_user(user=request.user).filter(tenant__slug=slug).first()
        if membership is None:
            raise NotFound("Tenant not found.")
        services.membership_leave(tenant=membership.tenant, user=request.user)
        if request.session.get(services.SESSION_TENANT_KEY) == membership.tenant_id:
            del request.session[services.SESSION_TENANT_KEY]
        return Response(status=status.HTTP_204_NO_CONTENT)


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
