"""Tenant isolation sweep: every operation of the OpenAPI schema, called as tenant alpha (viewer,
member and admin keys) against tenant bravo's objects, leaks nothing of bravo.

The operations come from the schema at test time (drf-spectacular, as /api/schema/ serves it), so
a new route is swept as soon as it exists; `PROBES` says how to aim each one at bravo (which body,
which query parameters), and a route without a probe fails `test_every_schema_operation_has_a_probe`
and its own sweep test. For an operation with an object id in its path:

- bravo's id gets exactly the answer a missing id gets (same status and body but the request id),
  and for alpha's admin that answer is 404 — never 403, which would confirm the object exists;
- bravo's object is unchanged afterwards (deletes, edits and reindexing did nothing);
- alpha's own id is answered (< 400): the route really reaches its view, so the 404s mean something.

Every response body is searched for bravo's secrets (marker word, slug, names, titles, template id,
request and job ids, key prefixes) and for bravo's document and case ids under id-carrying keys.
The web pages (session login) get the same treatment, and the answer cache and the metrics are
checked separately.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from rag.web import urls as web_urls
from tenants.models import Invitation, Membership, Role
from tests.factories import TenantFactory

from .conftest import QUESTION, TenantData, body_text, foreign_ids, leaked

# Admin first: a probe that creates something (a case, a template) expects its 201 for the admin,
# and the lower roles then meet alpha's own new object (409) or their role limit (403).
ROLES = (Role.ADMIN, Role.MEMBER, Role.VIEWER)
NO_SUCH_ENDPOINT = "No such endpoint."


def schema_operations() -> list[tuple[str, str]]:
    """(METHOD, path template) of every operation in the OpenAPI schema."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method.upper(), path)
        for path, item in schema["paths"].items()
        for method in item
        if method in {"get", "post", "put", "patch", "delete"}
    ]


OPERATIONS = schema_operations()


# --- How each path parameter is filled -----------------------------------------------------------


@dataclass(frozen=True)
class PathParam:
    """A path parameter: bravo's value, alpha's own value, a value no tenant has, and the URL that
    reads the object as its owner (to check it survived)."""

    foreign: Callable[[TenantData], object]
    own: Callable[[TenantData], object]
    missing: object
    owner_read: Callable[[TenantData], tuple[str, str]]  # (role, url) for the owner's GET


PATH_PARAMS: dict[str, PathParam] = {
    "case_id": PathParam(
        foreign=lambda b: b.case_id,
        own=lambda a: a.only_case_id,
        missing=2_000_000_000,
        owner_read=lambda b: (Role.MEMBER, f"/api/v1/rag/cases/{b.case_id}"),
    ),
    "document_id": PathParam(
        foreign=lambda b: b.document_id,
        own=lambda a: a.document_id,
        missing=2_000_000_000,
        owner_read=lambda b: (Role.MEMBER, f"/api/v1/rag/documents/{b.document_id}"),
    ),
    "template_id": PathParam(
        foreign=lambda b: b.template_id,
        own=lambda a: a.template_id,
        missing="no_such_template_anywhere",
        owner_read=lambda b: (Role.ADMIN, f"/api/v1/rag/admin/templates/{b.template_id}"),
    ),
    "job_id": PathParam(
        foreign=lambda b: b.job_id,
        own=lambda a: a.job_id,
        missing="job_00000000000000000000000000000000",
        owner_read=lambda b: (Role.MEMBER, f"/api/v1/rag/jobs/{b.job_id}"),
    ),
    "request_id": PathParam(
        foreign=lambda b: b.request_id,
        own=lambda a: a.request_id,
        missing="req_00000000000000000000000000000000",
        owner_read=lambda b: (Role.MEMBER, f"/api/v1/rag/queries/{b.request_id}"),
    ),
    "conversation_id": PathParam(
        foreign=lambda b: b.extra["conversation_id"],
        own=lambda a: a.extra["conversation_id"],
        missing="conv_00000000000000000000000000000000",
        owner_read=lambda b: (
            Role.MEMBER,
            f"/api/v1/rag/queries?conversation_id={b.extra['conversation_id']}",
        ),
    ),
    "table_id": PathParam(
        foreign=lambda b: b.extra["table_id"],
        own=lambda a: a.extra["table_id"],
        missing=2_000_000_000,
        owner_read=lambda b: (Role.MEMBER, f"/api/v1/rag/review-tables/{b.extra['table_id']}"),
    ),
    "cell_id": PathParam(
        foreign=lambda b: b.extra["cell_id"],
        own=lambda a: a.extra["cell_id"],
        missing=2_000_000_000,
        owner_read=lambda b: (Role.MEMBER, f"/api/v1/rag/review-tables/{b.extra['table_id']}"),
    ),
    "review_template_id": PathParam(
        foreign=lambda b: b.extra["review_template_id"],
        own=lambda a: a.extra["review_template_id"],
        missing=2_000_000_000,
        owner_read=lambda b: (Role.ADMIN, "/api/v1/rag/review-templates"),
    ),
    "key_id": PathParam(
        foreign=lambda b: b.key_ids[Role.VIEWER],
        own=lambda a: a.key_ids[Role.VIEWER],
        missing=2_000_000_000,
        owner_read=lambda b: (Role.ADMIN, "/api/v1/tenants/api-keys"),
    ),
}

