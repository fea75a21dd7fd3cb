"""Fixtures for the security suite: two look-alike tenants built once for the whole folder.

Both tenants ("alpha" and "bravo") have a case with the same name, a document with a similar
title uploaded and ingested through the REST API, a custom prompt template, a sync question in
the audit trail and query history, an async job, and API keys of every role. Only a tenant-specific
marker word (in the document text and the title's reference) and the ids tell them apart, so a
leak shows as the other tenant's marker, slug, ids or names in a response body.

The data is committed once (package scope) instead of per test, so the suite ingests a handful of
small documents in total; each test still runs inside its own rolled-back transaction (`db`), so
what a test writes disappears afterwards. Every run uses fresh slugs and markers (a random suffix),
so a reused test database or a shared Redis never mixes runs.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from rag.models import Document, DocumentStatus
from rag.review.tables.models import ReviewCell
from tenants import services as tenant_services
from tenants.models import Invitation, Role
from tests.factories import MembershipFactory, TenantFactory, UserFactory

QUESTION = "What is the project code name in the Master Supply Agreement?"
CASE_NAME = "Acme v. Globex"  # both tenants have a case of this name


def supply_agreement(marker: str) -> str:
    """The look-alike contract both tenants hold; only `marker` differs."""
    return (
        "MASTER SUPPLY AGREEMENT between Acme Robotics Corp and Globex Logistics Inc.\n\n"
        "1. Supply. Globex shall deliver the components listed in Schedule A every month.\n\n"
        f"2. Project. The project code name is {marker}, and it is confidential.\n\n"
        "3. Termination. Either party may terminate this Agreement on ninety (90) days written notice.\n\n"
        "4. Governing Law. This Agreement shall be governed by the laws of the State of Delaware."
    )


@dataclass
class TenantData:
    """One tenant of the two and everything the suite made for it."""

    label: str  # "alpha" or "bravo"
    tenant: object
    marker: str
    keys: dict[str, str]  # role -> raw API key
    key_ids: dict[str, int]
    key_prefixes: list[str]
    user: object  # a member who logs in to the web pages
    case_id: int = 0
    only_case_id: int = 0  # a case whose name only this tenant has
    only_case_name: str = ""
    document_id: int = 0
    document_title: str = ""
    template_id: str = ""
    request_id: str = ""  # a sync question: audit row and query history of its member key
    job_id: str = ""
    extra: dict = field(default_factory=dict)

    def client(self, role: str = Role.MEMBER) -> APIClient:
        """An API client authenticating with this tenant's key of `role`."""
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Api-Key {self.keys[role]}")
        return client

    def secrets(self) -> list[str]:
        """Strings that only this tenant's data contains: none may reach the other tenant."""
        return [
            self.marker,
            self.tenant.slug,
            self.tenant.name,
            self.only_case_name,
            self.document_title,
            self.template_id,
            self.request_id,
            self.job_id,
            self.user.username,
            self.extra.get("invitee", ""),
            *self.key_prefixes,
        ]

    def ids(self) -> dict[str, set]:
        """This tenant's object ids by the JSON keys that carry such ids."""
        documents = {self.document_id, *self.extra.get("document_ids", ())}
        return {
            "document": documents,
            "case": {self.case_id, self.only_case_id},
            "api_key": set(self.key_ids.values()),
        }


def upload(client: APIClient, case_id: int, filename: str, content: bytes, **fields):
    """POST one file into a case through the API; the response."""
    data = {"files": [SimpleUploadedFile(filename, content)]}
    for name, value in fields.items():
        data[name] = json.dumps(value) if isinstance(value, dict) else value
    return client.post(f"/api/v1/rag/cases/{case_id}/documents", data, format="multipart")


def upload_ready(client: APIClient, case_id: int, filename: str, content: bytes, **fields) -> Document:
    """Upload through the API and return the document, which ingestion (eager here) made ready."""
    response = upload(client, case_id, filename, content, **fields)
    assert response.status_code == 201, response.content
    document = Document.objects.get(pk=response.json()["documents"][0]["id"])
    assert document.status == DocumentStatus.READY, (document.error_type, document.error_message)
    return document


