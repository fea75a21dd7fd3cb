"""Ethical-wall sweep: inside one firm, a case behind a wall does not exist for anyone not on it.

Firm "charlie" has two cases and a document in each, a question with its conversation and an async
job, all made through the API before the first case and the second's twin are walled off with one
member ("the insider") on the wall. Then every operation of the OpenAPI schema that takes a case,
document, job, question or conversation id is called by everyone else in the firm (its viewer,
member and admin API keys, a member and an admin logged in) with the walled ids, and with ids no
firm has: the answers must be the same (404), nothing of the walled matter may show in any body,
and the walled rows must be unchanged. The insider, and the open case's ids, are the controls.
The staff UI pages, the query endpoint's scope and the console get the same treatment.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import pytest
from django.test import Client
from rest_framework.test import APIClient

from rag import services as case_services
from rag.models import Case, Document
from rag.review.tables.models import ReviewCell
from tenants.models import Role
from tests.factories import MembershipFactory

from .conftest import (
    QUESTION,
    TenantData,
    _delete_tenant,
    _make_tenant,
    _populate,
    body_text,
    foreign_ids,
    upload_ready,
)
from .test_tenant_isolation import OPERATIONS, PATH_PARAMS, PROBES, _call, _normalized, _path_params

WALLED_PARAMS = ("case_id", "document_id", "job_id", "request_id", "conversation_id", "table_id", "cell_id")
OPEN_TEXT = (
    "CONSULTING AGREEMENT between Acme Robotics Corp and Initech LLC.\n\n"
    "1. Services. Initech shall advise on logistics.\n\n"
    "2. Governing Law. This Agreement shall be governed by the laws of the State of New York."
)


@dataclass
class Walled:
    """The walled matter of firm charlie, the people around it and the open controls."""

    firm: TenantData  # its ids (case, only case, document, request, job, conversation) are walled
    insider: object
    outsider_member: object
    outsider_admin: object
    open_case_id: int
    open_document_id: int
    open_request_id: str
    open_job_id: str
    open_conversation_id: str
    open_table_id: int
    open_cell_id: int

    def secrets(self) -> list[str]:
        firm = self.firm
        return [firm.marker, firm.only_case_name, firm.document_title, firm.request_id, firm.job_id]

    def ids(self) -> dict[str, set]:
        """The walled objects' ids by kind (as `foreign_ids` reads them)."""
        firm = self.firm
        return {"document": {firm.document_id}, "case": {firm.case_id, firm.only_case_id}, "api_key": set()}

    def callers(self) -> dict[str, object]:
        """Everyone in the firm who is not on the wall, as an API client."""
        callers = {f"{role} key": self.firm.client(role) for role in (Role.VIEWER, Role.MEMBER, Role.ADMIN)}
        for name, user in (("member", self.outsider_member), ("admin", self.outsider_admin)):
            client = APIClient()
            client.force_login(user)
            callers[f"{name} logged in"] = client
        return callers

    def insider_client(self) -> APIClient:
        client = APIClient()
        client.force_login(self.insider)
        return client