# The person routes' ids (see `_sweep_person_route`): bravo's object is checked unchanged in the
# database (no API key reads it), and alpha's own is made in the test's transaction: alpha's
# member answers an invitation addressed to them, or leaves alpha.


def _invitation_for(user) -> int:
    """A pending invitation to `user` from a third firm (made inside the test, rolled back)."""
    from tenants.models import Invitation

    third = TenantFactory()
    invitation = Invitation.objects.create(
        tenant=third,
        identifier=user.username,
        user=user,
        token_hash=Invitation.hash_token(f"sweep-{third.slug}"),
        expires_at=timezone.now() + timedelta(days=1),
    )
    return invitation.pk


@dataclass(frozen=True)
class PersonParam:
    """A person route's path parameter: as `PathParam`, with `state(bravo)` reading bravo's object
    from the database to check it survived."""

    foreign: Callable[[TenantData], object]
    own: Callable[[TenantData], object]
    missing: object
    state: Callable[[TenantData], list]


PERSON_PARAMS: dict[str, PersonParam] = {
    "invitation_id": PersonParam(
        foreign=lambda b: b.extra["invitation_id"],
        own=lambda a: _invitation_for(a.user),
        missing=2_000_000_000,
        state=lambda b: list(Invitation.objects.filter(pk=b.extra["invitation_id"]).values_list("status")),
    ),
    "slug": PersonParam(
        foreign=lambda b: b.tenant.slug,
        own=lambda a: a.tenant.slug,
        missing="no-such-firm-anywhere",
        state=lambda b: list(Membership.objects.filter(tenant=b.tenant).values_list("user_id", "role")),
    ),
}


# --- How each operation is aimed at bravo ------------------------------------------------------


def _text_file() -> dict:
    return {"files": [SimpleUploadedFile("planted.txt", b"Planted by another tenant.")]}


@dataclass(frozen=True)
class Probe:
    """How to call one operation. `body(alpha, bravo)` is sent as `format`; `params(alpha, bravo)`
    adds a second call with query parameters aimed at bravo's data; `expect` is the status alpha's
    admin must get for an operation without a path id (empty: any status below 500); `echoed`
    lists bravo's strings that alpha's own request contains and its own new object may repeat (a
    template id or case name alpha is free to use too)."""

    note: str
    body: Callable[[TenantData, TenantData], dict | None] = lambda a, b: None
    format: str = "json"
    params: Callable[[TenantData, TenantData], dict] | None = None
    expect: tuple[int, ...] = ()
    check: Callable | None = field(default=None)  # check(response, alpha, bravo) for alpha's admin
    echoed: Callable[[TenantData], list[str]] = lambda b: []  # bravo's strings alpha itself sends
    person: bool = False  # a person's route: every key gets 403, swept with a session instead


def _renamed(a, b) -> dict:
    return {"name": "Renamed by another tenant"}