def _make_tenant(label: str, suffix: str) -> TenantData:
    tenant = TenantFactory(slug=f"sec-{label}-{suffix}", name=f"{label.title()} Law {suffix}")
    keys, key_ids, prefixes = {}, {}, []
    for role in (Role.VIEWER, Role.MEMBER, Role.ADMIN):
        api_key, raw = tenant_services.api_key_create(
            tenant=tenant, name=f"{label} {role}", role=role, created_via="test"
        )
        keys[role], key_ids[role] = raw, api_key.pk
        prefixes.append(api_key.prefix)
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    user.username = f"{label}-user-{suffix}"
    user.save(update_fields=["username"])
    # A pending invitation of this firm, to an account outside it (the person routes' sweep).
    invitee = UserFactory(username=f"{label}-invitee-{suffix}")
    invitation = Invitation.objects.create(
        tenant=tenant,
        identifier=invitee.username,
        user=invitee,
        email=invitee.email,
        token_hash=Invitation.hash_token(uuid.uuid4().hex),
        expires_at=timezone.now() + timedelta(days=7),
    )
    return TenantData(
        label=label,
        tenant=tenant,
        marker=f"{label.upper()}{suffix.upper()}",
        keys=keys,
        key_ids=key_ids,
        key_prefixes=prefixes,
        user=user,
        extra={"invitation_id": invitation.pk, "invitee": invitee.username},
    )