@pytest.fixture(scope="module")
def walled(world, django_db_blocker) -> Walled:
    suffix = uuid.uuid4().hex[:6]
    with django_db_blocker.unblock():
        firm = _make_tenant("charlie", suffix)
        _populate(firm, suffix)
        tenant = firm.tenant
        insider, outsider_member, outsider_admin = (
            MembershipFactory(tenant=tenant, role=role, user__username=f"{name}-{suffix}").user
            for name, role in (("insider", Role.MEMBER), ("outsider", Role.MEMBER), ("outadmin", Role.ADMIN))
        )
        member = firm.client(Role.MEMBER)
        response = member.post("/api/v1/rag/cases", {"name": f"Open matter {suffix}"}, format="json")
        assert response.status_code == 201, response.content
        open_case_id = response.json()["id"]
        open_document = upload_ready(member, open_case_id, "consulting.txt", OPEN_TEXT.encode())
        response = member.post(
            f"/api/v1/rag/cases/{open_case_id}/review-tables", {"columns": ["governing_law"]}, format="json"
        )
        assert response.status_code == 202, response.content
        open_table_id = response.json()["id"]
        Case.objects.filter(pk=firm.only_case_id).update(
            client=f"Client of {firm.marker}", description=f"What {firm.marker} is about"
        )
        for case_id in (firm.case_id, firm.only_case_id):
            case_services.case_wall_set(tenant=tenant, case_id=case_id, walled=True, members=[insider])
        # The controls: asked after the wall went up, about the open matter only.
        open_conversation = f"conv_open_{suffix}"
        ask = {"query": "What law governs the consulting agreement?", "use_cache": False}
        response = member.post(
            "/api/v1/rag/query",
            {**ask, "conversation_id": open_conversation, "filters": {"case_ids": [open_case_id]}},
            format="json",
        )
        assert response.status_code == 200, response.content
        open_request_id = response.json()["request_id"]
        response = member.post(
            "/api/v1/rag/query",
            {**ask, "mode": "async", "filters": {"case_ids": [open_case_id]}},
            format="json",
        )
        assert response.status_code in (200, 202), response.content
        data = Walled(
            firm=firm,
            insider=insider,
            outsider_member=outsider_member,
            outsider_admin=outsider_admin,
            open_case_id=open_case_id,
            open_document_id=open_document.pk,
            open_request_id=open_request_id,
            open_job_id=response.json()["job_id"],
            open_conversation_id=open_conversation,
            open_table_id=open_table_id,
            open_cell_id=ReviewCell.objects.filter(table_id=open_table_id)
            .values_list("pk", flat=True)
            .first(),
        )
    yield data
    with django_db_blocker.unblock():
        _delete_tenant(firm.tenant)


WALLED_VALUE = {
    "case_id": lambda w: w.firm.case_id,
    "document_id": lambda w: w.firm.document_id,
    "job_id": lambda w: w.firm.job_id,
    "request_id": lambda w: w.firm.request_id,
    "conversation_id": lambda w: w.firm.extra["conversation_id"],
    "table_id": lambda w: w.firm.extra["table_id"],
    "cell_id": lambda w: w.firm.extra["cell_id"],
}
OPEN_VALUE = {
    "case_id": lambda w: w.open_case_id,
    "document_id": lambda w: w.open_document_id,
    "job_id": lambda w: w.open_job_id,
    "request_id": lambda w: w.open_request_id,
    "conversation_id": lambda w: w.open_conversation_id,
    "table_id": lambda w: w.open_table_id,
    "cell_id": lambda w: w.open_cell_id,
}
WALLED_OPERATIONS = [
    (method, path)
    for method, path in OPERATIONS
    if len(_path_params(path)) == 1 and _path_params(path)[0] in WALLED_PARAMS
]


def _assert_nothing_walled(response, walled: Walled, where: str) -> None:
    assert response.status_code < 500, f"{where}: {response.status_code} {body_text(response)[:500]}"
    text = body_text(response)
    shown = [secret for secret in walled.secrets() if secret and secret.casefold() in text.casefold()]
    assert not shown, f"{where} shows the walled matter's {shown}: {text[:800]}"
    if "json" in response.get("Content-Type", ""):
        ids = foreign_ids(json.loads(text), walled)
        assert not ids, f"{where} names walled objects {ids}: {text[:800]}"


def _walled_rows(walled: Walled) -> tuple:
    firm = walled.firm
    cases = list(
        Case.objects.filter(pk__in=[firm.case_id, firm.only_case_id]).values_list("pk", "name", "updated_at")
    )
    documents = list(
        Document.objects.filter(pk=firm.document_id).values_list("pk", "title", "case_id", "updated_at")
    )
    return cases, documents


