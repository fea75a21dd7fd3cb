"""The one retrieval path: routing + fusion, ranking, threshold, snippets, redaction, isolation."""

import datetime

import pytest

from rag.models import Sensitivity
from rag.retrieval.filters import SearchFilters
from rag.retrieval.service import Reader, retrieve
from ragsite.exceptions import ConfigurationError, InvalidQuery
from tenants.models import Role
from tests.factories import UserFactory

MSA = (
    "MASTER SERVICES AGREEMENT between Acme Robotics Corp and Globex Logistics Inc.\n\n"
    "1. Services. Globex shall deliver the logistics services described in Schedule A.\n\n"
    "Section 10.2 Termination. Either party may terminate this Agreement on ninety (90) days written "
    "notice to the other party.\n\n"
    "Section 10.25 Survival. Confidentiality obligations survive for five years.\n\n"
    "12. Governing Law. This Agreement shall be governed by the laws of the State of Delaware."
)
LEASE = (
    "COMMERCIAL LEASE between Initech Holdings LLC and Umbrella Pharmaceuticals Inc.\n\n"
    "4. Rent. Tenant shall pay rent monthly in advance.\n\n"
    "9. Termination. Landlord may terminate this Lease on thirty (30) days notice if rent is unpaid.\n\n"
    "14. Governing Law. This Lease is governed by the laws of the State of New York."
)


@pytest.fixture
def corpus(case, ingest_text):
    return {
        "msa": ingest_text(case, MSA, filename="acme-globex-msa.txt"),
        "lease": ingest_text(case, LEASE, filename="initech-umbrella-lease.txt"),
    }


def _retrieve(tenant, query, **options):
    options.setdefault("similarity_threshold", 0.0)
    options.setdefault("reader", Reader(role=Role.OWNER))
    return retrieve(tenant=tenant, query=query, **options)


@pytest.mark.django_db
def test_named_document_comes_first_and_routing_is_reported(tenant, corpus):
    result = _retrieve(
        tenant, "In the lease between Initech and Umbrella, what is the governing law?", top_k=3
    )
    first = result.passages[0]
    assert first.document_id == corpus["lease"].pk
    assert "New York" in first.text and "New York" in first.snippet
    assert first.routed
    assert result.routing.documents[0].document_id == corpus["lease"].pk
    assert result.routing.question == "what is the governing law?"
    # A wrong guess cannot hide the rest: the other document is still reachable.
    assert corpus["msa"].pk in {p.document_id for p in result.passages}


@pytest.mark.django_db
def test_passage_offsets_snippets_and_scores_are_exact(tenant, corpus):
    result = _retrieve(tenant, "governing law Delaware", top_k=5)
    assert result.passages
    texts = {corpus["msa"].pk: corpus["msa"].text, corpus["lease"].pk: corpus["lease"].text}
    for passage in result.passages:
        source = texts[passage.document_id]
        assert source[passage.char_start : passage.char_end] == passage.text
        assert source[passage.snippet_start : passage.snippet_end] == passage.snippet
        assert passage.char_start <= passage.snippet_start < passage.snippet_end <= passage.char_end
        assert 0 <= passage.similarity_score <= 1
        # The spec's formula with the default weights; user uploads trust 0.5, undated → no boost.
        assert passage.rank_score == pytest.approx(0.7 * passage.similarity_score + 0.1 * 0.5)
    scores = [p.rank_score for p in result.passages]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.django_db
def test_identifier_query_finds_its_section(tenant, corpus):
    result = _retrieve(tenant, "What does Section 10.2 say?", top_k=1, mode="keyword")
    assert "Section 10.2 Termination" in result.passages[0].snippet


