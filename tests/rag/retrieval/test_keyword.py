"""Keyword search against real PostgreSQL full-text search: words, phrases, exclusions, legal
identifiers, scores, and queries with nothing to search for."""

from __future__ import annotations

import numpy as np
import pytest

from rag.models import Chunk
from rag.retrieval import keyword, keyword_search, term_stats
from rag.retrieval.identifiers import extract_identifiers
from rag.retrieval.keyword import parse_query

from .conftest import CLAUSES, add_chunks, make_document

pytestmark = pytest.mark.django_db


def _ids(hits) -> list[int]:
    return [hit.document_id for hit in hits]


@pytest.fixture
def clauses(case, random_unit):
    """One-chunk documents numbered like contract clauses, with near-miss numbers as decoys
    (rows written directly: keyword search reads the text and its generated tsvector only)."""
    documents = {}
    for name, text in CLAUSES.items():
        documents[name] = make_document(case, name)
        add_chunks(documents[name], [random_unit()], texts=[text])
    return documents


def test_words_rank_the_chunk_matching_more_of_them_first(case, upload):
    upload(case, "contract.docx")
    hits = keyword_search(tenant=case.tenant, query="which state law governs disputes", k=3)
    assert hits
    best = Chunk.objects.get(pk=hits[0].chunk_id)
    assert "State of Colorado" in best.text
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(0 < h.score <= 1 and h.keyword_score == h.score and h.similarity is None for h in hits)


def test_quoted_phrases_must_match_as_phrases(case, upload):
    document = upload(case, "contract.docx").document
    hits = keyword_search(tenant=case.tenant, query='"conflicts of law principles"', k=5)
    assert len(hits) == 1 and hits[0].document_id == document.pk
    assert "conflicts of law principles" in Chunk.objects.get(pk=hits[0].chunk_id).text
    assert keyword_search(tenant=case.tenant, query='"principles of law conflicts"', k=5) == []


def test_excluded_words_remove_chunks(case, clauses):
    with_all = keyword_search(tenant=case.tenant, query="Section Notices", k=10)
    without = keyword_search(tenant=case.tenant, query="Section -notices", k=10)
    assert clauses["notices"].pk in _ids(with_all)
    assert clauses["notices"].pk not in _ids(without) and without


def test_section_number_ranks_the_chunk_containing_it_first(case, clauses):
    hits = keyword_search(tenant=case.tenant, query="Section 10.2", k=5)
    assert _ids(hits)[0] == clauses["payment"].pk
    # "10.25" and "110.2" are other sections.
    assert clauses["notices"].pk not in _ids(hits)


def test_bare_section_numbers_need_their_label(case, clauses):
    hits = keyword_search(tenant=case.tenant, query="Section 10", k=10)
    assert _ids(hits)[0] == clauses["termination"].pk
    # Subsections belong to Section 10 ("10.2 Payment" as a heading, "Section 10.25"); "10 days"
    # and "Section 110.2" do not.
    assert set(_ids(hits)) == {clauses["termination"].pk, clauses["payment"].pk, clauses["notices"].pk}
    assert _ids(keyword_search(tenant=case.tenant, query="section 3", k=10)) == [clauses["termination"].pk]


def test_section_sign_identifiers_match_exactly_with_any_dash(case, clauses):
    hits = keyword_search(tenant=case.tenant, query="\u00a7 2-207", k=10)
    assert set(_ids(hits)) == {clauses["ucc"].pk, clauses["ucc_dash"].pk}
    assert clauses["decoy"].pk not in _ids(keyword_search(tenant=case.tenant, query="UCC \u00a7 2-207", k=10))


def test_the_contract_fixture_clause_on_2_207_is_found(case, upload):
    document = upload(case, "contract.txt").document
    hits = keyword_search(tenant=case.tenant, query="\u00a7 2-207 acceptance", k=3)
    assert hits and hits[0].document_id == document.pk
    assert "\u00a7 2-207" in Chunk.objects.get(pk=hits[0].chunk_id).text


def test_rules_and_case_citations_match_exactly(case, clauses):
    assert _ids(keyword_search(tenant=case.tenant, query="Rule 12(b)(6)", k=10)) == [clauses["motion"].pk]
    assert _ids(keyword_search(tenant=case.tenant, query="123 F.3d 456", k=10)) == [clauses["motion"].pk]
    assert _ids(keyword_search(tenant=case.tenant, query="123 F. 3d 457", k=10)) == [clauses["other_cite"].pk]


@pytest.mark.parametrize("query", ["", "   ", "the of and", '"to be"', "-delivery", "or"])
def test_queries_with_nothing_to_search_return_nothing(case, clauses, query):
    assert keyword_search(tenant=case.tenant, query=query, k=5) == []


