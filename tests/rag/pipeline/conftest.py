"""Fixtures for pipeline tests: a small real corpus (real ingestion and embeddings), an isolated
answer cache per test, and fake model providers."""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import redis

from rag import services as rag_services
from rag.llm import Generation
from rag.models import Document, DocumentStatus
from tests.rag.llm.conftest import start_server  # noqa: F401  (a fake Ollama for provider-dependent tests)

MSA_TITLE = "Acme Globex Master Services"
MSA = (
    "MASTER SERVICES AGREEMENT between Acme Robotics Corp and Globex Logistics Inc.\n\n"
    "1. Services. Globex shall deliver the logistics services described in Schedule A.\n\n"
    "7. Confidentiality. Each party shall keep the other party's Confidential Information secret and "
    "shall not disclose it to any third party without prior written consent.\n\n"
    "Section 10.2 Termination. Either party may terminate this Agreement on ninety (90) days written "
    "notice to the other party.\n\n"
    "Section 10.25 Survival. The confidentiality obligations survive termination of this Agreement "
    "for five years.\n\n"
    "12. Governing Law. This Agreement shall be governed by the laws of the State of Delaware."
)
LEASE_TITLE = "Initech Umbrella Commercial Lease"
LEASE = (
    "COMMERCIAL LEASE between Initech Holdings LLC and Umbrella Pharmaceuticals Inc.\n\n"
    "4. Rent. Tenant shall pay rent of $4,000 monthly in advance on the first day of each month.\n\n"
    "9. Termination. Landlord may terminate this Lease on thirty (30) days notice if rent is unpaid.\n\n"
    "14. Governing Law. This Lease is governed by the laws of the State of New York."
)


def ingest_msa(tenant, *, case_name: str):
    """A new case of `tenant` holding the MSA, ingested now (no task queue); returns (case, document)."""
    from rag import services as rag_services
    from rag.ingest import service

    case = rag_services.case_create(tenant=tenant, name=case_name)
    outcome = service.ingest_now(
        tenant=tenant,
        case=case,
        filename="msa.txt",
        content=MSA.encode(),
        fields=service.DocumentFields(title=MSA_TITLE),
    )
    assert outcome.status == "ok", outcome.reason
    return case, outcome.document


# Two supply contracts with the same clauses, told apart only by their parties and by the one
# field a request's filter looks at. Questions name the one outside the filter, so without the
# filter it is the one that wins.
LOOK_ALIKE = (
    "SUPPLY AGREEMENT between Hooli Inc and {party}.\n\n"
    "5. Termination. Either party may terminate this Supply Agreement on sixty (60) days written "
    "notice to the other party.\n\n"
    "9. Governing Law. This Supply Agreement is governed by the laws of the State of Delaware."
)
INSIDE_TITLE, OUTSIDE_TITLE = "Hooli Pied Piper Supply", "Hooli Raviga Supply"
OUTSIDE_CASE = "Raviga matter"


@dataclass(frozen=True)
class ScopeKind:
    """How one kind of request filter tells the look-alikes apart: each one's upload fields
    (`case` names the outside one's case) and the request's filters keeping only the inside one."""

    inside: dict
    outside: dict
    filters: Callable[[Document], dict]


_2019, _2023 = datetime.date(2019, 3, 1), datetime.date(2023, 3, 1)
# One kind per SearchFilters field, named after it.
SCOPE_KINDS = {
    "case_ids": ScopeKind({}, {"case": OUTSIDE_CASE}, lambda inside: {"case_ids": [inside.case_id]}),
    "document_ids": ScopeKind({}, {}, lambda inside: {"document_ids": [inside.pk]}),
    "date_range_start": ScopeKind(
        {"document_date": _2023}, {"document_date": _2019}, lambda _: {"date_range_start": "2023-01-01"}
    ),
    "date_range_end": ScopeKind(
        {"document_date": _2019}, {"document_date": _2023}, lambda _: {"date_range_end": "2020-12-31"}
    ),
    "jurisdictions": ScopeKind(
        {"jurisdiction": "Delaware"}, {"jurisdiction": "New York"}, lambda _: {"jurisdictions": ["delaware"]}
    ),
    "doc_types": ScopeKind(
        {"doc_type": "contract"}, {"doc_type": "memo"}, lambda _: {"doc_types": ["contract"]}
    ),
    "source_types": ScopeKind(
        {"source_type": "user_upload"},
        {"source_type": "secondary"},
        lambda _: {"source_types": ["user_upload"]},
    ),
    "years": ScopeKind(
        {"metadata": {"year": 2022}}, {"metadata": {"year": 2023}}, lambda _: {"years": [2022]}
    ),
    "metadata": ScopeKind(
        {"metadata": {"matter": "M-1"}},
        {"metadata": {"matter": "M-2"}},
        lambda _: {"metadata": {"matter": "M-1"}},
    ),
}


@dataclass(frozen=True)
class LookAlikes:
    kind: str
    inside: Document
    outside: Document
    filters: dict  # the request's filters: they keep `inside` and exclude `outside`


