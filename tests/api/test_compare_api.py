"""POST /api/v1/rag/query with a comparison (issue #34, item 3): the answer's table cites each
document's exact passage (document, page, offsets into its text), sync and streamed alike, and a
confidential document the key's role may not read is a name not found."""

from __future__ import annotations

import json

import pytest

from rag.models import Document
from tests.rag.review.contracts import make_confidential
from tests.rag.review.test_compare import (
    ALFA_TERMINATION,
    HYDRASPIN_TERMINATION,
    TERMINATION_QUESTION,
    cited_by_row,
    contracts,  # noqa: F401  (fixture)
    table_rows,
)

pytestmark = pytest.mark.django_db

QUERY = "/api/v1/rag/query"


def ask(client, **body):
    return client.post(QUERY, {"query": TERMINATION_QUESTION, **body}, format="json")


def test_the_tables_citations_point_at_each_documents_exact_passage(contracts, viewer_client):  # noqa: F811
    _, documents = contracts
    body = ask(viewer_client).json()
    assert cited_by_row(body) == {title: {title} for title in table_rows(body["answer"])}
    quoted = {}
    for citation in body["citations"]:
        text = Document.objects.get(pk=citation["document_id"]).text
        assert text[citation["char_start"] : citation["char_end"]] == citation["snippet"]
        assert citation["page"] == 1 and citation["chunk_id"]
        quoted[citation["document_id"]] = citation["snippet"]
    assert quoted == {
        documents["Alfa Aesar Supply Agreement"].pk: ALFA_TERMINATION,
        documents["Hydraspin Distribution Agreement"].pk: HYDRASPIN_TERMINATION,
    }


def test_the_streamed_result_is_the_sync_table(contracts, viewer_client):  # noqa: F811
    sync = ask(viewer_client, use_cache=False).json()
    response = ask(viewer_client, stream=True, use_cache=False)
    blocks = b"".join(response.streaming_content).decode().strip().split("\n\n")
    events = [dict(line.split(": ", 1) for line in block.splitlines()) for block in blocks]
    result = json.loads(events[-1]["data"])
    assert events[-1]["event"] == "result"
    assert result["answer"] == sync["answer"] and result["citations"] == sync["citations"]


def test_a_confidential_document_the_key_may_not_read_is_a_name_not_found(
    contracts,  # noqa: F811
    viewer_client,
    admin_client,
):
    _, documents = contracts
    make_confidential(documents["Hydraspin Distribution Agreement"])
    viewer = ask(viewer_client, use_cache=False).json()
    assert viewer["answer"] is None and viewer["citations"] == []
    assert viewer["message"].startswith("No document in scope matches \u201cHydraspin agreement\u201d")
    assert "Hydraspin Distribution" not in json.dumps(viewer)
    admin = ask(admin_client, use_cache=False).json()
    assert set(table_rows(admin["answer"])) == {
        "Alfa Aesar Supply Agreement",
        "Hydraspin Distribution Agreement",
    }