def test_k_is_honoured(case, clauses):
    hits = keyword_search(tenant=case.tenant, query="section delivery court", k=2)
    assert len(hits) == 2


def test_query_parsing_separates_phrases_identifiers_words_and_exclusions():
    parsed = parse_query('"battle of the forms" UCC § 2-207 -lease acceptance Acceptance')
    assert parsed.phrases == ["battle of the forms"]
    assert [i.terms for i in parsed.identifiers] == ["2-207"]
    assert parsed.words == ["ucc", "acceptance"]
    assert parsed.negated == ["lease"]


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("Section 10.2", ["10.2"]),
        ("sec. 4(a) and para. 3", ["4(a)", "3"]),
        ("Rule 12(b)(6)", ["12(b)(6)"]),
        ("550 U.S. 544; 127 S. Ct. 1955", ["550 U.S. 544", "127 S. Ct. 1955"]),
        ("42 U.S.C. \u00a7 1983", ["1983"]),
        ("2019 WL 123456", ["2019 WL 123456"]),
        ("payment of 30 days in 2023", []),  # plain numbers are words
        ("12 Motion 6", []),
    ],
)
def test_identifier_detection(query, terms):
    identifiers, _ = extract_identifiers(query)
    assert [i.terms for i in identifiers] == terms


@pytest.fixture
def boilerplate(case, random_unit):
    """Twenty chunks that all say "agreement" and one that alone says "indemnify"."""
    filler = make_document(case, "boilerplate")
    texts = [f"Agreement clause {i}." for i in range(20)]
    add_chunks(filler, [random_unit() for _ in range(20)], texts=texts)
    rare = make_document(case, "indemnity")
    add_chunks(rare, [random_unit()], texts=["The Supplier shall indemnify the Customer."])
    return filler, rare


def test_a_rare_word_outweighs_a_common_one(case, boilerplate):
    filler, rare = boilerplate
    hits = keyword_search(tenant=case.tenant, query="agreement indemnify", k=5)
    assert hits[0].document_id == rare.pk
    assert {hit.document_id for hit in hits[1:]} == {filler.pk}
    # Both match one word of two, but "indemnify" (1 chunk of 21) weighs more than "agreement" (20).
    assert hits[0].score > 2 * hits[1].score


def test_candidates_come_from_rare_words_yet_common_words_still_score(case, boilerplate, monkeypatch):
    _, rare = boilerplate
    both = make_document(case, "both")
    add_chunks(both, [np.ones(384)], texts=["Under this Agreement the Supplier shall indemnify the Buyer."])
    term_stats.clear_cache()
    monkeypatch.setattr(keyword, "CANDIDATE_ROWS", 5)
    monkeypatch.setattr(keyword, "CANDIDATES_PER_RESULT", 1)
    hits = keyword_search(tenant=case.tenant, query="agreement indemnify", k=5)
    # "agreement" (21 chunks) is over the limit: only chunks saying "indemnify" are candidates,
    # and the one that also says "agreement" ranks first.
    assert [hit.document_id for hit in hits] == [both.pk, rare.pk]
    # A query of common words alone still finds their chunks, through the rarest of them.
    assert len(keyword_search(tenant=case.tenant, query="agreement", k=30)) == 21


def test_a_filter_leaving_few_chunks_scores_every_match_in_a_large_corpus(case, boilerplate, monkeypatch):
    # In the tenant "agreement" and "indemnify" are both over the candidate limit, so each
    # candidate would need both; the case asked about holds a chunk with only one of them.
    from rag.models import Case
    from rag.retrieval.filters import SearchFilters

    extra = make_document(case, "more indemnities")
    add_chunks(
        extra, [np.ones(384)] * 6, texts=[f"Each party shall indemnify the other ({i})." for i in range(6)]
    )
    small = Case.objects.create(tenant=case.tenant, name="Small matter")
    target = make_document(small, "target")
    add_chunks(target, [np.ones(384)], texts=["This Agreement binds the successors of the parties."])
    term_stats.clear_cache()
    monkeypatch.setattr(keyword, "CANDIDATE_ROWS", 5)
    monkeypatch.setattr(keyword, "CANDIDATES_PER_RESULT", 1)
    query = "agreement indemnify"
    assert target.pk not in _ids(keyword_search(tenant=case.tenant, query=query, k=5))
    scoped = keyword_search(tenant=case.tenant, query=query, k=5, filters=SearchFilters(case_ids=(small.pk,)))
    assert _ids(scoped) == [target.pk]


