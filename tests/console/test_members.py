"""Members and invitations on /manage/ (issues #21, #33): invite by username or e-mail (pending
until accepted; the same reply whether or not an account exists), resend or cancel an invitation,
change a role, remove; the rules of tenants.services shown as form errors and admin messages."""

from __future__ import annotations

import re
from datetime import timedelta
from smtplib import SMTPException

import pytest
from django.contrib.admin.templatetags.admin_list import result_headers
from django.contrib.messages import get_messages
from django.core import mail
from django.utils import timezone

from tenants.models import Invitation, Membership, Role
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db
MEMBERS = "/manage/tenants/membership/"
INVITATIONS = "/manage/tenants/invitation/"
INVITE = INVITATIONS + "add/"


def _messages(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


@pytest.fixture
def firm_admin_only(client, tenant):
    """A test client logged in as an admin (not an owner) of `tenant`."""
    admin_user = MembershipFactory(tenant=tenant, role=Role.ADMIN).user
    client.force_login(admin_user)
    client.admin_user = admin_user
    return client


def test_list_shows_the_firms_members_with_search_and_role_filter(console, tenant, other_tenant):
    jane = UserFactory(username="jdoe", first_name="Jane", last_name="Doe", email="jane@acme.test")
    MembershipFactory(tenant=tenant, user=jane, role=Role.VIEWER)
    MembershipFactory(tenant=other_tenant, user=UserFactory(username="globex-only"))
    page = console.get(MEMBERS)
    text = page.content.decode()
    assert "Jane Doe" in text and "jane@acme.test" in text and "globex-only" not in text
    headers = [str(header["text"]).lower() for header in result_headers(page.context["cl"])]
    assert headers[1:] == ["username", "name", "e-mail", "role", "joined", "last login", "status"]
    assert [m.user for m in console.get(MEMBERS, {"q": "doe"}).context["cl"].result_list] == [jane]
    assert [m.user for m in console.get(MEMBERS, {"role": "viewer"}).context["cl"].result_list] == [jane]


def test_invite_an_existing_user_adds_nobody_and_shows_only_what_was_typed(console, tenant, other_tenant):
    user = UserFactory(username="partner", first_name="Pat", email="pat@victim.test")
    MembershipFactory(tenant=other_tenant, user=user)
    user.last_login = timezone.now() - timedelta(days=3)
    user.save()
    assert "Invite a member" in console.get(MEMBERS).content.decode()
    assert "<h1>Invite a member</h1>" in console.get(INVITE).content.decode()
    response = console.post(INVITE, {"identifier": "partner", "role": "admin"})
    assert response.status_code == 302
    assert "The invitation for partner is pending until they accept it." in _messages(response)
    assert not Membership.objects.filter(tenant=tenant, user=user).exists()
    for page in (console.get(MEMBERS), console.get(INVITATIONS)):
        text = page.content.decode()
        assert "pat@victim.test" not in text and "Pat" not in text and "Globex" not in text
    assert "partner" in console.get(INVITATIONS).content.decode()
    invitation = Invitation.objects.get(tenant=tenant)
    detail = console.get(f"{INVITATIONS}{invitation.pk}/change/").content.decode()
    assert "partner" in detail and "pat@victim.test" not in detail and "Pat" not in detail


def _reply(console, identifier: str) -> tuple:
    """What the inviting admin sees: status, where it leads, the messages (the identifier blanked)."""
    response = console.post(INVITE, {"identifier": identifier, "role": "member"}, follow=True)
    texts = [str(text).replace(identifier, "<identifier>") for text in response.context["messages"]]
    return response.status_code, response.redirect_chain, texts


@pytest.mark.parametrize(
    ("existing", "unknown"),
    [("partner", "ghost"), ("partner@lawfirm.test", "nobody@lawfirm.test"), ("sleeper", "nobody")],
)
def test_the_reply_is_the_same_whether_or_not_the_account_exists(console, tenant, existing, unknown):
    UserFactory(username="partner", email="partner@lawfirm.test")
    UserFactory(username="sleeper", is_active=False)
    assert _reply(console, existing) == _reply(console, unknown)
    assert Membership.objects.filter(tenant=tenant).count() == 1


def test_invite_by_a_new_email_mails_a_link_on_the_site_url(console, client, tenant):
    response = console.post(INVITE, {"identifier": "Newcomer@Lawfirm.test", "role": "member"})
    assert response.status_code == 302
    assert any("The invitation for newcomer@lawfirm.test is pending" in text for text in _messages(response))
    [message] = mail.outbox
    link = re.search(r"https://lexrag\.example\.test(/accounts/invitations/\S+/)", message.body).group(1)
    console.logout()
    client.post(link, {"new_password1": "Tall-Cedar-2041", "new_password2": "Tall-Cedar-2041"})
    client.logout()
    assert client.login(username="newcomer@lawfirm.test", password="Tall-Cedar-2041")
    assert Membership.objects.get(tenant=tenant, user__username="newcomer@lawfirm.test").role == Role.MEMBER


def test_without_a_mail_server_the_reply_says_where_the_email_went(console, settings):
    """The default EMAIL_URL (consolemail://) prints e-mail on the server's output: the admin is
    told so, and how to mail invitations, never that an e-mail "was sent" (#36)."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    texts = _messages(console.post(INVITE, {"identifier": "new@lawfirm.test", "role": "member"}))
    assert not any("was sent" in text for text in texts)
    [where] = [text for text in texts if "delivers no e-mail" in text]
    assert "printed on the server's output" in where and "EMAIL_URL" in where and "smtp" in where
    # Resending says it again: the fresh link went to the same place.
    invitation = Invitation.objects.get(identifier="new@lawfirm.test")
    action = {"action": "resend", "_selected_action": [invitation.pk]}
    assert any("delivers no e-mail" in text for text in _messages(console.post(INVITATIONS, action)))


def test_with_a_mail_server_the_reply_says_the_email_was_sent(console, settings, monkeypatch):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    sent = []
    monkeypatch.setattr("tenants.invitations.send_mail", lambda *args, **kwargs: sent.append(args))
    texts = _messages(console.post(INVITE, {"identifier": "new@lawfirm.test", "role": "member"}))
    assert (
        "An invitation e-mail was sent to new@lawfirm.test. It is pending until accepted with its link."
        in texts
    )
    assert not any("delivers no e-mail" in text for text in texts) and len(sent) == 1


def test_a_malformed_address_is_a_form_error_and_keeps_nothing(console, tenant):
    response = console.post(INVITE, {"identifier": "not@an@address", "role": "member"})
    assert response.status_code == 200 and "not a valid e-mail" in response.content.decode()
    assert not Invitation.objects.exists() and mail.outbox == []


def test_inviting_a_member_names_their_role(console, tenant):
    member = MembershipFactory(tenant=tenant, role=Role.VIEWER).user
    response = console.post(INVITE, {"identifier": member.username, "role": "admin"})
    assert f"{member.username} is already a member of Acme Law LLP, as viewer." in response.content.decode()


def test_a_mail_failure_is_an_error_message_and_keeps_the_input(console, tenant, monkeypatch):
    def refuse(*args, **kwargs):
        raise SMTPException("relay refused")

    monkeypatch.setattr("tenants.invitations.send_mail", refuse)
    response = console.post(INVITE, {"identifier": "late@lawfirm.test", "role": "viewer"})
    assert response.status_code == 302 and "identifier=late%40lawfirm.test&role=viewer" in response.url
    assert any("could not be sent" in text for text in _messages(response))
    assert not Invitation.objects.exists()
    form = console.get(response.url).context["adminform"].form
    assert form.initial["identifier"] == "late@lawfirm.test" and form.initial["role"] == "viewer"


def test_an_admin_is_not_offered_the_owner_role(firm_admin_only, tenant):
    client = firm_admin_only
    add_form = client.get(INVITE).context["adminform"].form
    assert "owner" not in dict(add_form.fields["role"].choices)
    client.post(INVITE, {"identifier": "partner", "role": "owner"})
    assert not Invitation.objects.exists()
    member = MembershipFactory(tenant=tenant, role=Role.MEMBER)
    response = client.post(f"{MEMBERS}{member.pk}/change/", {"role": "owner"})
    assert response.status_code == 200
    member.refresh_from_db()
    assert member.role == Role.MEMBER


def test_change_view_changes_the_role_only(console, tenant):
    member = MembershipFactory(tenant=tenant, role=Role.VIEWER)
    page = console.get(f"{MEMBERS}{member.pk}/change/")
    assert list(page.context["adminform"].form.fields) == ["role"]
    assert member.user.email in page.content.decode() and "+00:00" not in page.content.decode()
    assert console.post(f"{MEMBERS}{member.pk}/change/", {"role": "admin", "user": 999}).status_code == 302
    member.refresh_from_db()
    assert (member.role, member.tenant) == (Role.ADMIN, tenant)


def test_the_last_owner_can_be_neither_demoted_nor_removed(console, tenant, firm_admin):
    own = Membership.objects.get(tenant=tenant, user=firm_admin)
    response = console.post(f"{MEMBERS}{own.pk}/change/", {"role": "admin"})
    assert response.status_code == 200 and "last owner of Acme Law LLP" in response.content.decode()
    response = console.post(f"{MEMBERS}{own.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302 and response.url.endswith(f"{own.pk}/change/")
    assert any(text.startswith("Not removed:") and "last owner" in text for text in _messages(response))
    own.refresh_from_db()
    assert own.role == Role.OWNER


def test_owner_removes_a_member(console, tenant):
    member = MembershipFactory(tenant=tenant, role=Role.MEMBER)
    assert console.get(f"{MEMBERS}{member.pk}/delete/").status_code == 200
    assert console.post(f"{MEMBERS}{member.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not Membership.objects.filter(pk=member.pk).exists()


def test_an_admin_sees_an_owner_read_only_with_the_reason(firm_admin_only, tenant, firm_admin):
    client = firm_admin_only
    owner = Membership.objects.get(tenant=tenant, user=firm_admin)
    page = client.get(f"{MEMBERS}{owner.pk}/change/")
    assert page.status_code == 200 and "Only an owner can change or remove an owner" in page.content.decode()
    assert client.post(f"{MEMBERS}{owner.pk}/change/", {"role": "viewer"}).status_code == 403
    response = client.post(f"{MEMBERS}{owner.pk}/delete/", {"post": "yes"})
    assert any("Only an owner can change or remove an owner" in text for text in _messages(response))
    own = Membership.objects.get(tenant=tenant, user=client.admin_user)
    response = client.post(f"{MEMBERS}{own.pk}/delete/", {"post": "yes"})
    assert any("remove yourself" in text for text in _messages(response))
    assert Membership.objects.filter(pk__in=[owner.pk, own.pk]).count() == 2


def test_bulk_remove_confirms_then_keeps_the_refused_ones(console, tenant, firm_admin):
    member = MembershipFactory(tenant=tenant, role=Role.VIEWER)
    own = Membership.objects.get(tenant=tenant, user=firm_admin)
    selected = {"action": "delete_selected", "_selected_action": [member.pk, own.pk], "index": 0}
    confirmation = console.post(MEMBERS, selected)
    assert confirmation.status_code == 200 and "Are you sure" in confirmation.content.decode()
    response = console.post(MEMBERS, {**selected, "post": "yes"})
    texts = _messages(response)
    assert f"Removed from the firm: {member.user.username}." in texts
    assert any(firm_admin.username in text and "last owner" in text for text in texts)
    assert list(Membership.objects.filter(tenant=tenant)) == [own]


def test_resend_and_cancel_pending_invitations(console, client, tenant):
    console.post(INVITE, {"identifier": "pending@lawfirm.test", "role": "member"})
    console.post(INVITE, {"identifier": "other@lawfirm.test", "role": "member"})
    pending, other = Invitation.objects.order_by("identifier").reverse()
    assert "pending" in console.get(INVITATIONS).content.decode()
    response = console.post(INVITATIONS, {"action": "resend", "_selected_action": [pending.pk], "index": 0})
    assert "Invitations renewed for: pending@lawfirm.test." in _messages(response)
    assert [message.to for message in mail.outbox] == [
        ["pending@lawfirm.test"],
        ["other@lawfirm.test"],
        ["pending@lawfirm.test"],
    ]
    console.post(INVITATIONS, {"action": "cancel", "_selected_action": [other.pk], "index": 0})
    other.refresh_from_db()
    assert other.status == "cancelled"
    link = re.search(r"(/accounts/invitations/\S+/)", mail.outbox[1].body).group(1)
    assert client.get(link).status_code == 404


def test_another_firms_membership_is_a_404_everywhere(console, other_tenant):
    foreign = MembershipFactory(tenant=other_tenant, role=Role.OWNER)
    for suffix in ("change/", "delete/", "history/"):
        assert console.get(f"{MEMBERS}{foreign.pk}/{suffix}").status_code == 404, suffix
        assert (
            console.post(f"{MEMBERS}{foreign.pk}/{suffix}", {"post": "yes", "role": "viewer"}).status_code
            == 404
        )
    for action in ("delete_selected",):
        console.post(MEMBERS, {"action": action, "_selected_action": [foreign.pk], "index": 0, "post": "yes"})
    foreign.refresh_from_db()
    assert foreign.role == Role.OWNER
