"""The selectors that say what a reader may see are the tenant's own: another firm's confidential
documents, walled cases and audit rows never enter one firm's visibility (issue #33)."""

from __future__ import annotations

import pytest

from rag import selectors
from rag import services as case_services
from rag.models import AuditLog, Document, Sensitivity
from rag.retrieval.filters import SearchFilters
from tenants.models import Role
from tests.factories import MembershipFactory


@pytest.mark.django_db
def test_visibility_selectors_never_reach_another_tenant(tenant, other_tenant, case, other_case, ingest_text):
    mine = ingest_text(
        case, "Our settlement pays four million.", filename="ours.txt", sensitivity=Sensitivity.CONFIDENTIAL
    )
    theirs = ingest_text(
        other_case,
        "Their settlement pays nine million.",
        filename="theirs.txt",
        sensitivity=Sensitivity.CONFIDENTIAL,
    )
    stranger = MembershipFactory(tenant=other_tenant, role=Role.MEMBER).user
    case_services.case_wall_set(tenant=other_tenant, case_id=other_case.pk, walled=True, members=[stranger])

    visibility = selectors.reader_visibility(tenant=tenant, user_id=None, reads_all_confidential=False)
    assert visibility.withheld == {mine.pk} and visibility.walled_case_ids == frozenset()
    assert set(selectors.document_ids_visible(tenant=tenant, visibility=visibility)) == set()
    assert selectors.walled_case_ids(tenant=tenant, user_id=None) == frozenset()
    assert selectors.walled_case_ids(tenant=other_tenant, user_id=None) == {other_case.pk}
    filters = SearchFilters(document_ids=(mine.pk, theirs.pk)).seen_by(visibility)
    assert selectors.withheld_within(tenant=tenant, filters=filters) == {mine.pk}

    # Another firm's walled case hides none of this firm's audit rows, and theirs are never listed.
    AuditLog.objects.create(
        tenant=tenant,
        request_id="req_ours",
        query="q",
        status="answered",
        latency_ms=1.0,
        documents_retrieved=[mine.pk],
        documents_used=[mine.pk],
    )
    AuditLog.objects.create(
        tenant=other_tenant,
        request_id="req_theirs",
        query="q",
        status="answered",
        latency_ms=1.0,
        documents_retrieved=[theirs.pk],
        documents_used=[theirs.pk],
    )
    rows = selectors.audit_search(tenant=tenant, hidden_cases={other_case.pk})
    assert list(rows.values_list("request_id", flat=True)) == ["req_ours"]
    assert Document.objects.filter(pk=theirs.pk).exists()
