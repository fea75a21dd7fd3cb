"""Fixtures for pipeline tests: a small real corpus (real ingestion and embeddings), an isolated
answer cache per test, and fake model providers."""

from __future__ import annotations

import json
import uuid

import pytest
import redis

from rag.llm import Generation
from rag.models import Document, DocumentStatus

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
