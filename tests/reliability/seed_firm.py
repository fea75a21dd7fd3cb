"""Add a firm to a private stack's database: `python -m tests.reliability.seed_firm <slug>`.

Creates the tenant with a member API key and a case holding the ingested MSA (so its questions
have an answer), and prints {"api_key", "tenant_id", "case_id"} as one JSON line.
"""

from __future__ import annotations

import json
import os
import sys

import django


def main(slug: str) -> None:
    """Seed the firm `slug` (see the module docstring)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.reliability.settings")
    django.setup()
    from tenants import services as tenant_services
    from tenants.models import Role
    from tests.rag.pipeline.conftest import ingest_msa

    tenant = tenant_services.tenant_create(slug=slug, name=f"{slug.title()} LLP")
    _, api_key = tenant_services.api_key_create(
        tenant=tenant, name="fairness tests", role=Role.MEMBER, created_via="test"
    )
    case, _ = ingest_msa(tenant, case_name=f"{slug} matter")
    print(json.dumps({"api_key": api_key, "tenant_id": tenant.pk, "case_id": case.pk}))


if __name__ == "__main__":
    main(sys.argv[1])