def test_the_sweep_covers_every_route_taking_a_matter_id():
    assert len(WALLED_OPERATIONS) >= 16, WALLED_OPERATIONS  # cases, documents, jobs, questions, exports


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("method", "path"), WALLED_OPERATIONS, ids=[f"{m} {p}" for m, p in WALLED_OPERATIONS]
)
def test_a_walled_matter_is_answered_like_a_missing_one(method, path, walled, world):
    probe = PROBES[f"{method} {path}"]
    (param,) = _path_params(path)
    before = _walled_rows(walled)

    def url(value) -> str:
        return path.replace("{" + param + "}", str(value))

    firm = walled.firm
    for who, client in walled.callers().items():
        value = WALLED_VALUE[param](walled)
        behind = _call(client, method, url(value), probe, firm, firm)
        _assert_nothing_walled(behind, walled, f"{who} {method} {url(value)}")
        missing = _call(client, method, url(PATH_PARAMS[param].missing), probe, firm, firm)
        assert _normalized(behind, value) == _normalized(missing, PATH_PARAMS[param].missing), (
            f"{who}: the walled {param} and a missing one are answered differently"
        )
    assert _walled_rows(walled) == before, f"{method} {path} changed the walled matter"

    # Controls: the open matter is reached through the same route by the firm's member key, and
    # the walled one by the insider, so the 404s above are the wall's.
    control = Role.ADMIN if "/admin/" in path else Role.MEMBER
    own = _call(firm.client(control), method, url(OPEN_VALUE[param](walled)), probe, firm, firm)
    assert own.status_code < 400, (own.status_code, body_text(own)[:500])
    if method == "GET" and param in ("case_id", "document_id"):
        inside = walled.insider_client().get(url(WALLED_VALUE[param](walled)))
        assert inside.status_code == 200, (inside.status_code, body_text(inside)[:300])


@pytest.mark.django_db
def test_lists_and_searches_leave_the_walled_matter_out(walled):
    firm = walled.firm
    for who, client in walled.callers().items():
        for url, params in (
            ("/api/v1/rag/cases", {}),
            ("/api/v1/rag/cases", {"q": firm.only_case_name}),
            ("/api/v1/rag/documents", {}),
            ("/api/v1/rag/documents", {"q": firm.marker}),
            ("/api/v1/rag/queries", {}),
        ):
            response = client.get(url, params)
            assert response.status_code == 200, (who, url, response.content)
            _assert_nothing_walled(response, walled, f"{who} GET {url} {params}")
    # Controls: what is not walled stays listed (history, audit log, documents).
    history = firm.client(Role.MEMBER).get("/api/v1/rag/queries").json()["results"]
    assert walled.open_request_id in [row["request_id"] for row in history]
    audit = firm.client(Role.ADMIN).get("/api/v1/rag/admin/audit").json()["results"]
    assert walled.open_request_id in [row["request_id"] for row in audit]
    documents = firm.client(Role.MEMBER).get("/api/v1/rag/documents").json()["results"]
    assert walled.open_document_id in [row["id"] for row in documents]
    inside = walled.insider_client().get("/api/v1/rag/cases", {"q": firm.only_case_name})
    assert [row["id"] for row in inside.json()["results"]] == [firm.only_case_id]


@pytest.mark.django_db
@pytest.mark.parametrize("agentic", [False, True])
def test_questions_never_reach_behind_the_wall(walled, agentic):
    firm = walled.firm
    for who, client in walled.callers().items():
        anywhere = client.post(
            "/api/v1/rag/query", {"query": QUESTION, "use_cache": False, "agentic": agentic}, format="json"
        )
        assert anywhere.status_code == 200, (who, anywhere.content)
        _assert_nothing_walled(anywhere, walled, f"{who} asking the whole firm")
        for filters in ({"case_ids": [firm.case_id]}, {"document_ids": [firm.document_id]}):
            aimed = client.post(
                "/api/v1/rag/query",
                {"query": QUESTION, "filters": filters, "agentic": agentic},
                format="json",
            )
            missing = client.post(
                "/api/v1/rag/query",
                {"query": QUESTION, "filters": {key: [2_000_000_000] for key in filters}, "agentic": agentic},
                format="json",
            )
            assert aimed.status_code == missing.status_code == 404, (who, aimed.content)
            assert aimed.json()["error_type"] == missing.json()["error_type"] == "NotFound"
            _assert_nothing_walled(aimed, walled, f"{who} asking about {filters}")
    inside = walled.insider_client().post(
        "/api/v1/rag/query", {"query": QUESTION, "use_cache": False, "agentic": agentic}, format="json"
    )
    assert firm.marker in (inside.json()["answer"] or ""), "control: the insider is answered from it"


