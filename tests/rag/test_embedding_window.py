"""Passages longer than the embedding model's window (all-MiniLM-L6-v2 reads 256 word pieces).

Before #19 such a passage was stored and cited whole but embedded only as far as the model read:
its tail was invisible to semantic search. Now the chunker ends a passage where the model stops
reading, so every stored passage is embedded whole.
"""

from __future__ import annotations

import pytest

from rag import selectors
from rag.ingest import embedding, service
from rag.ingest.normalize import normalize
from rag.models import Document, DocumentStatus
from rag.retrieval.service import retrieve

pytestmark = pytest.mark.django_db

# One clause of under 1,000 characters (one passage at the default size) dense with section
# references, so it holds more word pieces than the model reads; its last sentence is about
# something nothing before it mentions.
DENSE_CLAUSE = (
    "Schedule 3, Part B, items 4(a)-(f), 6(c), 8(b)(ii) and 11(d)(iv); Exhibits C-1, C-2 and D-3. "
    "7.1 Confidential Information. Subject to Sections 7.2(a)(i)-(iv), 9.3(b) and 14.1(c)(ii), "
    'each Party (the "Recipient") shall hold the Confidential Information of the other Party '
    '(the "Discloser") in strict confidence, shall use it solely to perform its obligations under '
    "Sections 2.1, 2.4(a), 3.2(c)(i) and 5.6(b)(iii), and shall not disclose it to any third party "
    'other than its employees, officers, directors, auditors and counsel (each, a "Representative") '
    "who need to know it under Sections 3.1(a)-(c) and 4.4(d)(v). These obligations survive for "
    "five (5) years after the expiry or termination of this Agreement under Sections 12.1, "
    "12.2(a)-(d) or 12.4(b)(ii). "
)
LAST_SENTENCE = (
    "Every beehive on the licensed orchards shall be kept at least fifty metres from a public road."
)
# Other passages about orchards, roads and distances, none about beehives.
NEIGHBOURS = (
    "The Licensee shall maintain the irrigation pumps on the licensed orchards in good repair.\n\n"
    "The Grower shall fence the grazing cattle at least ten metres from the river bank.\n\n"
    "Delivery vehicles shall use the service road and keep to the speed limit posted there.\n"
)


def _word_pieces(text: str) -> int:
    return len(embedding.get_model().tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


def test_the_clause_is_one_passage_longer_than_the_model_reads():
    """The premise of the tests below: at the default size the clause would be a single passage."""
    clause = DENSE_CLAUSE + LAST_SENTENCE
    assert len(clause) <= 1000
    assert _word_pieces(clause) > embedding.get_model().max_seq_length


def test_last_sentence_of_a_long_passage_is_found_by_semantic_search(case, upload):
    long_document = upload(
        case, "orchard.txt", content=(DENSE_CLAUSE + LAST_SENTENCE).encode(), title="Orchard licence"
    ).document
    upload(case, "neighbours.txt", content=NEIGHBOURS.encode(), title="Farm rules")

    result = retrieve(
        tenant=case.tenant,
        query="How far from a public road must the beehives on the orchards be kept?",
        mode="semantic",
        top_k=1,
    )

    (best,) = result.passages
    document = Document.objects.get(pk=best.document_id)
    assert best.document_id == long_document.pk
    assert LAST_SENTENCE in document.text[best.char_start : best.char_end]


def test_every_passage_is_read_whole_by_the_model_with_exact_offsets(case, upload):
    document = upload(case, "orchard.txt", content=(DENSE_CLAUSE + LAST_SENTENCE).encode()).document
    document = selectors.document_get(tenant=case.tenant, document_id=document.pk)
    assert document.status == DocumentStatus.READY
    chunks = list(selectors.chunk_list(tenant=case.tenant, document_id=document.pk))

    assert len(chunks) >= 2  # the clause no longer fits in one passage
    for chunk in chunks:
        assert document.text[chunk.char_start : chunk.char_end] == chunk.text
        embedded = normalize(chunk.text).text
        assert _word_pieces(embedded) <= embedding.get_model().max_seq_length - 2
    assert chunks[0].char_start == 0 and chunks[-1].char_end == len(document.text)


def test_documents_indexed_under_the_old_passage_rule_are_stale_and_reindexed(case, upload, committed):
    document = upload(case, "orchard.txt", content=(DENSE_CLAUSE + LAST_SENTENCE).encode()).document
    assert Document.objects.get(pk=document.pk).embedding_model == service.index_id()
    # As indexed before #19: the model's name alone.
    Document.objects.filter(pk=document.pk).update(embedding_model=embedding.model_id())

    stale = selectors.document_list_stale(tenant=case.tenant, embedding_model=service.index_id())
    assert list(stale) == [document]
    with committed():
        assert service.tenant_reindex(tenant=case.tenant, stale_only=True) == 1
    assert Document.objects.get(pk=document.pk).embedding_model == service.index_id()
