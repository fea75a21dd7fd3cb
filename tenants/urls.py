from django.urls import path

from . import apis

urlpatterns = [
    path("current", apis.CurrentTenantApi.as_view(), name="tenant-current"),
    path("memberships", apis.MembershipListApi.as_view(), name="tenant-memberships"),
    path("memberships/<slug:slug>/leave", apis.MembershipLeaveApi.as_view(), name="tenant-membership-leave"),
    path("switch", apis.TenantSwitchApi.as_view(), name="tenant-switch"),
    path("invitations", apis.MyInvitationListApi.as_view(), name="tenant-my-invitations"),
    path(
        "invitations/<int:invitation_id>/accept",
        apis.MyInvitationAcceptApi.as_view(),
        name="tenant-invitation-accept",
    ),
    path(
        "invitations/<int:invitation_id>/decline",
        apis.MyInvitationDeclineApi.as_view(),
        name="tenant-invitation-decline",
    ),
    path("api-keys", apis.ApiKeyListCreateApi.as_view(), name="api-key-list"),
    path("api-keys/<int:key_id>", apis.ApiKeyRevokeApi.as_view(), name="api-key-revoke"),
]