def _full_template(a, b) -> dict:
    """Every field PUT requires, so the request gets past validation to the lookup."""
    return {
        "name": "Replaced by another tenant",
        "description": "",
        "response_style": "balanced",
        "system_prompt": "You are careful.",
        "user_prompt": "{context}\n\n{question}",
        "instructions_block": "",
        "citation_style": "inline_numbers",
        "strictness": "normal",
        "follow_up_count": 1,
    }


def _template_not_taken_over(response, alpha, bravo):
    """Creating a template with bravo's template id makes alpha's own (201), never updates bravo's."""
    assert response.status_code == 201, response.content
    assert response.json()["version"] == 1


def _case_name_is_free(response, alpha, bravo):
    """A name only bravo uses is free for alpha: a 409 would reveal bravo's case."""
    assert response.status_code == 201, response.content


def _no_foreign_results(response, alpha, bravo):
    payload = response.json()
    rows = payload.get("results", payload) if isinstance(payload, dict) else payload
    assert rows == [] or payload.get("count") == 0, payload


PROBES: dict[str, Probe] = {
    # Health: public, tenant-free.
    "GET /api/v1/health": Probe("public status"),
    # Audit trail (admin).
    "GET /api/v1/rag/admin/audit": Probe(
        "alpha's trail; filtered by bravo's request id it is empty",
        params=lambda a, b: {"request_id": b.request_id},
    ),
    "GET /api/v1/rag/admin/audit/{request_id}": Probe("bravo's audit row"),
    # Metrics (admin): labels of bravo (tenant slug, custom template id) never shown.
    "GET /api/v1/rag/admin/metrics": Probe("alpha's series only"),
    # Ranking weights (admin): alpha's own row; bravo's untouched (checked by the weights test).
    "GET /api/v1/rag/admin/ranking/weights": Probe("alpha's weights"),
    "POST /api/v1/rag/admin/ranking/weights": Probe(
        "set alpha's weights",
        body=lambda a, b: {"similarity_weight": 1, "recency_weight": 1, "trust_weight": 1},
        expect=(200,),
    ),
    # Simulation (admin): bravo's template is unknown; filters on bravo's ids find nothing of bravo.
    "POST /api/v1/rag/admin/simulate": Probe(
        "bravo's template is not found",
        body=lambda a, b: {"query": QUESTION, "template_id": b.template_id},
        expect=(404,),
    ),
    # Templates (admin).
    "GET /api/v1/rag/admin/templates": Probe("alpha's and the built-ins"),
    "POST /api/v1/rag/admin/templates": Probe(
        "bravo's template id is free for alpha",
        body=lambda a, b: {
            "template_id": b.template_id,
            "name": "Alpha's own",
            "system_prompt": "You are careful.",
            "user_prompt": "{context}\n\n{question}",
        },
        expect=(201,),
        check=_template_not_taken_over,
        echoed=lambda b: [b.template_id],
    ),
    "GET /api/v1/rag/admin/templates/{template_id}": Probe("bravo's template"),
    "PUT /api/v1/rag/admin/templates/{template_id}": Probe("replace bravo's template", body=_full_template),
    "PATCH /api/v1/rag/admin/templates/{template_id}": Probe("edit bravo's template", body=_renamed),
    "DELETE /api/v1/rag/admin/templates/{template_id}": Probe("delete bravo's template"),
    "POST /api/v1/rag/admin/templates/{template_id}/revert": Probe(
        "revert bravo's template", body=lambda a, b: {"version": 1}
    ),
    "GET /api/v1/rag/admin/templates/{template_id}/versions": Probe("bravo's template history"),
    # Cases.
    "GET /api/v1/rag/cases": Probe(
        "alpha's cases; searching bravo's case name finds nothing",
        params=lambda a, b: {"q": b.only_case_name},
    ),
    "POST /api/v1/rag/cases": Probe(
        "a case name only bravo uses",
        body=lambda a, b: {"name": b.only_case_name},
        expect=(201,),
        check=_case_name_is_free,
        echoed=lambda b: [b.only_case_name],
    ),
    "GET /api/v1/rag/cases/{case_id}": Probe("bravo's case"),
    "PUT /api/v1/rag/cases/{case_id}": Probe("replace bravo's case", body=_renamed),
    "PATCH /api/v1/rag/cases/{case_id}": Probe("rename bravo's case", body=_renamed),
    "DELETE /api/v1/rag/cases/{case_id}": Probe("delete bravo's case"),
    "GET /api/v1/rag/cases/{case_id}/documents": Probe("bravo's case's documents"),
    "POST /api/v1/rag/cases/{case_id}/documents": Probe(
        "upload into bravo's case", body=lambda a, b: _text_file(), format="multipart"
    ),
    "POST /api/v1/rag/cases/{case_id}/reindex": Probe("reindex bravo's case"),
    # Review tables and the firm's saved column sets.
    "GET /api/v1/rag/review-columns": Probe("the built-in columns, the same for every firm"),
    "GET /api/v1/rag/cases/{case_id}/review-tables": Probe("bravo's case's review tables"),
    "POST /api/v1/rag/cases/{case_id}/review-tables": Probe(
        "a review table of bravo's case", body=lambda a, b: {"columns": [{"key": "governing_law"}]}
    ),
    "GET /api/v1/rag/review-tables/{table_id}": Probe("bravo's review table"),
    "DELETE /api/v1/rag/review-tables/{table_id}": Probe("delete bravo's review table"),
    "GET /api/v1/rag/review-tables/{table_id}/status": Probe("bravo's review table's progress"),
    "POST /api/v1/rag/review-tables/{table_id}/cancel": Probe("cancel bravo's review table"),
    "POST /api/v1/rag/review-tables/{table_id}/rerun": Probe("re-run bravo's review table"),
    "GET /api/v1/rag/review-tables/{table_id}/export": Probe("bravo's review table as CSV"),
    "PUT /api/v1/rag/review-cells/{cell_id}": Probe(
        "review a cell of bravo's table", body=lambda a, b: {"answer": "No", "note": "by alpha"}
    ),
    "DELETE /api/v1/rag/review-cells/{cell_id}": Probe("take back a review of bravo's cell"),
    "GET /api/v1/rag/review-templates": Probe("alpha's saved column sets only"),
    "POST /api/v1/rag/review-templates": Probe(
        "a column set of alpha's own",
        body=lambda a, b: {"name": "Sweep set", "columns": [{"key": "insurance"}]},
        expect=(201,),
    ),
    "DELETE /api/v1/rag/review-templates/{review_template_id}": Probe("delete bravo's column set"),
    # Documents.
    "GET /api/v1/rag/documents": Probe(
        "alpha's documents; filtered by bravo's case or title, none",
        params=lambda a, b: {"case_id": b.case_id, "q": b.marker},
    ),
    "GET /api/v1/rag/documents/{document_id}": Probe("bravo's document"),
    "PATCH /api/v1/rag/documents/{document_id}": Probe(
        "retitle bravo's document", body=lambda a, b: {"title": "Retitled by another tenant"}
    ),
    "DELETE /api/v1/rag/documents/{document_id}": Probe("delete bravo's document"),
    "POST /api/v1/rag/documents/{document_id}/reindex": Probe("reindex bravo's document"),
    # Questions.
    "GET /api/v1/rag/jobs/{job_id}": Probe("bravo's async job"),
    "GET /api/v1/rag/queries": Probe(
        "alpha's history; bravo's request id is not in it", params=lambda a, b: {"q": b.marker}
    ),
    "GET /api/v1/rag/queries/{request_id}": Probe("bravo's question"),
    "GET /api/v1/rag/queries/{request_id}/export": Probe("bravo's answer as a memo"),
    "GET /api/v1/rag/conversations/{conversation_id}/export": Probe("bravo's conversation as a memo"),
    "POST /api/v1/rag/query": Probe(
        "the look-alike question, restricted to bravo's case and document ids",
        body=lambda a, b: {
            "query": QUESTION,
            "use_cache": False,
            "filters": {"case_ids": [b.case_id], "document_ids": [b.document_id]},
        },
    ),
    # Tenants and keys.
    "GET /api/v1/tenants/api-keys": Probe("alpha's keys only"),
    "POST /api/v1/tenants/api-keys": Probe(
        "a new key is alpha's", body=lambda a, b: {"name": "sweep key", "role": "viewer"}, expect=(201,)
    ),
    "DELETE /api/v1/tenants/api-keys/{key_id}": Probe("revoke bravo's key"),
    "GET /api/v1/tenants/current": Probe("alpha, whoever asks"),
    "GET /api/v1/tenants/memberships": Probe("an API key has its own tenant only"),
    "POST /api/v1/tenants/switch": Probe(
        "an API key cannot switch, least of all to bravo",
        body=lambda a, b: {"tenant": b.tenant.slug},
        expect=(403,),
    ),
    # A person's invitations and firms: session only (an API key is no person, 403).
    "GET /api/v1/tenants/invitations": Probe("alpha's member's own invitations only", person=True),
    "POST /api/v1/tenants/invitations/{invitation_id}/accept": Probe(
        "accept bravo's invitation to someone else", person=True
    ),
    "POST /api/v1/tenants/invitations/{invitation_id}/decline": Probe(
        "decline bravo's invitation to someone else", person=True
    ),
    "POST /api/v1/tenants/memberships/{slug}/leave": Probe("leave bravo, not being in it", person=True),
}