def _populate(data: TenantData, suffix: str) -> None:
    """Cases, a document, a template, a question and a job, all through the API."""
    member, admin = data.client(Role.MEMBER), data.client(Role.ADMIN)
    response = member.post("/api/v1/rag/cases", {"name": CASE_NAME}, format="json")
    assert response.status_code == 201, response.content
    data.case_id = response.json()["id"]
    data.only_case_name = f"{data.label.title()} Only Matter {suffix}"
    response = member.post("/api/v1/rag/cases", {"name": data.only_case_name}, format="json")
    assert response.status_code == 201, response.content
    data.only_case_id = response.json()["id"]

    data.document_title = f"Master Supply Agreement (ref {data.marker})"
    document = upload_ready(
        member,
        data.case_id,
        "master-supply-agreement.txt",
        supply_agreement(data.marker).encode(),
        title=data.document_title,
        metadata={"party": "Acme Robotics Corp", "ref": data.marker},
    )
    data.document_id = document.pk

    data.template_id = f"{data.label}_tpl_{suffix}"
    response = admin.post(
        "/api/v1/rag/admin/templates",
        {
            "template_id": data.template_id,
            "name": f"{data.label.title()} template {suffix}",
            "system_prompt": f"You are {data.label}'s research assistant ({data.marker}).",
            "user_prompt": "Context: {context}\n\nQuestion: {question}\n\n{instructions}",
        },
        format="json",
    )
    assert response.status_code == 201, response.content

    # A review table of the case (filled at once: tasks are eager here) and a saved column set.
    columns = [{"key": "governing_law"}, {"question": "What is the project code name?"}]
    response = member.post(
        f"/api/v1/rag/cases/{data.case_id}/review-tables", {"columns": columns}, format="json"
    )
    assert response.status_code == 202, response.content
    data.extra["table_id"] = response.json()["id"]
    data.extra["cell_id"] = (
        ReviewCell.objects.filter(table_id=data.extra["table_id"]).values_list("pk").first()[0]
    )
    response = admin.post(
        "/api/v1/rag/review-templates", {"name": f"{data.label} set", "columns": columns}, format="json"
    )
    assert response.status_code == 201, response.content
    data.extra["review_template_id"] = response.json()["id"]

    data.extra["conversation_id"] = f"conv_{data.label}_{data.marker}"
    response = member.post(
        "/api/v1/rag/query",
        {"query": QUESTION, "use_cache": False, "conversation_id": data.extra["conversation_id"]},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert data.marker in (response.json()["answer"] or ""), response.json()
    data.request_id = response.json()["request_id"]

    response = member.post("/api/v1/rag/query", {"query": QUESTION, "mode": "async"}, format="json")
    assert response.status_code in (200, 202), response.content
    data.job_id = response.json()["job_id"]


@pytest.fixture(scope="package")
def world(django_db_setup, django_db_blocker, tmp_path_factory):
    """{"alpha": TenantData, "bravo": TenantData}, committed once for the whole folder.

    Files go to a MEDIA_ROOT of the package's own and answers to a cache key prefix of its own,
    overridden for as long as the folder's tests run."""
    suffix = uuid.uuid4().hex[:6]
    media_root = tmp_path_factory.mktemp("security-media")
    caches = {alias: dict(config) for alias, config in settings.CACHES.items()}
    prefix = caches["rag"]["KEY_PREFIX"] = f"lexrag-test:rag:security-{suffix}"
    overrides = override_settings(MEDIA_ROOT=media_root, CACHES=caches)
    overrides.enable()
    tenants = {}
    try:
        with django_db_blocker.unblock():
            for label in ("alpha", "bravo"):
                tenants[label] = _make_tenant(label, suffix)
                _populate(tenants[label], suffix)
        tenants["media_root"] = media_root
        tenants["caches"] = caches
        yield tenants
    finally:
        overrides.disable()
        with django_db_blocker.unblock():
            for label in ("alpha", "bravo"):
                if label in tenants:
                    _delete_tenant(tenants[label].tenant)
        if caches["rag"]["BACKEND"] == "django_redis.cache.RedisCache":
            client = redis.Redis.from_url(caches["rag"]["LOCATION"])
            keys = list(client.scan_iter(match=f"{prefix}:*"))
            if keys:
                client.delete(*keys)


def _delete_tenant(tenant) -> None:
    """Best effort: the audit trail is append-only, so a tenant with audit rows may stay behind
    (harmless: every run has its own slugs)."""
    from django.db import DatabaseError, transaction

    try:
        with transaction.atomic():
            tenant.delete()
    except DatabaseError:
        pass


@pytest.fixture
def alpha(world, db) -> TenantData:
    return world["alpha"]


@pytest.fixture
def bravo(world, db) -> TenantData:
    return world["bravo"]


def ingested_contract(world, django_db_blocker, case_name: str, filename: str, text: str) -> Document:
    """`text` uploaded by alpha's member key into a new case and ingested for real (module fixtures
    of planted-instruction tests); alpha's world remembers the document."""
    member = world["alpha"].client(Role.MEMBER)
    with django_db_blocker.unblock():
        response = member.post("/api/v1/rag/cases", {"name": case_name}, format="json")
        assert response.status_code == 201, response.content
        document = upload_ready(member, response.json()["id"], filename, text.encode())
    world["alpha"].extra.setdefault("document_ids", set()).add(document.pk)
    return document


def body_text(response) -> str:
    """A response's body as text (JSON, HTML or Prometheus text)."""
    content = getattr(response, "content", b"")
    if not content and hasattr(response, "streaming_content"):
        content = b"".join(response.streaming_content)
    return content.decode("utf-8", errors="replace")


def leaked(text: str, owner: TenantData) -> list[str]:
    """Which of `owner`'s secrets appear in `text` (case-insensitive)."""
    folded = text.casefold()
    return [secret for secret in owner.secrets() if secret and secret.casefold() in folded]


_ID_KEYS = {
    "document": {"document_id", "document_ids", "documents_retrieved", "documents_used"},
    "case": {"case_id", "case_ids"},
}


def foreign_ids(payload, owner: TenantData) -> list[tuple[str, object]]:
    """(key, value) pairs in a JSON payload whose key names an object id of `owner`'s kind and
    whose value is one of `owner`'s ids, e.g. ("document_id", 17) or ("doc_id", "doc_17")."""
    ids = owner.ids()
    found = []

    def visit(node):
        if isinstance(node, dict):
            for key, value in node.items():
                for kind, keys in _ID_KEYS.items():
                    if key in keys:
                        values = value if isinstance(value, list) else [value]
                        found.extend((key, v) for v in values if v in ids[kind])
                document_ids = {str(i) for i in ids["document"]}
                if key == "doc_id" and str(value).removeprefix("doc_").split("_")[0] in document_ids:
                    found.append((key, value))
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(payload)
    return found
