"""Routing for a reader who may not see every document: what hidden documents say (a confidential
one they may not read, one behind a wall) weighs in no statistic that chooses between the visible
ones (issue #33: no side channel through the reference routing)."""

from __future__ import annotations

import pytest

from rag import selectors
from rag.ingest import service as ingest
from rag.models import Sensitivity
from rag.retrieval.filters import SearchFilters
from rag.retrieval.routing import route

SUPPLY = (
    "SUPPLY AGREEMENT between Acme Robotics Corp and Zephyr Logistics Ltd.\n\n"
    "1. Term. This Agreement runs for three years from the Effective Date."
)
DISTRIBUTION = (
    "DISTRIBUTION AGREEMENT between Acme Robotics Corp and Orion Traders Inc.\n\n"
    "1. Term. This Agreement runs for five years from the Effective Date."
)
SETTLEMENT = (
    "SETTLEMENT AGREEMENT between Zephyr Logistics Ltd and Acme Robotics Corp, Zephyr Holdings and "
    "Zephyr Freight.\n\n1. Payment. Acme shall pay Zephyr the sum of $2,000,000."
)
QUESTIONS = [
    "In the agreement between Acme and Zephyr, how long is the term?",
    "What is the term of the Zephyr Logistics agreement with Acme Robotics?",
    "In the Acme Orion agreement, what is the term?",
]


def _routes(tenant) -> list:
    visibility = selectors.reader_visibility(tenant=tenant, user_id=None, reads_all_confidential=False)
    filters = SearchFilters().seen_by(visibility)
    version = selectors.index_version_get(tenant=tenant)
    return [
        [
            (d.document_id, round(d.score, 6))
            for d in route(tenant=tenant, query=q, index_version=version, filters=filters).documents
        ]
        for q in QUESTIONS
    ]


@pytest.mark.django_db
def test_a_hidden_document_changes_nothing_in_how_visible_ones_are_routed(tenant, case, ingest_text):
    supply = ingest_text(case, SUPPLY, filename="supply.txt")
    ingest_text(case, DISTRIBUTION, filename="distribution.txt")
    hidden = ingest_text(case, SETTLEMENT, filename="settlement.txt", sensitivity=Sensitivity.CONFIDENTIAL)
    with_hidden = _routes(tenant)
    assert with_hidden[0] and with_hidden[0][0][0] == supply.pk  # control: the reference routes
    assert all(hidden.pk not in [pk for pk, _ in routed] for routed in with_hidden)

    ingest.document_delete(tenant=tenant, document_id=hidden.pk)
    assert _routes(tenant) == with_hidden
