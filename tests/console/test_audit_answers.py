"""What the console's audit log and exports show of an answer (#36, item 12): the detail page has the
answer and its citations (titles, pages, snippets) as the admin may read them now, the list the mode
and the case of each question, the exports list the questions exported. Walled-off cases and
confidential documents the reader may not read never show through."""

from __future__ import annotations

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.test import RequestFactory

from console.site import site
from rag.models import AnswerExport, AuditLog, QueryJob, Sensitivity
from rag.queries.withheld import WITHHELD_NOTICE
from rag.services import case_create, case_wall_set
from tenants.models import Role
from tests.factories import MembershipFactory

from .conftest import make_document

pytestmark = pytest.mark.django_db

AUDIT = "/manage/rag/auditlog/"
EXPORTS = "/manage/rag/answerexport/"
ANSWER = "The agreement is governed by the laws of the People's Republic of China [1]."
SNIPPET = "This Agreement shall be governed by the laws of the PRC."


def _row(tenant, request_id: str, document=None, *, options=None, flags=None, query="Which law governs?"):
    """An answered audit row whose answer cites `document` (if any) on pages 3-4."""
    citations = []
    if document is not None:
        citations = [
            {
                "citation_id": "1",
                "document_id": document.pk,
                "title": document.title,
                "snippet": SNIPPET,
                "page": 3,
                "page_end": 4,
            }
        ]
    used = [document.pk] if document is not None else []
    return AuditLog.objects.create(
        tenant=tenant,
        request_id=request_id,
        query=query,
        status="answered",
        latency_ms=10.0,
        documents_used=used,
        documents_retrieved=used,
        options=options or {},
        flags=flags or {},
        result={"answer": ANSWER, "message": None, "citations": citations},
    )


def test_the_detail_shows_the_answer_and_its_citations(console, tenant):
    document = make_document(tenant, "distributor")
    row = _row(tenant, "req-law", document)
    page = console.get(f"{AUDIT}{row.pk}/change/").content.decode()
    assert "People&#x27;s Republic of China" in page
    assert "Doc distributor" in page and "pp. 3-4" in page and "governed by the laws of the PRC" in page


def test_an_answer_drawing_on_a_walled_case_is_not_found(console, tenant):
    """The admin is not on the wall: the row is "not found", even when only the stored answer's
    citations name the document (the staff UI's and the API's rule, rag.queries.withheld)."""
    document = make_document(tenant, "walled")
    case_wall_set(tenant=tenant, case_id=document.case_id, walled=True, members=[])
    in_columns = _row(tenant, "req-cited", document)
    in_citations_only = AuditLog.objects.create(
        tenant=tenant,
        request_id="req-cited-only",
        query="Which law governs?",
        status="answered",
        latency_ms=10.0,
        result=in_columns.result,  # the columns name nothing; the answer's citations do
    )
    for row in (in_columns, in_citations_only):
        response = console.get(f"{AUDIT}{row.pk}/change/")
        assert response.status_code == 404
        assert "Doc walled" not in response.content.decode() and SNIPPET not in response.content.decode()


def _console_row(user, tenant, row):
    """The audit row as the console's detail page reads it for `user` (their role in `tenant`)."""
    request = RequestFactory().get(f"{AUDIT}{row.pk}/change/")
    request.user, request.session = user, SessionStore()
    model_admin = site._registry[AuditLog]
    shown = model_admin.get_object(request, str(row.pk))
    return str(model_admin.answer(shown)) + str(model_admin.citations(shown))


def test_a_confidential_document_shows_only_to_those_who_may_read_it(tenant):
    """Admins and owners read every confidential document (rag.access.may_read), so the console's
    admins see its title and snippet; the same page code withholds them from a reader who may not
    (the staff UI's and the API's rule, rag.queries.withheld.checked_row)."""
    document = make_document(tenant, "privileged")
    document.sensitivity = Sensitivity.CONFIDENTIAL
    document.save(update_fields=["sensitivity"])
    row = _row(tenant, "req-privileged", document)

    admin_user = MembershipFactory(tenant=tenant, role=Role.ADMIN).user
    shown = _console_row(admin_user, tenant, row)
    assert "Doc privileged" in shown and "governed by the laws of the PRC" in shown

    member = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    shown = _console_row(member, tenant, row)
    assert "Doc privileged" not in shown and "PRC" not in shown
    assert WITHHELD_NOTICE in shown


def test_the_list_shows_each_questions_mode_and_case(console, tenant):
    case = case_create(tenant=tenant, name="Erchonia distribution")
    _row(tenant, "req-sync", options={"filters": {"case_ids": [case.pk]}}, query="sync question")
    _row(tenant, "req-agentic", options={"agentic": True}, query="agentic question")
    _row(tenant, "req-async", query="async question")
    QueryJob.objects.create(tenant=tenant, request_id="req-async", mode="async", question="q", role="member")
    _row(tenant, "req-dry", options={"dry_run": True}, query="dry question")
    _row(tenant, "req-table", flags={"origin": "review_table"}, query="table question")

    response = console.get(AUDIT)
    admin = response.context["cl"].model_admin
    shown = {row.query: (admin.mode(row), admin.case(row)) for row in response.context["cl"].result_list}
    assert shown == {
        "sync question": ("sync", "Erchonia distribution"),
        "agentic question": ("agentic", "-"),
        "async question": ("async", "-"),
        "dry question": ("dry run", "-"),
        "table question": ("review table", "-"),
    }
    page = response.content.decode()
    assert ">Mode<" in page and ">Case<" in page and "Erchonia distribution" in page


def test_the_exports_list_shows_the_questions_exported(console, tenant):
    document = make_document(tenant, "walled")
    case_wall_set(tenant=tenant, case_id=document.case_id, walled=True, members=[])
    _row(tenant, "req-open", query="What law governs the distributor agreement?")
    _row(tenant, "req-walled", document, query="What does the walled agreement say?")
    AnswerExport.objects.create(tenant=tenant, format="docx", request_ids=["req-open"])
    mixed = AnswerExport.objects.create(tenant=tenant, format="text", request_ids=["req-open", "req-walled"])

    page = console.get(EXPORTS).content.decode()
    assert "What law governs the distributor agreement?" in page
    assert "walled agreement" not in page  # a question about a case walled off from the admin
    # An export holding an answer about the walled case is the matter's: not listed, not opened.
    assert f"/manage/rag/answerexport/{mixed.pk}/" not in page
    assert console.get(f"{EXPORTS}{mixed.pk}/change/").status_code in (302, 404)