# --- Helpers -----------------------------------------------------------------------------------


def _call(client, method: str, url: str, probe: Probe, alpha, bravo, params: dict | None = None):
    if method == "GET":
        return client.get(url, params or {})
    body = probe.body(alpha, bravo)
    call = getattr(client, method.lower())
    if body is None:
        return call(url)
    return call(url, body, format=probe.format)


def _assert_nothing_of(response, bravo: TenantData, where: str, echoed: list[str] = ()) -> None:
    assert response.status_code < 500, f"{where}: {response.status_code} {body_text(response)[:500]}"
    text = body_text(response)
    shown = [secret for secret in leaked(text, bravo) if secret not in echoed]
    assert not shown, f"{where} shows bravo's {shown}: {text[:800]}"
    if "json" in response.get("Content-Type", ""):
        ids = foreign_ids(json.loads(text), bravo)
        assert not ids, f"{where} names bravo's objects {ids}: {text[:800]}"


def _normalized(response, value) -> tuple[int, dict | str]:
    """Status and body with the request id, the elapsed time (the query endpoints' error bodies carry
    processing_time_ms) and the probed id blanked, for comparing two answers."""
    text = body_text(response).replace(str(value), "<id>")
    try:
        payload = json.loads(text)
    except ValueError:
        return response.status_code, text
    if isinstance(payload, dict):
        payload.pop("request_id", None)
        payload.pop("processing_time_ms", None)
    return response.status_code, payload