@pytest.mark.django_db
def test_the_answer_cache_respects_the_wall(walled):
    firm = walled.firm
    inside = walled.insider_client().post("/api/v1/rag/query", {"query": QUESTION}, format="json").json()
    assert firm.marker in (inside["answer"] or "")
    client = APIClient()
    client.force_login(walled.outsider_member)
    outside = client.post("/api/v1/rag/query", {"query": QUESTION}, format="json")
    assert outside.json()["flags"]["cache_hit"] is False
    _assert_nothing_walled(outside, walled, "the outsider's same question")


WEB_PAGES = {
    "case": lambda w: f"/cases/{w.firm.case_id}/",
    "document": lambda w: f"/documents/{w.firm.document_id}/",
    "answer": lambda w: f"/ask/{w.firm.request_id}/",
    "answer-docx": lambda w: f"/ask/{w.firm.request_id}/memo.docx",
    "answer-text": lambda w: f"/ask/{w.firm.request_id}/citations.txt",
    "rerun": lambda w: f"/ask/?rerun={w.firm.request_id}",
    "review": lambda w: f"/cases/{w.firm.case_id}/review/",
    "review-table": lambda w: f"/review/{w.firm.extra['table_id']}/",
}


@pytest.mark.django_db
@pytest.mark.parametrize("page", sorted(WEB_PAGES))
def test_staff_pages_of_the_walled_matter_are_not_found(walled, page):
    for user in (walled.outsider_member, walled.outsider_admin):
        client = Client()
        client.force_login(user)
        response = client.get(WEB_PAGES[page](walled))
        assert response.status_code == 404, (page, response.status_code)
        _assert_nothing_walled(response, walled, f"page {page}")
    for listing in ("/cases/", "/ask/", "/history/"):
        response = client.get(listing)
        assert response.status_code == 200
        _assert_nothing_walled(response, walled, f"page {listing}")


@pytest.mark.django_db
def test_the_insider_opens_the_walled_pages(walled):
    client = Client()
    client.force_login(walled.insider)
    for page in ("case", "document", "review", "review-table"):
        response = client.get(WEB_PAGES[page](walled))
        assert response.status_code == 200, page


@pytest.mark.django_db
def test_the_console_lists_walls_but_not_what_is_behind_them(walled):
    """Firm admins manage walls in the console: they see the walled case's name and who is on the
    wall, never its documents."""
    client = Client()
    client.force_login(walled.outsider_admin)
    cases = client.get("/manage/rag/case/")
    assert cases.status_code == 200
    assert walled.firm.only_case_name in body_text(cases) and "Walled: 1 member" in body_text(cases)
    documents = client.get("/manage/rag/document/")
    assert documents.status_code == 200
    assert walled.firm.document_title not in body_text(documents)
    assert client.get(f"/manage/rag/document/{walled.firm.document_id}/change/").status_code == 404
    # The walled case's page: its name and its wall, nothing of what it is about.
    page = client.get(f"/manage/rag/case/{walled.firm.only_case_id}/change/")
    assert page.status_code == 200 and walled.firm.only_case_name in body_text(page)
    assert walled.firm.marker not in body_text(page) and walled.firm.marker not in body_text(cases)
    # Adding a member to the wall goes through the service and works from this page.
    response = client.post(
        f"/manage/rag/case/{walled.firm.only_case_id}/change/",
        {
            "name": walled.firm.only_case_name,
            "walled": "on",
            "wall_members": [walled.insider.pk, walled.outsider_member.pk],
        },
    )
    assert response.status_code == 302, body_text(response)[:500]
    members = set(Case.objects.get(pk=walled.firm.only_case_id).wall_members.values_list("pk", flat=True))
    assert members == {walled.insider.pk, walled.outsider_member.pk}
    assert Case.objects.get(pk=walled.firm.only_case_id).description.startswith("What")  # kept


@pytest.mark.django_db
def test_the_operators_admin_shows_the_walls(walled, admin_user):
    client = Client()
    client.force_login(admin_user)  # a platform superuser
    response = client.get(
        "/admin/rag/case/", {"walled__exact": "1", "tenant__id__exact": walled.firm.tenant.pk}
    )
    assert response.status_code == 200
    assert walled.firm.only_case_name in body_text(response)
    assert walled.insider.get_username() in body_text(response)