@pytest.mark.django_db
def test_ranking_uses_recency_trust_and_tenant_weights(tenant, case, ingest_text):
    from rag import services

    today = datetime.date(2026, 11, 22)
    old = ingest_text(
        case,
        "Notice of termination must be in writing.",
        filename="old.txt",
        document_date=datetime.date(2001, 1, 1),
    )
    new = ingest_text(
        case,
        "Notice of termination must be given in writing.",
        filename="new.txt",
        document_date=today - datetime.timedelta(days=10),
        source_type="statute",
    )
    services.ranking_weights_set(tenant=tenant, similarity_weight=0.0, recency_weight=1.0, trust_weight=0.0)
    result = _retrieve(tenant, "termination notice", top_k=2, today=today)
    assert [p.document_id for p in result.passages] == [new.pk, old.pk]
    assert result.passages[0].recency_boost == 0.3 and result.passages[0].source_trust == 1.0
    assert result.passages[0].rank_score == pytest.approx(0.3)
    assert result.passages[1].rank_score == pytest.approx(0.0)


@pytest.mark.django_db
def test_explicit_weights_replace_the_tenants_and_each_ranks_the_same_candidates(tenant, case, ingest_text):
    from rag import services
    from rag.retrieval.ranking import Weights
    from rag.retrieval.service import retrieve_with_each

    today = datetime.date(2026, 11, 22)
    old = ingest_text(
        case,
        "Notice of termination must be in writing.",
        filename="old.txt",
        document_date=datetime.date(2001, 1, 1),
        source_type="statute",
    )
    new = ingest_text(
        case,
        "Notice of termination must be given in writing.",
        filename="new.txt",
        document_date=today - datetime.timedelta(days=10),
    )
    services.ranking_weights_set(tenant=tenant, similarity_weight=0.0, recency_weight=1.0, trust_weight=0.0)
    trust_only = Weights(similarity=0.0, recency=0.0, trust=1.0)
    result = _retrieve(tenant, "termination notice", top_k=2, today=today, weights=trust_only)
    assert [p.document_id for p in result.passages] == [old.pk, new.pk]  # the row would put `new` first
    assert [p.rank_score for p in result.passages] == [pytest.approx(1.0), pytest.approx(0.5)]

    stored, proposed = retrieve_with_each(
        tenant=tenant,
        query="termination notice",
        weights=[Weights(similarity=0.0, recency=1.0, trust=0.0), trust_only],
        top_k=2,
        similarity_threshold=0.0,
        today=today,
    )
    assert [p.document_id for p in stored.passages] == [new.pk, old.pk]
    assert [p.document_id for p in proposed.passages] == [old.pk, new.pk]
    # Same candidates, so the similarity of each passage is the same under both weights.
    assert {p.chunk_id: p.similarity_score for p in stored.passages} == {
        p.chunk_id: p.similarity_score for p in proposed.passages
    }