def make_look_alikes(kind: str, case, ingest_text) -> LookAlikes:
    """The look-alike contracts for one kind of filter: the inside one in `case`."""
    spec = SCOPE_KINDS[kind]
    documents = []
    for party, title, fields in (
        ("Pied Piper LLC", INSIDE_TITLE, spec.inside),
        ("Raviga Capital LLC", OUTSIDE_TITLE, spec.outside),
    ):
        fields = dict(fields)
        home = case
        if "case" in fields:
            home = rag_services.case_create(tenant=case.tenant, name=fields.pop("case"))
        text = LOOK_ALIKE.format(party=party)
        filename = f"{title.lower().replace(' ', '-')}.txt"
        documents.append(ingest_text(home, text, filename=filename, title=title, **fields))
    inside, outside = documents
    return LookAlikes(kind, inside, outside, spec.filters(inside))


@pytest.fixture(params=sorted(SCOPE_KINDS))
def look_alikes(request, case, ingest_text) -> LookAlikes:
    """The look-alike contracts and a request's filters keeping the inside one, once per kind of
    filter SearchFilters has."""
    return make_look_alikes(request.param, case, ingest_text)


@pytest.fixture(autouse=True)
def _isolated_answer_cache(settings):
    """Each test gets its own key prefix in the "rag" cache (real Redis when REDIS_URL is set), so
    no entry of another test, run or worktree sharing the Redis can be a hit."""
    caches = {alias: dict(config) for alias, config in settings.CACHES.items()}
    prefix = caches["rag"]["KEY_PREFIX"] = f"lexrag-test:rag:{uuid.uuid4().hex}"
    settings.CACHES = caches
    yield prefix
    if caches["rag"]["BACKEND"] == "django_redis.cache.RedisCache":
        client = redis.Redis.from_url(caches["rag"]["LOCATION"])
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)


@pytest.fixture
def ingest_text(upload):
    """ingest_text(case, text, **fields) -> Document: a one-file TXT upload, fully indexed."""

    def _ingest(case, text: str, *, filename: str = "note.txt", **fields) -> Document:
        document = upload(case, filename, content=text.encode(), filename=filename, **fields).document
        document.refresh_from_db()
        assert document.status == DocumentStatus.READY, document.error_message
        return document

    return _ingest


@pytest.fixture
def corpus(case, ingest_text):
    return {
        "msa": ingest_text(case, MSA, filename="acme-globex-msa.txt", title=MSA_TITLE),
        "lease": ingest_text(case, LEASE, filename="initech-umbrella-lease.txt", title=LEASE_TITLE),
    }


SUPPLY_QUESTION = "Which supply agreements can be terminated on written notice?"


@pytest.fixture
def supply_agreements(case, ingest_text):
    """Five agreements with a termination clause each: a question about all of them retrieves as
    many passages as top_k allows (measured: 5 by default, exactly top_k below that)."""
    parties = ["Hooli", "Initech", "Globex", "Umbrella", "Vandelay"]
    return [
        ingest_text(
            case,
            f"SUPPLY AGREEMENT between Acme and {party}.\n\n5. Termination. Either party may terminate "
            f"this Supply Agreement on {30 + 15 * i} days written notice to the other party.",
            filename=f"supply-{party.lower()}.txt",
        )
        for i, party in enumerate(parties)
    ]


class FakeProvider:
    """A model provider that records each request and answers with `replies` in turn (the last one
    repeats): a dict (sent as JSON), a string, or a callable taking the request. With `error` set,
    every call raises it."""

    name = "fake"

    def __init__(self, *replies, error: Exception | None = None, model: str = "fake-1"):
        self.replies = list(replies)
        self.error = error
        self.model = model
        self.requests: list = []

    @property
    def calls(self) -> int:
        return len(self.requests)

    def generate(self, request):
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        reply = self.replies[min(len(self.requests), len(self.replies)) - 1]
        if callable(reply):
            reply = reply(request)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return Generation(
            text=text,
            provider=self.name,
            model=self.model,
            input_tokens=120,
            output_tokens=30,
            cost_estimate=0.0015,
            latency_ms=7.5,
        )


@pytest.fixture
def fake_provider(monkeypatch):
    """fake_provider(*replies, error=None) -> FakeProvider, installed as the pipeline's model."""

    def install(*replies, error=None) -> FakeProvider:
        provider = FakeProvider(*replies, error=error)
        monkeypatch.setattr("rag.pipeline.stages.generate.get_provider", lambda: provider)
        return provider

    return install


@pytest.fixture
def counted_extractive(monkeypatch):
    """The real extractive provider, wrapped to count its calls."""
    from rag.llm.extractive import ExtractiveProvider

    calls: list = []

    class Counted(ExtractiveProvider):
        def generate(self, request):
            calls.append(request)
            return super().generate(request)

    monkeypatch.setattr("rag.pipeline.stages.generate.get_provider", Counted)
    return calls
