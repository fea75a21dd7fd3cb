"""The staff UI's pages: login, tenant scoping (another firm's objects are 404), roles, escaping,
CSRF, the document viewer's pages and marked passage, the question history and re-runs."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from rag import selectors
from rag import services as rag_services
from rag.models import AuditLog, AuditStatus, Sensitivity
from templates_admin.builtins import BUILTIN_TEMPLATE_ID_BY_STYLE
from tenants.models import Role
from tests.factories import MembershipFactory, TenantFactory

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert("x")</script>'


def test_every_page_asks_to_log_in_first(case):
    client = Client()
    for url in ["/cases/", f"/cases/{case.pk}/", "/ask/", "/history/", "/documents/1/"]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


def test_logging_in_lands_on_the_cases(tenant):
    user = MembershipFactory(tenant=tenant, role=Role.VIEWER).user
    user.set_password("pw-for-tests")
    user.save()
    client = Client()
    page = client.get("/accounts/login/")
    assert page.status_code == 200 and b'name="password"' in page.content
    wrong = client.post("/accounts/login/", {"username": user.username, "password": "nope"})
    assert b"didn't match" in wrong.content
    response = client.post("/accounts/login/", {"username": user.username, "password": "pw-for-tests"})
    assert response.status_code == 302 and response["Location"] == "/cases/"
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/cases/").status_code == 302


def test_a_user_of_no_firm_is_told_so():
    client = Client()
    client.force_login(MembershipFactory().user.__class__.objects.create_user("loner"))
    response = client.get("/cases/")
    assert response.status_code == 403 and b"not a member of any firm" in response.content


def test_cases_list_only_the_firms_own_and_escape_names(tenant, other_tenant, member_browser):
    rag_services.case_create(tenant=tenant, name=f"Ours {HOSTILE}", client=HOSTILE)
    rag_services.case_create(tenant=other_tenant, name="Theirs secret matter")
    page = member_browser.get("/cases/")
    assert page.status_code == 200
    assert HOSTILE.encode() not in page.content
    assert b"Ours &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page.content
    assert b"Theirs secret matter" not in page.content


def test_a_member_creates_a_case_and_a_viewer_cannot(tenant, member_browser, viewer_browser):
    created = member_browser.post("/cases/", {"name": "Stark v. Wayne", "client": "Stark"})
    assert created.status_code == 302
    case = selectors.case_find_by_name(tenant=tenant, name="Stark v. Wayne")
    assert created["Location"] == f"/cases/{case.pk}/"
    duplicate = member_browser.post("/cases/", {"name": "Stark v. Wayne"})
    assert duplicate.status_code == 400 and b'role="alert"' in duplicate.content
    refused = viewer_browser.post("/cases/", {"name": "Viewer case"})
    assert refused.status_code == 400 and b"Only members can create cases." in refused.content
    assert b"New case" not in viewer_browser.get("/cases/").content  # no form for viewers


def test_forms_need_the_csrf_token(tenant):
    client = Client(enforce_csrf_checks=True)
    client.force_login(MembershipFactory(tenant=tenant, role=Role.MEMBER).user)
    assert client.post("/cases/", {"name": "No token"}).status_code == 403
    assert client.post("/tenant/switch", {"tenant": tenant.slug}).status_code == 403


def test_another_firms_case_and_document_are_not_found(other_case, upload, member_browser):
    theirs = upload(other_case, "contract.txt").document
    for url in [
        f"/cases/{other_case.pk}/",
        f"/documents/{theirs.pk}/",
        "/cases/999999/",
        "/documents/999999/",
    ]:
        response = member_browser.get(url)
        assert response.status_code == 404, url
        assert b"belongs to another firm" in response.content
    assert theirs.title.encode() not in member_browser.get(f"/documents/{theirs.pk}/").content


def test_the_case_page_lists_documents_with_their_state_and_member_actions(
    case, upload, member_browser, viewer_browser
):
    document = upload(case, "contract.pdf", title=f"MSA {HOSTILE}").document
    document.refresh_from_db()
    page = member_browser.get(f"/cases/{case.pk}/")
    assert page.status_code == 200
    assert HOSTILE.encode() not in page.content and b"MSA &lt;script&gt;" in page.content
    assert b"Ready" in page.content and f"/documents/{document.pk}/".encode() in page.content
    assert b'data-action="reindex"' in page.content and b'id="upload"' in page.content
    as_viewer = viewer_browser.get(f"/cases/{case.pk}/")
    assert b'data-action="delete"' not in as_viewer.content and b'id="upload"' not in as_viewer.content


def test_the_viewer_shows_pages_and_marks_the_cited_passage(case, upload, member_browser):
    document = upload(case, "contract.pdf").document
    document.refresh_from_db()
    assert document.page_count >= 2 and len(document.page_starts) == document.page_count
    chunk = document.chunks.order_by("-page_start").first()
    page = member_browser.get(f"/documents/{document.pk}/?start={chunk.char_start}&end={chunk.char_end}")
    html = page.content.decode()
    assert html.count('class="page-marker"') == document.page_count
    marked = html.split('<mark id="passage" tabindex="-1">', 1)[1].split("</mark>", 1)[0]
    assert marked and marked in chunk.text.replace("&", "&amp;").replace("'", "&#x27;").replace('"', "&quot;")
    # The mark sits in the section of the chunk's page.
    assert html.rindex(f'id="page-{chunk.page_start}"') < html.index('<mark id="passage"')
    out_of_range = member_browser.get(f"/documents/{document.pk}/?start=5&end=999999999")
    assert b"<mark" not in out_of_range.content


def test_the_viewer_escapes_document_text(case, upload, member_browser):
    document = upload(case, "note.txt", content=f"Clause 1. {HOSTILE} shall apply.".encode()).document
    page = member_browser.get(f"/documents/{document.pk}/")
    assert HOSTILE.encode() not in page.content and b"&lt;script&gt;" in page.content


def test_confidential_text_is_only_for_admins_and_named_readers(tenant, case, upload, login):
    document = upload(case, "contract.txt", sensitivity=Sensitivity.CONFIDENTIAL).document
    document.refresh_from_db()
    secret = document.text[:40].encode()
    viewer, admin, reader = login(tenant, Role.VIEWER), login(tenant, Role.ADMIN), login(tenant, Role.MEMBER)
    document.confidential_readers.add(reader.user)
    hidden = viewer.get(f"/documents/{document.pk}/")
    assert hidden.status_code == 200 and secret not in hidden.content and b"confidential" in hidden.content
    assert secret in admin.get(f"/documents/{document.pk}/").content
    assert secret in reader.get(f"/documents/{document.pk}/").content


def _asked(tenant, user, question: str, **options) -> AuditLog:
    return AuditLog.objects.create(
        tenant=tenant,
        request_id=f"req_{abs(hash(question)) % 10**8}",
        user=user,
        query=question,
        status=AuditStatus.ANSWERED,
        latency_ms=10,
        options=options,
    )


def test_history_shows_only_the_users_own_questions(tenant, login):
    me, colleague = login(tenant, Role.VIEWER), login(tenant, Role.VIEWER)
    _asked(tenant, me.user, f"Mine {HOSTILE}")
    _asked(tenant, colleague.user, "A colleague's question")
    page = me.get("/history/")
    assert b"Mine &lt;script&gt;" in page.content and HOSTILE.encode() not in page.content
    assert b"colleague" not in page.content
    assert b"?rerun=req_" in page.content


def test_a_rerun_fills_the_ask_page_with_the_question_and_its_options(tenant, login):
    me, colleague = login(tenant, Role.VIEWER), login(tenant, Role.VIEWER)
    row = _asked(tenant, me.user, f"Who pays? {HOSTILE}", top_k=3, filters={"doc_types": ["contract"]})
    page = me.get(f"/ask/?rerun={row.request_id}")
    data = page.content.decode().split('<script id="rerun-data" type="application/json">', 1)[1]
    assert json.loads(data.split("</script>", 1)[0]) == {
        "query": f"Who pays? {HOSTILE}",
        "options": {"top_k": 3, "filters": {"doc_types": ["contract"]}},
    }
    assert "<script>alert" not in page.content.decode().split("rerun-data", 1)[1]  # JSON is escaped
    assert colleague.get(f"/ask/?rerun={row.request_id}").status_code == 404


def test_the_ask_page_offers_the_firms_templates_and_cases(
    tenant, other_tenant, case, other_case, member_browser
):
    page = member_browser.get("/ask/")
    assert page.status_code == 200
    assert case.name.encode() in page.content and other_case.name.encode() not in page.content
    for template_id in BUILTIN_TEMPLATE_ID_BY_STYLE.values():
        assert f'<option value="{template_id}">'.encode() in page.content


def test_the_tenant_switcher_changes_firm_only_among_the_users_own(tenant, other_tenant):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    MembershipFactory(tenant=other_tenant, user=user, role=Role.VIEWER)
    stranger = TenantFactory(slug="stranger-llp", name="Stranger LLP")
    rag_services.case_create(tenant=other_tenant, name="Globex only case")
    client = Client()
    client.force_login(user)
    assert b"Globex only case" not in client.get("/cases/").content
    switched = client.post("/tenant/switch", {"tenant": other_tenant.slug, "next": "/history/"})
    assert switched.status_code == 302 and switched["Location"] == "/history/"
    assert b"Globex only case" in client.get("/cases/").content
    assert client.post("/tenant/switch", {"tenant": stranger.slug}).status_code == 404
    offsite = client.post("/tenant/switch", {"tenant": tenant.slug, "next": "https://evil.example/"})
    assert offsite["Location"] == "/cases/"


def test_pages_carry_a_strict_content_security_policy(member_browser):
    policy = member_browser.get("/cases/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    admin_policy = Client().get("/admin/login/")["Content-Security-Policy"]
    assert "style-src 'self' 'unsafe-inline'" in admin_policy and "script-src 'self';" in admin_policy
    assert "Content-Security-Policy" not in Client().get("/api/v1/health")  # JSON, not a page


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("   ", b"Name: This field cannot be blank."),
        ("x" * 300, b"Name: Ensure this value has at most 200 characters (it has 300)."),
    ],
)
def test_a_blank_or_too_long_case_name_is_refused_in_plain_words(tenant, member_browser, name, message):
    response = member_browser.post("/cases/", {"name": name, "client": "Acme"})
    assert response.status_code == 400 and message in response.content
    assert b'role="alert"' in response.content
    assert not selectors.case_search(tenant=tenant, q="").exists()


def test_a_nul_character_in_an_input_finds_nothing_instead_of_failing(tenant, other_tenant, case, login):
    user_browser = login(tenant, Role.MEMBER)
    MembershipFactory(tenant=other_tenant, user=user_browser.user, role=Role.VIEWER)
    user_browser.post("/tenant/switch", {"tenant": tenant.slug})  # of two firms, the user chooses
    row = _asked(tenant, user_browser.user, "Who pays for shipping?")
    cases = user_browser.get("/cases/", {"q": "Acme\x00"})
    assert cases.status_code == 200 and case.name.encode() not in cases.content
    history = user_browser.get("/history/", {"q": "\x00"})
    assert history.status_code == 200 and b"Who pays for shipping?" not in history.content
    assert user_browser.get("/ask/", {"rerun": f"{row.request_id}\x00"}).status_code == 404
    switched = user_browser.post("/tenant/switch", {"tenant": f"{other_tenant.slug}\x00"})
    assert switched.status_code == 404
    odd_next = user_browser.post("/tenant/switch", {"tenant": other_tenant.slug, "next": "/history/\x00"})
    assert odd_next.status_code == 302 and odd_next["Location"] == "/cases/"


def test_a_passage_across_pages_is_marked_on_each_but_anchored_once(case, upload, member_browser):
    document = upload(case, "contract.pdf").document
    document.refresh_from_db()
    boundary = document.page_starts[1]
    html = member_browser.get(f"/documents/{document.pk}/?start={boundary - 5}&end={boundary + 5}").content
    html = html.decode()
    assert html.count("<mark") == 2
    assert html.count('id="passage"') == 1
    assert html.index('id="passage"') < html.index('id="page-2"')  # on the page where it starts


def test_the_question_box_counts_against_the_apis_limit(member_browser, settings):
    settings.RAG_MAX_QUERY_LENGTH = 1234
    page = member_browser.get("/ask/").content.decode()
    assert 'data-max-length="1234"' in page
    assert "maxlength" not in page.split('id="question"')[1].split(">")[0]  # never cut silently


def test_switching_firm_on_an_object_page_lands_on_the_cases_list(tenant, other_tenant, case, upload):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    MembershipFactory(tenant=other_tenant, user=user, role=Role.VIEWER)
    document = upload(case, "contract.txt").document
    client = Client()
    client.force_login(user)
    for page, lands in [
        (f"/cases/{case.pk}/", "/cases/"),
        (f"/documents/{document.pk}/?start=1&end=9", "/cases/"),
        ("/ask/?rerun=req_123", "/ask/"),
        ("/ask/?case=3", "/ask/?case=3"),
        ("/history/?q=fees", "/history/?q=fees"),
        ("/cases/?q=acme", "/cases/?q=acme"),
    ]:
        switched = client.post("/tenant/switch", {"tenant": other_tenant.slug, "next": page})
        assert switched.status_code == 302 and switched["Location"] == lands, page
        assert client.get(lands).status_code == 200, page