@pytest.mark.django_db
def test_similarity_threshold_drops_weak_passages(tenant, corpus, settings):
    # The threshold applies to the fused relevance before reranking; without a cross-encoder that is
    # the similarity_score the passages show.
    settings.RAG_RERANKER_MODEL = ""
    everything = _retrieve(tenant, "rent paid monthly", top_k=10)
    strict = _retrieve(tenant, "rent paid monthly", top_k=10, similarity_threshold=0.99)
    assert everything.passages and strict.passages == []
    cut = sorted(p.similarity_score for p in everything.passages)[len(everything.passages) // 2]
    kept = _retrieve(tenant, "rent paid monthly", top_k=10, similarity_threshold=cut)
    assert kept.passages and all(p.similarity_score >= cut for p in kept.passages)


@pytest.mark.django_db
def test_filters_apply_inside_retrieval(tenant, corpus):
    only_msa = SearchFilters(document_ids=(corpus["msa"].pk,))
    result = _retrieve(tenant, "In the lease between Initech and Umbrella, who pays rent?", filters=only_msa)
    assert result.passages and {p.document_id for p in result.passages} == {corpus["msa"].pk}


@pytest.mark.django_db
def test_confidential_text_does_not_exist_for_readers_without_access(tenant, case, ingest_text, member):
    secret = ingest_text(
        case,
        "2. Settlement\n\nThe settlement amount is four million dollars, strictly confidential.",
        filename="settlement.txt",
        sensitivity=Sensitivity.CONFIDENTIAL,
    )
    query = "settlement amount"
    # Even a caller that searched without the reader's visibility gets no passage of it: no
    # "[REDACTED]" notice, heading, score or offset that would tell the words matched.
    outsider = _retrieve(tenant, query, reader=Reader(user_id=member.pk, role=Role.MEMBER))
    assert secret.pk not in {p.document_id for p in outsider.passages}
    assert all("four million" not in p.text + p.snippet + p.section_title for p in outsider.passages)
    nobody = _retrieve(tenant, query, reader=Reader())
    assert secret.pk not in {p.document_id for p in nobody.passages}

    secret.confidential_readers.add(member)
    listed = _retrieve(tenant, query, reader=Reader(user_id=member.pk, role=Role.MEMBER))
    assert "four million" in next(p.text for p in listed.passages if p.document_id == secret.pk)
    admin = _retrieve(tenant, query, reader=Reader(user_id=UserFactory().pk, role=Role.ADMIN))
    assert secret.pk in {p.document_id for p in admin.passages}


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
def test_another_tenants_passages_are_invisible(tenant, other_case, corpus, ingest_text, mode):
    foreign = ingest_text(
        other_case,
        "Governing law: the laws of the State of Delaware apply to this lease.",
        filename="foreign.txt",
    )
    result = _retrieve(
        tenant, "In the lease between Initech and Umbrella, governing law Delaware", mode=mode, top_k=20
    )
    assert result.passages
    assert foreign.pk not in {p.document_id for p in result.passages}
    theirs = _retrieve(other_case.tenant, "governing law Delaware", mode=mode, top_k=20)
    assert {p.document_id for p in theirs.passages} == {foreign.pk}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"top_k": 0}, "top_k"),
        ({"top_k": 101}, "top_k"),
        ({"mode": "fuzzy"}, "mode"),
        ({"similarity_threshold": "high"}, "similarity_threshold"),
        ({"similarity_threshold": 2}, "similarity_threshold"),
        ({"candidate_pool": -1}, "candidate_pool"),
    ],
)
def test_bad_options_are_invalid_queries(tenant, options, field):
    with pytest.raises(InvalidQuery) as error:
        _retrieve(tenant, "anything", **options)
    assert field in error.value.details


@pytest.mark.django_db
def test_blank_query_returns_nothing(tenant, corpus):
    assert _retrieve(tenant, "   ").passages == []


@pytest.fixture(scope="module")
def local_cross_encoder(tmp_path_factory):
    """A real CrossEncoder saved to a local directory (MiniLM with a fresh scoring head)."""
    import torch
    from sentence_transformers import CrossEncoder

    from rag.ingest import embedding

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("models") / "tiny-cross-encoder"
    CrossEncoder(str(embedding.resolve_model_path()), num_labels=1, local_files_only=True, device="cpu").save(
        str(path)
    )
    return path


@pytest.mark.django_db
def test_configured_cross_encoder_rescores_candidates(tenant, corpus, settings, local_cross_encoder):
    from rag.retrieval import rerank

    settings.RAG_RERANKER_MODEL = str(local_cross_encoder)
    direct = rerank.get_reranker().score("governing law", [MSA, LEASE])
    result = _retrieve(tenant, "governing law", top_k=3)
    assert result.reranker == "tiny-cross-encoder"
    assert all(0 <= score <= 1 for score in direct)
    assert all(0 <= p.similarity_score <= 1 for p in result.passages)
    off = _retrieve(tenant, "governing law", top_k=3, reranking_enabled=False)
    assert off.reranker == "none"


@pytest.mark.django_db
def test_missing_reranker_model_is_a_configuration_error(tenant, corpus, settings, tmp_path):
    settings.RAG_RERANKER_MODEL = str(tmp_path / "no-such-model")
    with pytest.raises(ConfigurationError):
        _retrieve(tenant, "governing law")