def _owner_view(bravo: TenantData, param: str):
    """How bravo itself sees the probed object: status and body, without volatile fields."""
    role, url = PATH_PARAMS[param].owner_read(bravo)
    response = bravo.client(role).get(url)
    payload = response.json()
    if param == "key_id":  # the list of keys: the probed key's revocation is what matters
        key_id = PATH_PARAMS[param].foreign(bravo)
        payload = [{"id": row["id"], "revoked": row["revoked_at"]} for row in payload if row["id"] == key_id]
    elif isinstance(payload, dict):
        payload.pop("request_id", None)
        payload.pop("last_used_at", None)
    return response.status_code, payload


def _path_params(path: str) -> list[str]:
    return [part[1:-1] for part in path.split("/") if part.startswith("{") and part.endswith("}")]


# --- The sweep ---------------------------------------------------------------------------------


def test_every_schema_operation_has_a_probe():
    """A route added to the API without a probe here has no isolation coverage: fail until it has."""
    swept = {f"{method} {path}" for method, path in OPERATIONS}
    unprobed = sorted(swept - set(PROBES))
    stale = sorted(set(PROBES) - swept)
    assert not unprobed, f"Operations with no isolation probe (add them to PROBES): {unprobed}"
    assert not stale, f"PROBES names operations the schema no longer has: {stale}"
    params = {param for _, path in OPERATIONS for param in _path_params(path)}
    known = set(PATH_PARAMS) | set(PERSON_PARAMS)
    assert params <= known, f"Path parameters with no foreign value: {params - known}"
    assert len(OPERATIONS) >= 38  # the sweep really read the schema (38 operations in 2026-11)


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_operation_shows_or_touches_the_other_tenants_data(method, path, alpha, bravo):
    probe = PROBES.get(f"{method} {path}")
    assert probe is not None, f"{method} {path} has no isolation probe: add one to PROBES"
    params = _path_params(path)
    if probe.person:
        _sweep_person_route(method, path, params, probe, alpha, bravo)
        return
    for param in params:
        assert param in PATH_PARAMS, f"{method} {path}: no foreign value for {{{param}}}"

    if not params:
        for role in ROLES:
            client = alpha.client(role)
            response = _call(client, method, path, probe, alpha, bravo)
            _assert_nothing_of(response, bravo, f"{role} {method} {path}", probe.echoed(bravo))
            if role == Role.ADMIN:
                if probe.expect:
                    assert response.status_code in probe.expect, (response.status_code, body_text(response))
                if probe.check:
                    probe.check(response, alpha, bravo)
            if probe.params is not None and method == "GET":
                aimed = _call(client, method, path, probe, alpha, bravo, params=probe.params(alpha, bravo))
                _assert_nothing_of(aimed, bravo, f"{role} {method} {path} ?{probe.params(alpha, bravo)}")
                if aimed.status_code == 200:
                    _no_foreign_results(aimed, alpha, bravo)
        return

    (param,) = params  # every id route has one id; a second one needs thought here first
    spec = PATH_PARAMS[param]
    before = _owner_view(bravo, param)
    assert before[0] == 200, before

    def url(value) -> str:
        return path.replace("{" + param + "}", str(value))

    for role in ROLES:
        client = alpha.client(role)
        foreign = _call(client, method, url(spec.foreign(bravo)), probe, alpha, bravo)
        _assert_nothing_of(foreign, bravo, f"{role} {method} {url(spec.foreign(bravo))}")
        missing = _call(client, method, url(spec.missing), probe, alpha, bravo)
        assert _normalized(foreign, spec.foreign(bravo)) == _normalized(missing, spec.missing), (
            f"{role}: bravo's object and a missing one are answered differently"
        )
        if role == Role.ADMIN:
            assert foreign.status_code == 404, (foreign.status_code, body_text(foreign))
            assert foreign.json()["error_type"] == "NotFound", foreign.json()
            assert foreign.json()["message"] != NO_SUCH_ENDPOINT, "the URL reached no view"

    assert _owner_view(bravo, param) == before, f"{method} {path} changed bravo's object"

    # Control: alpha's own object is found through the same route, so the 404 above is isolation.
    admin_only = ("/admin/", "/api-keys", "/review-templates/")  # what only admins change
    control_role = Role.ADMIN if any(part in path for part in admin_only) else Role.MEMBER
    own = _call(alpha.client(control_role), method, url(spec.own(alpha)), probe, alpha, bravo)
    assert own.status_code < 400, (own.status_code, body_text(own)[:500])


