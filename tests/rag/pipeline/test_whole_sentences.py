"""A passage cut inside a long sentence opens with a fragment of it; when that fragment is the
answer, the citation and the quote start where the sentence starts (issue #18, readable answers)."""

import pytest

from rag.models import Chunk
from rag.pipeline.run import run_query
from rag.retrieval.service import sentence_before

OPENING = "ENDORSEMENT AGREEMENT between Affinity Group Inc. and Holiday RV Superstores Inc.\n\n"
WITHDRAWAL = (
    "In the event of such withdrawal of the Endorsement by AGI for any reason whatsoever, the Company "
    "agrees forthwith to take such action as AGI may reasonably request to publicly evidence that "
    "the Endorsement has been withdrawn, and the Company agrees not to hold the Business out to "
    "customers, suppliers or the public as having the Endorsement after the withdrawal."
)


@pytest.mark.django_db
def test_an_answer_opening_its_passage_mid_sentence_is_quoted_from_the_sentence_start(
    tenant, case, ingest_text, settings
):
    settings.RAG_CHUNK_SIZE, settings.RAG_CHUNK_OVERLAP = 200, 20
    text = OPENING + "1. Fees. The Company shall pay AGI a fee of $10,000 per year.\n\n" + WITHDRAWAL
    document = ingest_text(case, text, filename="endorsement.txt", title="Good Sam Endorsement")
    start = text.index(WITHDRAWAL)
    # The long sentence is cut: a passage opens inside it, past "the Company agrees".
    chunks = Chunk.objects.filter(document=document).order_by("index")
    assert any(start < chunk.char_start < start + len(WITHDRAWAL) for chunk in chunks)

    result = run_query(
        tenant=tenant,
        question="Must the company stop holding the business out as having the endorsement?",
        use_cache=False,
    ).result
    first = result["citations"][0]
    assert first["document_id"] == document.pk
    assert first["char_start"] == start
    assert document.text[first["char_start"] : first["char_end"]] == first["snippet"]
    # The passage the quote is read from starts there too, so the quote is verified against it.
    assert not result["flags"]["invalid_citations"] and not result["flags"]["hallucination_detected"]
    assert first["snippet"].startswith("In the event of such withdrawal")
    assert '"In the event of such withdrawal' in result["answer"]


def test_the_sentence_a_passage_opens_inside_is_found_in_the_passage_before():
    text = "First clause ends here. The second clause starts here and runs on past the cut."
    cut = text.index("runs")
    assert sentence_before(text[:cut], 0, text[cut:], cut) == "The second clause starts here and "
    # A passage opening on a sentence's start needs nothing before it.
    at_sentence = text.index("The second")
    assert sentence_before(text[:at_sentence], 0, text[at_sentence:], at_sentence) == ""
    # A sentence starting further back than the look-back is left as it is.
    long = "x " * 400 + "and the rest."
    assert sentence_before("Start. " + long[:700], 100, long[700:], 807) == ""


@pytest.mark.django_db
def test_a_quote_cut_short_is_marked_and_its_citation_spans_what_was_quoted(tenant, case, ingest_text):
    clause = (
        "Licensee shall pay royalties on "
        + ", ".join(f"net sales of product line {n} in territory {n}" for n in range(1, 30))
        + "."
    )
    document = ingest_text(case, OPENING + clause, filename="royalties.txt", title="Royalty Agreement")
    result = run_query(
        tenant=tenant, question="On what must the licensee pay royalties?", use_cache=False
    ).result
    first = result["citations"][0]
    assert first["document_id"] == document.pk
    assert first["snippet"].startswith("Licensee shall pay royalties on")
    assert document.text[first["char_start"] : first["char_end"]] == first["snippet"]
    assert first["char_end"] < len(OPENING) + len(clause)  # cut short ...
    assert f'{first["snippet"]} \u2026"' in result["answer"]  # ... and the answer says so
    assert not result["flags"]["invalid_citations"] and not result["flags"]["hallucination_detected"]
