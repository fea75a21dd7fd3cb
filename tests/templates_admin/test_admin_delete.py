"""Django admin: built-in templates are never deleted (every tenant without its own copy answers
with them), neither one by one nor by the bulk action; tenants' own templates are, through the
service."""

import pytest
from django.contrib.admin.sites import site
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.contrib.messages.storage.fallback import FallbackStorage
from django.contrib.sessions.backends.db import SessionStore
from django.test import RequestFactory

from templates_admin.models import PromptTemplate

pytestmark = pytest.mark.django_db

BALANCED = "legal_analysis_balanced"
CHANGELIST = "/admin/templates_admin/prompttemplate/"


@pytest.fixture
def superuser():
    return get_user_model().objects.create_superuser("root", "root@example.test", "pw-123456")


@pytest.fixture
def admin_client_(client, superuser):
    client.force_login(superuser)
    return client


@pytest.fixture
def builtin():
    return PromptTemplate.objects.get(template_id=BALANCED, tenant__isnull=True)


def test_a_builtin_cannot_be_deleted_from_its_page(admin_client_, builtin):
    change = admin_client_.get(f"{CHANGELIST}{builtin.pk}/change/").content.decode()
    assert f"{builtin.pk}/delete/" not in change  # no delete link
    assert admin_client_.get(f"{CHANGELIST}{builtin.pk}/delete/").status_code == 403
    assert admin_client_.post(f"{CHANGELIST}{builtin.pk}/delete/", {"post": "yes"}).status_code == 403
    assert PromptTemplate.objects.filter(pk=builtin.pk).exists()


def test_a_tenants_template_is_deleted(admin_client_, tenant, make_template):
    own = make_template(tenant)
    response = admin_client_.post(f"{CHANGELIST}{own.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not PromptTemplate.objects.filter(pk=own.pk).exists()


def test_the_bulk_delete_action_keeps_builtins(admin_client_, tenant, make_template, builtin):
    own = make_template(tenant)
    response = admin_client_.post(
        CHANGELIST, {"action": "delete_selected", "_selected_action": [builtin.pk, own.pk], "post": "yes"}
    )
    assert response.status_code == 403  # a built-in in the selection: nothing is deleted
    assert PromptTemplate.objects.filter(pk__in=[builtin.pk, own.pk]).count() == 2


def test_delete_queryset_skips_builtins_and_says_so(tenant, make_template, builtin, superuser):
    own = make_template(tenant)
    request = RequestFactory().post(CHANGELIST)
    request.user, request.session = superuser, SessionStore()
    request._messages = FallbackStorage(request)
    model_admin = site.get_model_admin(PromptTemplate)
    model_admin.delete_queryset(request, PromptTemplate.objects.filter(pk__in=[builtin.pk, own.pk]))
    assert PromptTemplate.objects.filter(pk=builtin.pk).exists()
    assert not PromptTemplate.objects.filter(pk=own.pk).exists()
    assert [str(m) for m in get_messages(request)] == [
        f"Built-in templates cannot be deleted, so these were kept: {BALANCED}."
    ]