def test_an_and_of_words_is_followed_by_tighter_ones_in_case_the_estimate_is_off():
    stats = term_stats.TermStats(chunks=100, document_frequency={"a": 50, "b": 40, "c": 10, "d": 30})
    # 10 * sqrt(.3) rows expected with 'c' & 'd': within 6; then one more word, then all of them.
    assert keyword.candidate_queries(["'a'", "'b'", "'c'", "'d'"], stats, limit=6) == [
        "( 'c' ) & ( 'd' )",
        "( 'c' ) & ( 'd' ) & ( 'b' )",
        "( 'c' ) & ( 'd' ) & ( 'b' ) & ( 'a' )",
    ]
    # An OR of rare words finds no more rows than their frequencies add up to: nothing follows.
    assert keyword.candidate_queries(["'a'", "'c'"], stats, limit=20) == ["( 'c' )"]
    assert keyword.candidate_queries([], stats, limit=5) == []


@pytest.fixture
def partners(case, random_unit, monkeypatch):
    """Ten chunks naming both parties of a joint venture, one of them about its termination, in a
    tenant whose statistics say a million-passage archive where each name is in ten chunks:
    independence expects the two names together in a fraction of one."""
    document = make_document(case, "joint venture")
    texts = [f"Veoneer and Nissin agree, clause {i}." for i in range(9)]
    texts.append("Veoneer and Nissin agree on the termination of the joint venture.")
    add_chunks(document, [random_unit() for _ in texts], texts=texts)
    archive = term_stats.TermStats(
        chunks=1_000_000, document_frequency={"veoneer": 10, "nissin": 10, "termin": 5_000}
    )
    monkeypatch.setattr(keyword, "term_stats", lambda **_: archive)
    monkeypatch.setattr(keyword, "CANDIDATE_ROWS", 2)
    monkeypatch.setattr(keyword, "CANDIDATES_PER_RESULT", 1)
    return document


def test_in_a_large_tenant_too_many_candidates_require_one_more_word(partners):
    query = "Veoneer Nissin termination"
    hits = keyword_search(tenant=partners.tenant, query=query, k=2)
    # Both names are in 10 chunks, over 3x the limit of 2: only chunks also saying "termination"
    # are scored.
    assert [Chunk.objects.get(pk=hit.chunk_id).text for hit in hits] == [
        "Veoneer and Nissin agree on the termination of the joint venture."
    ]


def test_a_tenant_below_the_checked_size_scores_the_estimated_candidates(partners, monkeypatch):
    monkeypatch.setattr(keyword, "CHECKED_FROM_CHUNKS", 2_000_000)
    hits = keyword_search(tenant=partners.tenant, query="Veoneer Nissin termination", k=2)
    assert len(hits) == 2  # the ten chunks with both names were candidates
    assert "termination" in Chunk.objects.get(pk=hits[0].chunk_id).text


def test_candidates_are_chunks_with_the_rarest_words_within_the_row_limit():
    stats = term_stats.TermStats(chunks=100, document_frequency={"a": 50, "b": 3, "c": 10, "d": 0})
    phrase = "'non-compet' <-> 'non' <-> 'compet'"  # a hyphenated word: its rarest lexeme counts
    words = ["'a'", "'b'", "'c'", "'d'", phrase]
    assert keyword.candidate_query(words, stats, limit=12) == f"( 'd' ) | ( {phrase} ) | ( 'b' )"
    assert keyword.candidate_query(words, stats, limit=1000) == (
        f"( 'd' ) | ( {phrase} ) | ( 'b' ) | ( 'c' ) | ( 'a' )"
    )
    # Even the rarest word is too common: the next rarest are required too (10 * 50/100 = 5 rows).
    assert keyword.candidate_query(["'a'", "'c'"], stats, limit=5) == "( 'c' ) & ( 'a' )"
    assert keyword.candidate_query(["'a'", "'c'"], stats, limit=1) == "( 'c' ) & ( 'a' )"
    assert keyword.candidate_query([], stats, limit=5) == ""


def test_hits_carry_their_cosine_similarity_when_given_the_query_vector(case, random_unit):
    current = make_document(case, "current")
    vectors = [random_unit(), random_unit()]
    add_chunks(current, vectors, texts=["indemnify the buyer", "indemnify the seller"])
    add_chunks(make_document(case, "old"), [random_unit()], texts=["indemnify all"], embedding_model="old")
    query_vector = random_unit()
    hits = keyword_search(tenant=case.tenant, query="indemnify", k=5, query_vector=query_vector)
    similarity = {hit.document_id: hit.similarity for hit in hits if hit.document_id != current.pk}
    assert list(similarity.values()) == [None]  # another embedding model: not comparable
    expected = sorted(float(v @ query_vector) for v in vectors)
    found = sorted(hit.similarity for hit in hits if hit.document_id == current.pk)
    assert found == pytest.approx(expected, abs=1e-5)
    assert all(hit.similarity is None for hit in keyword_search(tenant=case.tenant, query="indemnify", k=5))
