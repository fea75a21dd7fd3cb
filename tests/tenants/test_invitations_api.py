"""The signed-in person's invitations and firms over REST (#33): list my pending invitations,
accept or decline one, leave a firm. Session only (an API key belongs to a firm, not a person:
403); someone else's invitation, in this firm or another, is the same 404 as a missing id; the
rules are the /accounts/firms/ page's (the last owner cannot leave)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from tenants.invitations import invitation_cancel, invitation_create, invitation_decline
from tenants.models import ApiKey, Invitation, InvitationStatus, Membership, Role
from tenants.services import api_key_create
from tests.factories import MembershipFactory, TenantFactory, UserFactory

pytestmark = pytest.mark.django_db

INVITATIONS = "/api/v1/tenants/invitations"
MEMBERSHIPS = "/api/v1/tenants/memberships"
CURRENT = "/api/v1/tenants/current"


def invite(tenant, username, role=Role.MEMBER) -> Invitation:
    inviter = MembershipFactory(tenant=tenant, role=Role.OWNER).user
    return invitation_create(tenant=tenant, identifier=username, role=role, invited_by=inviter)


def signed_in(user, *, csrf: bool = False) -> APIClient:
    client = APIClient(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def is_member(tenant, user) -> bool:
    return Membership.objects.filter(tenant=tenant, user=user).exists()


def without_request_id(response) -> tuple[int, dict]:
    body = response.json()
    body.pop("request_id")
    return response.status_code, body


def answer(client, invitation_id, verb: str):
    return client.post(f"{INVITATIONS}/{invitation_id}/{verb}")


# --- Listing -------------------------------------------------------------------------------------


def test_i_see_my_open_invitations_from_every_firm_and_nobody_elses(tenant, other_tenant):
    partner = UserFactory(username="partner")
    MembershipFactory(tenant=tenant, user=partner)  # acting for Acme; Globex's invitation shows too
    UserFactory(username="someone")
    mine = invite(other_tenant, "partner", Role.VIEWER)
    invite(tenant, "someone")  # someone else's
    invite(other_tenant, "partner@lawfirm.test")  # an address: answered by its link only
    closed = invite(TenantFactory(slug="initech", name="Initech"), "partner")
    invitation_decline(invitation_id=closed.pk, user=partner)
    expired = invite(TenantFactory(slug="hooli", name="Hooli"), "partner")
    Invitation.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    inactive = TenantFactory(slug="gone", name="Gone LLP", is_active=False)
    invite(inactive, "partner")

    response = signed_in(partner).get(INVITATIONS)
    assert response.status_code == 200
    [listed] = response.json()
    assert listed == {
        "id": mine.pk,
        "tenant": {"slug": "globex-legal", "name": "Globex Legal"},
        "role": "viewer",
        "status": "pending",
        "invited_by": mine.invited_by.get_username(),
        "created_at": listed["created_at"],
        "expires_at": listed["expires_at"],
    }
    assert signed_in(UserFactory()).get(INVITATIONS).json() == []


# --- Accepting and declining -----------------------------------------------------------------------


def test_accepting_makes_me_a_member_and_keeps_my_active_firm(tenant, other_tenant):
    partner = UserFactory(username="partner")
    MembershipFactory(tenant=tenant, user=partner, role=Role.MEMBER)
    invitation = invite(other_tenant, "partner", Role.ADMIN)
    client = signed_in(partner)
    assert client.get(CURRENT).json()["tenant"]["slug"] == "acme-law"

    response = answer(client, invitation.pk, "accept")
    assert response.status_code == 200
    assert response.json() == {"tenant": {"slug": "globex-legal", "name": "Globex Legal"}, "role": "admin"}
    assert Membership.objects.get(tenant=other_tenant, user=partner).role == Role.ADMIN
    invitation.refresh_from_db()
    assert invitation.status == InvitationStatus.ACCEPTED
    assert client.get(CURRENT).json()["tenant"]["slug"] == "acme-law"  # not switched for me
    assert client.get(INVITATIONS).json() == []
    assert answer(client, invitation.pk, "accept").status_code == 404  # once


def test_a_user_of_no_firm_accepts_their_first_invitation(tenant):
    newcomer = UserFactory(username="newcomer")
    invitation = invite(tenant, "newcomer", Role.VIEWER)
    client = signed_in(newcomer)
    assert client.get(CURRENT).json()["error_type"] == "NoActiveTenant"
    assert [i["id"] for i in client.get(INVITATIONS).json()] == [invitation.pk]
    assert answer(client, invitation.pk, "accept").status_code == 200
    assert client.get(CURRENT).json()["role"] == "viewer"


def test_declining_changes_nothing_but_the_invitation(tenant):
    partner = UserFactory(username="partner")
    invitation = invite(tenant, "partner")
    client = signed_in(partner)
    response = answer(client, invitation.pk, "decline")
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["status"], body["tenant"]["slug"]) == (invitation.pk, "declined", "acme-law")
    assert not is_member(tenant, partner)
    assert answer(client, invitation.pk, "accept").status_code == 404
    assert client.get(INVITATIONS).json() == []


@pytest.mark.parametrize("verb", ["accept", "decline"])
def test_someone_elses_invitation_is_the_same_404_as_a_missing_one(tenant, other_tenant, verb):
    """No oracle: another person's open invitation (in my firm or another), an answered or
    withdrawn one, and an id that does not exist all get the same reply, and nothing changes."""
    me = UserFactory(username="me")
    MembershipFactory(tenant=tenant, user=me, role=Role.ADMIN)  # an admin of the inviting firm, even
    UserFactory(username="colleague"), UserFactory(username="rival")
    same_firm = invite(tenant, "colleague")
    other_firm = invite(other_tenant, "rival", Role.OWNER)
    withdrawn = invite(other_tenant, "colleague")
    invitation_cancel(tenant=other_tenant, invitation_id=withdrawn.pk, cancelled_by=withdrawn.invited_by)
    to_address = invite(tenant, "nobody@lawfirm.test")  # names no account: its link only
    missing = Invitation.objects.order_by("-pk").first().pk + 1000

    client = signed_in(me)
    replies = {
        name: without_request_id(answer(client, invitation_id, verb))
        for name, invitation_id in {
            "same firm": same_firm.pk,
            "other firm": other_firm.pk,
            "withdrawn": withdrawn.pk,
            "to an address": to_address.pk,
            "missing": missing,
        }.items()
    }
    expected = (404, {"error_type": "NotFound", "message": "Invitation not found.", "details": {}})
    assert replies == dict.fromkeys(replies, expected)
    assert client.post(f"{INVITATIONS}/not-a-number/{verb}").status_code == 404
    for invitation in (same_firm, other_firm, to_address):
        invitation.refresh_from_db()
        assert invitation.status == InvitationStatus.PENDING
    assert (
        not is_member(other_tenant, me) and Membership.objects.filter(user__username="colleague").count() == 0
    )


def test_my_own_expired_invitation_says_so(tenant):
    partner = UserFactory(username="partner")
    invitation = invite(tenant, "partner")
    Invitation.objects.filter(pk=invitation.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = answer(signed_in(partner), invitation.pk, "accept")
    assert response.status_code == 404 and "no longer valid" in response.json()["message"]
    assert not is_member(tenant, partner)


# --- Leaving a firm --------------------------------------------------------------------------------


def test_leaving_a_firm_revokes_my_keys_there_and_unsets_it_as_my_active_firm(tenant, other_tenant):
    user = MembershipFactory(tenant=tenant, role=Role.ADMIN).user
    MembershipFactory(tenant=other_tenant, user=user, role=Role.VIEWER)
    key, _ = api_key_create(tenant=tenant, name="mine", role=Role.ADMIN, created_by=user, created_via="test")
    client = signed_in(user)
    assert client.post("/api/v1/tenants/switch", {"tenant": "acme-law"}, format="json").status_code == 200

    response = client.post(f"{MEMBERSHIPS}/acme-law/leave")
    assert response.status_code == 204 and not response.content
    assert [m["tenant"]["slug"] for m in client.get(MEMBERSHIPS).json()] == ["globex-legal"]
    assert client.get(CURRENT).json()["tenant"]["slug"] == "globex-legal"  # my only firm now
    assert ApiKey.objects.get(pk=key.pk).is_revoked
    assert is_member(other_tenant, user)
    assert without_request_id(client.post(f"{MEMBERSHIPS}/acme-law/leave")) == (
        404,
        {"error_type": "NotFound", "message": "Tenant not found.", "details": {}},
    )


def test_i_cannot_leave_a_firm_i_am_not_in_and_the_reply_is_the_missing_ones(tenant, other_tenant):
    user = MembershipFactory(tenant=tenant).user
    client = signed_in(user)
    not_mine = without_request_id(client.post(f"{MEMBERSHIPS}/globex-legal/leave"))
    missing = without_request_id(client.post(f"{MEMBERSHIPS}/no-such-firm/leave"))
    assert not_mine == missing and not_mine[0] == 404
    assert Membership.objects.filter(tenant=other_tenant).count() == 0 and is_member(tenant, user)


def test_the_last_owner_cannot_leave_but_one_of_two_can(tenant):
    owner = MembershipFactory(tenant=tenant, role=Role.OWNER).user
    client = signed_in(owner)
    response = client.post(f"{MEMBERSHIPS}/acme-law/leave")
    assert response.status_code == 409
    body = response.json()
    assert body["error_type"] == "Conflict" and body["details"] == {"membership": "last_owner"}
    assert "last owner" in body["message"] and is_member(tenant, owner)

    MembershipFactory(tenant=tenant, role=Role.OWNER)
    assert client.post(f"{MEMBERSHIPS}/acme-law/leave").status_code == 204
    assert not is_member(tenant, owner)


# --- Credentials ---------------------------------------------------------------------------------


def _person_only_requests(tenant, invitation):
    return [
        ("get", INVITATIONS),
        ("post", f"{INVITATIONS}/{invitation.pk}/accept"),
        ("post", f"{INVITATIONS}/{invitation.pk}/decline"),
        ("post", f"{MEMBERSHIPS}/{tenant.slug}/leave"),
    ]


def test_an_api_key_is_refused_with_403_because_it_is_no_person(tenant, make_key_client):
    invitation = invite(tenant, "partner@lawfirm.test")
    client = make_key_client(tenant, Role.ADMIN)
    for method, url in _person_only_requests(tenant, invitation):
        response = getattr(client, method)(url)
        assert response.status_code == 403, url
        body = response.json()
        assert body["error_type"] == "PermissionDenied" and "not a person" in body["message"], url
    invitation.refresh_from_db()
    assert invitation.status == InvitationStatus.PENDING
    assert Membership.objects.filter(tenant=tenant).count() == 1  # the inviting owner, still there


def test_no_credentials_is_401_and_a_session_needs_its_csrf_token(tenant):
    partner = UserFactory(username="partner")
    invitation = invite(tenant, "partner")
    for method, url in _person_only_requests(tenant, invitation):
        assert getattr(APIClient(), method)(url).status_code == 401, url
    response = answer(signed_in(partner, csrf=True), invitation.pk, "accept")
    assert response.status_code == 403 and "CSRF" in response.json()["message"]
    assert not is_member(tenant, partner)