def _sweep_person_route(method, path, params, probe, alpha, bravo) -> None:
    """A person's route (their invitations, leaving a firm). Every key of alpha, whatever its role,
    gets the same 403 `PermissionDenied` for bravo's id and a missing one (a key is no person).
    Alpha's member, signed in, gets the same answer for bravo's object and a missing one (404 for
    an id), sees nothing of bravo, and leaves bravo's object as it was; their own is answered."""
    session = APIClient()
    session.force_login(alpha.user)
    if not params:
        for role in ROLES:
            response = _call(alpha.client(role), method, path, probe, alpha, bravo)
            assert response.status_code == 403, (role, response.status_code, body_text(response))
            assert response.json()["error_type"] == "PermissionDenied"
        response = _call(session, method, path, probe, alpha, bravo)
        assert response.status_code == 200, body_text(response)
        _assert_nothing_of(response, bravo, f"alpha's member {method} {path}")
        return

    (param,) = params
    spec = PERSON_PARAMS[param]
    before = spec.state(bravo)
    assert before, f"control: bravo has the {param} probed"

    def url(value) -> str:
        return path.replace("{" + param + "}", str(value))

    for role in ROLES:
        client = alpha.client(role)
        foreign = _call(client, method, url(spec.foreign(bravo)), probe, alpha, bravo)
        missing = _call(client, method, url(spec.missing), probe, alpha, bravo)
        assert _normalized(foreign, spec.foreign(bravo)) == _normalized(missing, spec.missing), role
        assert foreign.status_code == 403 and foreign.json()["error_type"] == "PermissionDenied", role

    foreign = _call(session, method, url(spec.foreign(bravo)), probe, alpha, bravo)
    _assert_nothing_of(foreign, bravo, f"alpha's member {method} {url(spec.foreign(bravo))}")
    missing = _call(session, method, url(spec.missing), probe, alpha, bravo)
    assert _normalized(foreign, spec.foreign(bravo)) == _normalized(missing, spec.missing), (
        "bravo's object and a missing one are answered differently"
    )
    assert foreign.status_code == 404 and foreign.json()["error_type"] == "NotFound", body_text(foreign)
    assert spec.state(bravo) == before, f"{method} {path} changed bravo's object"

    own = _call(session, method, url(spec.own(alpha)), probe, alpha, bravo)
    assert own.status_code < 400, (own.status_code, body_text(own)[:500])


