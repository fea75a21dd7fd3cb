from django.urls import path

from . import apis

urlpatterns = [
    path("current", apis.CurrentTenantApi.as_view(), name="tenant-current"),
    path("memberships", apis.MembershipListApi.as_view(), name="tenant-memberships"),
    path("switch", apis.TenantSwitchApi.as_view(), name="tenant-switch"),
    path("api-keys", apis.ApiKeyListCreateApi.as_view(), name="api-key-list"),
    path("api-keys/<int:key_id>", apis.ApiKeyRevokeApi.as_view(), name="api-key-revoke"),
]
