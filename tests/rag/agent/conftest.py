"""Agentic-mode fixtures: the pipeline's real corpus (real ingestion and embeddings) plus two
contracts told apart by year and party metadata, and the same texts in another tenant."""

import datetime

import pytest

from rag import services
from tests.rag.llm.fake_claude import claude, start_server  # noqa: F401 (the fake Messages API)
from tests.rag.pipeline.conftest import (  # noqa: F401
    LEASE,
    LEASE_TITLE,
    MSA,
    MSA_TITLE,
    _isolated_answer_cache,
    corpus,
    fake_provider,
    ingest_text,
    look_alikes,
)

SUPPLY_2022 = (
    "SUPPLY AGREEMENT between Hooli Inc and Pied Piper LLC.\n\n"
    "5. Termination. Either party may terminate this Supply Agreement on sixty (60) days notice."
)
SUPPLY_2023 = (
    "SUPPLY AGREEMENT between Hooli Inc and Raviga Capital LLC.\n\n"
    "5. Termination. Either party may terminate this Supply Agreement on ten (10) days notice."
)


@pytest.fixture
def contracts(case, ingest_text):  # noqa: F811
    """Two look-alike supply contracts: 2022 with Pied Piper, 2023 with Raviga."""
    return {
        2022: ingest_text(
            case,
            SUPPLY_2022,
            filename="supply-2022.txt",
            title="Hooli Pied Piper Supply",
            doc_type="contract",
            metadata={"year": 2022, "party": "Pied Piper"},
        ),
        2023: ingest_text(
            case,
            SUPPLY_2023,
            filename="supply-2023.txt",
            title="Hooli Raviga Supply",
            doc_type="contract",
            document_date=datetime.date(2023, 3, 1),
            metadata={"party": "Raviga"},
        ),
    }


@pytest.fixture
def other_corpus(other_tenant, ingest_text):  # noqa: F811
    """The same texts in another tenant: nothing of it may ever come back to `tenant`."""
    case = services.case_create(tenant=other_tenant, name="Look-alike matter")
    return [
        ingest_text(case, MSA, filename="acme-globex-msa.txt", title=MSA_TITLE),
        ingest_text(case, LEASE, filename="initech-umbrella-lease.txt", title=LEASE_TITLE),
        ingest_text(
            case,
            SUPPLY_2023,
            filename="supply-2023.txt",
            title="Hooli Raviga Supply",
            metadata={"year": 2023, "party": "Raviga"},
        ),
    ]