# --- The answer cache ----------------------------------------------------------------------------


def test_the_answer_cache_never_hands_one_tenants_answer_to_another(alpha, bravo):
    """Both tenants ask the same question of look-alike documents: each gets its own marker, and
    bravo's first ask is a miss even though alpha's identical question is cached."""
    question = {"query": "Which project code name does the Master Supply Agreement give?"}
    first = alpha.client().post("/api/v1/rag/query", question, format="json").json()
    again = alpha.client().post("/api/v1/rag/query", question, format="json").json()
    assert alpha.marker in first["answer"], first
    assert again["flags"]["cache_hit"] is True, "control: alpha's repeat is served from the cache"

    response = bravo.client().post("/api/v1/rag/query", question, format="json")
    answer = response.json()
    assert answer["flags"]["cache_hit"] is False
    assert bravo.marker in answer["answer"], answer
    _assert_nothing_of(response, alpha, "bravo's answer")


# --- Metrics -------------------------------------------------------------------------------------


def test_the_tenant_metrics_show_no_label_of_the_other_tenant(alpha, bravo, settings):
    """alpha's admin reads its own Prometheus series; bravo's slug and custom template id (labels of
    bravo's queries, recorded in this process) are in the platform's metrics but never in alpha's."""
    settings.METRICS_TOKEN = "operator-token"
    platform = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer operator-token")
    assert platform.status_code == 200
    assert bravo.tenant.slug in body_text(platform), "control: bravo's series exist"

    response = alpha.client(Role.ADMIN).get("/api/v1/rag/admin/metrics", HTTP_ACCEPT="text/plain")
    assert response.status_code == 200
    assert alpha.tenant.slug in body_text(response), "control: alpha's own series are shown"
    _assert_nothing_of(response, bravo, "alpha's metrics")


def test_the_platform_metrics_are_not_open_to_a_tenant_credential(alpha, settings):
    settings.METRICS_TOKEN = "operator-token"
    for auth in (f"Api-Key {alpha.keys[Role.ADMIN]}", f"Bearer {alpha.keys[Role.ADMIN]}"):
        response = Client().get("/metrics", HTTP_AUTHORIZATION=auth)
        assert response.status_code == 401, auth
        assert "rag_" not in body_text(response)


# --- Web pages (session login) -------------------------------------------------------------------


@dataclass(frozen=True)
class WebProbe:
    """A staff UI page: how alpha's user requests it aimed at bravo, and the status expected."""

    request: Callable[[Client, TenantData, TenantData], object]
    expect: int
    control: Callable[[Client, TenantData], object] | None = None  # alpha's own object: 200
    echoed: Callable[[TenantData], list[str]] = lambda b: []  # the search text, shown in its box


