"""Prepare a private stack's database: `python -m tests.reliability.seed` (env: DATABASE_URL, …).

Migrates, then creates a tenant with a viewer API key, a case and one ingested contract, and
prints them as one JSON line for the fault tests.
"""

from __future__ import annotations

import json
import os

import django


def main() -> None:
    """Migrate and seed; print {"api_key", "tenant_id", "case_id", "document_id"}."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.reliability.settings")
    django.setup()
    from django.core.management import call_command

    from tenants import services as tenant_services
    from tenants.models import Role
    from tests.rag.pipeline.conftest import ingest_msa

    call_command("migrate", verbosity=0, interactive=False)
    tenant = tenant_services.tenant_create(slug="fault-firm", name="Fault Firm LLP")
    _, api_key = tenant_services.api_key_create(
        tenant=tenant, name="fault tests", role=Role.MEMBER, created_via="test"
    )
    case, document = ingest_msa(tenant, case_name="Fault matter")
    seed = {
        "api_key": api_key,
        "tenant_id": tenant.pk,
        "case_id": case.pk,
        "document_id": document.pk,
    }
    print(json.dumps(seed))


if __name__ == "__main__":
    main()
