"""The extractive provider's comparison (rag.llm.compare): a table, one row per document in the order
asked, each quoting only its own document's best clause with its citation marker; a document with
no sources says its "not found" text; the quotes pass verification whatever the titles hold."""

import json

from rag.llm.base import ComparedDocument, Comparison, Source
from rag.llm.compare import comparison_reply
from rag.pipeline.postprocess import process
from rag.pipeline.verify import verify

ALPHA = "Either party may terminate this Agreement on ninety (90) days' written notice."
BETA = "The Licensor may terminate this Agreement immediately if the Licensee fails to pay any fee when due."


def _source(citation_id: str, document_id: int, title: str, clause: str, score: float) -> Source:
    text = f"12. Termination.\n\n{clause} Notices under this clause are given in writing.\n\n13. Notices."
    return Source(
        citation_id=citation_id, document_id=document_id, title=title, page=4, text=text,
        answer_score=score, focus=clause,
    )  # fmt: skip


def _table(topic: str, *documents: tuple) -> Comparison:
    return Comparison(topic, tuple(ComparedDocument(*document) for document in documents))


def _checked(reply: dict, sources) -> None:
    processed = process(json.dumps(reply), sources, follow_up_count=0)
    verification = verify(processed, sources)
    assert not verification.hallucination_detected, verification
    assert [c.token for c in processed.citations] == [c["id"] for c in reply["citations"]]


def test_each_row_quotes_its_own_documents_clause_in_the_order_asked():
    # The Beta source scores higher and comes first: it still goes in Beta's row only.
    sources = (_source("1", 20, "Beta License", BETA, 0.97), _source("2", 10, "Alpha MSA", ALPHA, 0.6))
    comparison = _table("Termination rights", (10, "Alpha MSA"), (20, "Beta License"))
    reply = comparison_reply(comparison, sources)
    assert reply["answer"].split("\n") == [
        "Termination rights in 2 documents, side by side:",
        "",
        "| Document | Termination rights |",
        "| --- | --- |",
        f'| Alpha MSA | "{ALPHA} Notices under this clause are given in writing." [2] |',
        f'| Beta License | "{BETA} Notices under this clause are given in writing." [1] |',
    ]
    assert {c["id"]: c["doc_id"] for c in reply["citations"]} == {"2": "10", "1": "20"}
    _checked(reply, sources)


def test_a_document_without_sources_says_so_in_its_row_and_borrows_nothing():
    sources = (_source("1", 10, "Alpha MSA", ALPHA, 0.9),)
    missing = "No termination provision found in Gamma Lease."
    comparison = Comparison(
        "Termination rights",
        (ComparedDocument(10, "Alpha MSA"), ComparedDocument(30, "Gamma Lease", missing)),
    )
    reply = comparison_reply(comparison, sources)
    assert reply["answer"].split("\n")[-1] == f"| Gamma Lease | {missing} |"
    assert [c["doc_id"] for c in reply["citations"]] == ["10"]
    _checked(reply, sources)


def test_nothing_found_anywhere_is_i_dont_know():
    comparison = Comparison(
        "Termination rights", (ComparedDocument(10, "A", "No termination provision found in A."),)
    )
    assert comparison_reply(comparison, ())["answer"] == "I don't know."


def test_a_pipe_in_a_quote_or_quote_marks_in_a_title_keep_the_table_and_its_quotes_verified():
    clause = "The Supplier shall deliver the Goods DDP | Incoterms 2020 to the Buyer's warehouse."
    sources = (
        _source("1", 10, 'The "Hydraspin" | Contoso Agreement', clause, 0.9),
        _source("2", 20, "Alpha MSA", ALPHA, 0.8),
    )
    comparison = Comparison(
        "Delivery",
        (ComparedDocument(10, 'The "Hydraspin" | Contoso Agreement'), ComparedDocument(20, "Alpha MSA")),
    )
    reply = comparison_reply(comparison, sources)
    rows = reply["answer"].split("\n")[4:]
    assert (
        rows[0]
        == "| The 'Hydraspin' / Contoso Agreement | \"The Supplier shall deliver the Goods DDP …\" [1] |"
    )
    assert all(row.count("|") == 3 for row in rows)  # every row is two cells
    _checked(reply, sources)


def test_a_second_window_of_a_document_is_quoted_when_nearly_as_good():
    second = "The Licensee may terminate this Agreement on thirty (30) days' notice if the Licensor breaches."
    sources = (
        _source("1", 20, "Beta License", BETA, 0.9),
        _source("2", 20, "Beta License", second, 0.85),
        _source("3", 20, "Beta License", "The fees are set out in Schedule B.", 0.2),
    )
    reply = comparison_reply(
        Comparison("Termination rights", (ComparedDocument(20, "Beta License"),)), sources
    )
    row = reply["answer"].split("\n")[-1]
    assert row.count('" [') == 2 and "[1]" in row and "[2]" in row and "[3]" not in row
    _checked(reply, sources)