WEB_PROBES: dict[str, WebProbe] = {
    "home": WebProbe(lambda c, a, b: c.get("/"), 302),
    "cases": WebProbe(
        lambda c, a, b: c.get("/cases/", {"q": b.only_case_name}), 200, echoed=lambda b: [b.only_case_name]
    ),
    "case": WebProbe(
        lambda c, a, b: c.get(f"/cases/{b.case_id}/"), 404, control=lambda c, a: c.get(f"/cases/{a.case_id}/")
    ),
    "document": WebProbe(
        lambda c, a, b: c.get(f"/documents/{b.document_id}/"),
        404,
        control=lambda c, a: c.get(f"/documents/{a.document_id}/"),
    ),
    "ask": WebProbe(
        lambda c, a, b: c.get("/ask/", {"rerun": b.request_id}),
        404,
        control=lambda c, a: c.get("/ask/", {"rerun": _asked_in_session(c)}),
    ),
    "answer": WebProbe(
        lambda c, a, b: c.get(f"/ask/{b.request_id}/"),
        404,
        control=lambda c, a: c.get(f"/ask/{_asked_in_session(c)}/"),
    ),
    "answer-docx": WebProbe(
        lambda c, a, b: c.get(f"/ask/{b.request_id}/memo.docx"),
        404,
        control=lambda c, a: c.get(f"/ask/{_asked_in_session(c)}/memo.docx"),
    ),
    "answer-text": WebProbe(
        lambda c, a, b: c.get(f"/ask/{b.request_id}/citations.txt"),
        404,
        control=lambda c, a: c.get(f"/ask/{_asked_in_session(c)}/citations.txt"),
    ),
    "conversation-docx": WebProbe(
        lambda c, a, b: c.get(f"/conversations/{b.extra['conversation_id']}/memo.docx"), 404
    ),
    "review": WebProbe(
        lambda c, a, b: c.get(f"/cases/{b.case_id}/review/"),
        404,
        control=lambda c, a: c.get(f"/cases/{a.case_id}/review/"),
    ),
    "review-table": WebProbe(
        lambda c, a, b: c.get(f"/review/{b.extra['table_id']}/"),
        404,
        control=lambda c, a: c.get(f"/review/{a.extra['table_id']}/"),
    ),
    "history": WebProbe(
        lambda c, a, b: c.get("/history/", {"q": b.marker}), 200, echoed=lambda b: [b.marker]
    ),
    "settings": WebProbe(lambda c, a, b: c.get("/settings/"), 200),
    "switch-tenant": WebProbe(lambda c, a, b: c.post("/tenant/switch", {"tenant": b.tenant.slug}), 404),
}


def _asked_in_session(client: Client) -> str:
    """The request id of a question the logged-in user asks now (history is per user)."""
    response = client.post("/api/v1/rag/query", {"query": QUESTION}, content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()["request_id"]


def test_every_web_page_has_a_probe():
    names = {pattern.name for pattern in web_urls.urlpatterns if isinstance(pattern, URLPattern)}
    assert names == set(WEB_PROBES), f"Pages without an isolation probe: {names - set(WEB_PROBES)}"


@pytest.mark.parametrize("name", sorted(WEB_PROBES))
def test_no_web_page_shows_the_other_tenants_data(name, alpha, bravo):
    probe = WEB_PROBES[name]
    client = Client()
    client.force_login(alpha.user)
    response = probe.request(client, alpha, bravo)
    assert response.status_code == probe.expect, (response.status_code, body_text(response)[:300])
    _assert_nothing_of(response, bravo, f"page {name}", probe.echoed(bravo))
    if probe.control is not None:
        own = probe.control(client, alpha)
        assert own.status_code == 200, "control: alpha's own object opens"
    # The session still acts for alpha (a refused switch changes nothing).
    current = client.get("/api/v1/tenants/current").json()
    assert current["tenant"]["slug"] == alpha.tenant.slug
