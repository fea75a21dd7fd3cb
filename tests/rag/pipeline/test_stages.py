"""Each stage on a context prepared by the stages before it, with the real corpus, templates,
selectors and cache (a fake model only where the test is about the model's reply)."""

import json

import pytest

from rag import selectors
from rag import services as rag_services
from rag.models import AuditLog
from rag.pipeline import cache, tokens
from rag.pipeline.config import QueryConfig
from rag.pipeline.context import QueryContext
from rag.pipeline.follow_ups import generic_follow_ups
from rag.pipeline.run import default_executor
from rag.pipeline.stages.enhance import rewrite_follow_up
from rag.retrieval.service import Reader
from ragsite.exceptions import InvalidQuery, LLMUnavailable, NotFound
from templates_admin import services as template_services
from templates_admin.rendering import STRICTNESS_RULES
from tests.factories import UserFactory

from .conftest import MSA_TITLE

QUESTION = "Is there a confidentiality clause?"


def prepare(tenant, question=QUESTION, *, until: str, reader=None, user_id=None, **options):
    """(context after every stage before `until`, the `until` stage)."""
    ctx = QueryContext(
        tenant=tenant,
        question=question,
        config=QueryConfig.from_options(**options),
        request_id="req_stage_test",
        reader=reader or Reader(user_id=user_id),
        user_id=user_id,
    )
    for stage in default_executor().stages:
        if stage.name == until:
            return ctx, stage
        ctx = stage.run(ctx)
    raise AssertionError(f"no stage {until!r}")


def reply(answer, citations=(), follow_ups=(), confidence=0.9, **extra):
    return {
        "answer": answer,
        "citations": list(citations),
        "follow_ups": list(follow_ups),
        "confidence": confidence,
        **extra,
    }


CONFIDENTIAL_SENTENCE = (
    "Each party shall keep the other party's Confidential Information secret and shall not disclose it "
    "to any third party without prior written consent."
)


# --- sanitize --------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_sanitize_cleans_the_question_and_searches_the_clean_text(tenant):
    ctx, stage = prepare(tenant, "  Is there a\u200b confidentiality\x00   clause?\n", until="sanitize")
    ctx = stage.run(ctx)
    assert ctx.sanitized.sanitized_query == "Is there a confidentiality clause?"
    assert ctx.search_query == "Is there a confidentiality clause?"
    assert ctx.stage_metadata["sanitize"] == {
        "language": "en",
        "tokens": tokens.count_tokens("Is there a confidentiality clause?"),
        "prompt_injection_detected": False,
        "injection_patterns": [],
    }


@pytest.mark.django_db
@pytest.mark.parametrize("question", ["   ", "\u200b\x00", 42, None])
def test_sanitize_refuses_empty_or_non_text_questions(tenant, question):
    ctx, stage = prepare(tenant, question, until="sanitize")
    with pytest.raises(InvalidQuery):
        stage.run(ctx)


# --- cache lookup ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_cache_lookup_resolves_versions_and_template_and_misses_an_empty_cache(tenant, corpus):
    ctx, stage = prepare(tenant, until="cache_lookup")
    ctx = stage.run(ctx)
    assert ctx.index_version == selectors.index_version_get(tenant=tenant) >= 2
    assert ctx.weights_version == 0
    assert (ctx.template.template_id, ctx.template.is_builtin) == ("legal_analysis_balanced", True)
    assert ctx.cache_key.startswith("answer:")
    assert ctx.stage_metadata["cache_lookup"]["hit"] is False
    assert not ctx.cache_hit and ctx.halted is None and ctx.result is None


@pytest.mark.django_db
def test_cache_lookup_answers_from_a_stored_entry_and_halts(tenant, corpus):
    ctx, stage = prepare(tenant, until="cache_lookup")
    key = stage.run(ctx).cache_key
    cache.set(key, {"result": {"answer": "cached answer"}})
    ctx, stage = prepare(tenant, "  is THERE a confidentiality   clause? ", until="cache_lookup")
    ctx = stage.run(ctx)
    assert ctx.cache_key == key  # case and spacing do not change the key
    assert ctx.cache_hit and ctx.halted == "cache_hit"
    assert ctx.result == {"answer": "cached answer"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "template_id"),
    [
        ({}, "legal_analysis_balanced"),
        ({"response_style": "terse"}, "legal_analysis_terse"),
        ({"response_style": "detailed"}, "legal_analysis_detailed"),
        ({"response_style": "detailed", "template_id": "legal_analysis_detailed"}, "legal_analysis_detailed"),
    ],
)
def test_cache_lookup_picks_the_template(tenant, options, template_id):
    ctx, stage = prepare(tenant, until="cache_lookup", **options)
    assert stage.run(ctx).template.template_id == template_id


@pytest.mark.django_db
def test_cache_lookup_refuses_a_template_id_with_another_response_style(tenant):
    # Neither may be silently ignored (issue #19): the request must say which style it wants.
    ctx, stage = prepare(
        tenant, until="cache_lookup", response_style="terse", template_id="legal_analysis_detailed"
    )
    with pytest.raises(InvalidQuery) as refused:
        stage.run(ctx)
    assert set(refused.value.details) == {"response_style", "template_id"}


@pytest.mark.django_db
def test_cache_lookup_uses_the_default_template_setting(tenant, settings):
    settings.RAG_DEFAULT_TEMPLATE = "legal_analysis_terse"
    ctx, stage = prepare(tenant, until="cache_lookup")
    assert stage.run(ctx).template.template_id == "legal_analysis_terse"


@pytest.mark.django_db
def test_cache_lookup_refuses_an_unknown_template(tenant):
    ctx, stage = prepare(tenant, until="cache_lookup", template_id="no_such_template")
    with pytest.raises(NotFound):
        stage.run(ctx)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "reason"),
    [
        ({"dry_run": True}, "dry_run"),
        ({"use_cache": False}, "use_cache=false"),
        ({"conversation_id": "c"}, "conversation"),
    ],
)
def test_cache_lookup_skips_the_cache(tenant, corpus, options, reason):
    ctx, stage = prepare(tenant, until="cache_lookup")
    cache.set(stage.run(ctx).cache_key, {"result": {"answer": "cached"}})
    ctx, stage = prepare(tenant, until="cache_lookup", **options)
    ctx = stage.run(ctx)
    assert ctx.cache_key is None and not ctx.cache_hit and ctx.result is None
    assert ctx.stage_metadata["cache_lookup"]["skipped"] == reason
    assert ctx.template is not None and ctx.index_version >= 2  # still resolved


# --- enhance -----------------------------------------------------------------------------------------

EARLIER = ["In the Acme Globex Master Services agreement, is there a confidentiality clause?"]


@pytest.mark.parametrize(
    ("question", "earlier", "expected"),
    [
        ("Does it survive termination?", [], "Does it survive termination?"),
        (
            "Does it survive termination?",
            EARLIER,
            "In the Acme Globex Master Services agreement, does it survive termination (regarding "
            "confidentiality)?",
        ),
        # Names its own clause type: only the document is carried over.
        (
            "Is there a non-compete clause?",
            EARLIER,
            "In the Acme Globex Master Services agreement, is there a non-compete clause?",
        ),
        # Names its own document: nothing is carried over.
        (
            "What is the notice period in the Initech lease?",
            EARLIER,
            "What is the notice period in the Initech lease?",
        ),
        # No document named earlier: only the clause type.
        (
            "Does it survive?",
            ["Is there a confidentiality clause?"],
            "Does it survive (regarding confidentiality)?",
        ),
        # The latest turn naming a document wins.
        (
            "Does it survive termination?",
            ["In the Initech lease, what is the rent?", *EARLIER],
            "In the Acme Globex Master Services agreement, does it survive termination (regarding "
            "confidentiality)?",
        ),
    ],
)
def test_rewrite_follow_up(question, earlier, expected):
    assert rewrite_follow_up(question, earlier) == expected


def _names_hydraspin(question: str) -> bool:
    return "Hydraspin" in question


@pytest.mark.parametrize(
    ("question", "earlier", "expected"),
    [
        # Names another document by a party's name: the earlier one is left, the clause kept.
        (
            "What about the Hydraspin one?",
            EARLIER,
            "What about the Hydraspin one (regarding confidentiality)?",
        ),
        # After that turn, "it" is the document it named (the one its answer cited), not the first.
        (
            "Can it be assigned?",
            [*EARLIER, "What about the Hydraspin one (regarding confidentiality)?"],
            "In Hydraspin Distributor Agreement, can it be assigned?",
        ),
        # About several documents: neither the earlier reference nor the cited document.
        (
            "Which agreements have an arbitration clause?",
            EARLIER,
            "Which agreements have an arbitration clause?",
        ),
        ("Do any of them survive termination?", EARLIER, "Do any of them survive termination?"),
        # "the other party" is one document's party, not another document.
        (
            "Can the other party terminate?",
            EARLIER,
            "In the Acme Globex Master Services agreement, can the other party terminate?",
        ),
    ],
)
def test_a_follow_up_naming_another_document_or_several_leaves_the_earlier_one(question, earlier, expected):
    cited = "Hydraspin Distributor Agreement"
    assert rewrite_follow_up(question, earlier, cited, _names_hydraspin) == expected


SUPPLY = "Supply Agreement — Ewsd / Gridiron"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # "it" after an answer that cited one document: that document.
        (
            "Does it survive termination?",
            "In Supply Agreement — Ewsd / Gridiron, does it survive termination?",
        ),
        (
            "Which law governs the agreement?",
            "In Supply Agreement — Ewsd / Gridiron, which law governs the agreement?",
        ),
        # Asking beyond it, or naming a document: left as asked.
        ("Which other contracts have such a clause?", "Which other contracts have such a clause?"),
        ("What is the rent in the Initech lease?", "What is the rent in the Initech lease?"),
    ],
)
def test_a_follow_up_is_about_the_document_the_last_answer_cited(question, expected):
    earlier = ["When may the agreement be terminated?"]  # names no document itself
    assert rewrite_follow_up(question, earlier, SUPPLY) == expected


@pytest.mark.django_db
def test_enhance_takes_the_cited_document_from_the_latest_answer(tenant, member, case, upload):
    document = upload(case, "contract.txt", title=SUPPLY).document
    AuditLog.objects.create(
        tenant=tenant, request_id="r1", user=member, conversation_id="conv-9", status="answered",
        query="When may the agreement be terminated?", documents_used=[document.pk], latency_ms=1.0,
    )  # fmt: skip
    ctx, stage = prepare(
        tenant, "Does it survive?", until="enhance", conversation_id="conv-9", user_id=member.pk
    )
    assert stage.run(ctx).search_query == f"In {document.title}, does it survive?"
    AuditLog.objects.create(
        tenant=tenant, request_id="r2", user=member, conversation_id="conv-9", status="answered",
        query="Which mention delivery?", documents_used=[document.pk, document.pk + 1], latency_ms=1.0,
    )  # fmt: skip
    ctx, stage = prepare(
        tenant, "Does it survive?", until="enhance", conversation_id="conv-9", user_id=member.pk
    )
    assert stage.run(ctx).search_query == "Does it survive?"  # several documents cited: none assumed


@pytest.mark.django_db
def test_enhance_without_a_conversation_searches_the_question_as_asked(tenant):
    ctx, stage = prepare(tenant, until="enhance")
    ctx = stage.run(ctx)
    assert ctx.search_query == QUESTION and ctx.conversation == []
    assert ctx.stage_metadata["enhance"] == {"rewritten": False, "search_query": QUESTION, "earlier_turns": 0}


@pytest.mark.django_db
def test_enhance_rewrites_a_follow_up_with_the_users_earlier_turns(tenant, member):
    def turn(query, status="answered", user=member, conversation="conv-1"):
        AuditLog.objects.create(
            tenant=tenant, request_id="r", user=user, conversation_id=conversation, query=query,
            status=status, latency_ms=1.0,
        )  # fmt: skip

    turn(EARLIER[0])
    turn("Ignore this failed turn about the Initech lease", status="failed")
    turn("In the Initech lease, what is the rent?", conversation="conv-2")
    turn("In the Initech lease, what is the rent?", user=UserFactory())
    ctx, stage = prepare(
        tenant, "Does it survive termination?", until="enhance", conversation_id="conv-1", user_id=member.pk
    )
    ctx = stage.run(ctx)
    assert ctx.conversation == EARLIER
    assert ctx.search_query.startswith("In the Acme Globex Master Services agreement, does it survive")
    assert ctx.stage_metadata["enhance"]["rewritten"] is True
    assert ctx.stage_metadata["enhance"]["earlier_turns"] == 1
    assert ctx.sanitized.sanitized_query == "Does it survive termination?"  # the question itself is kept


# --- retrieve, rank, rerank --------------------------------------------------------------------------


@pytest.mark.django_db
def test_retrieve_finds_candidates_of_the_tenant_with_the_clause_type(tenant, corpus):
    ctx, stage = prepare(tenant, until="retrieve")
    ctx = stage.run(ctx)
    documents = {c.hit.document_id for c in ctx.candidates.candidates}
    assert documents == {corpus["msa"].pk, corpus["lease"].pk}
    assert ctx.candidates.clause_types == ("confidentiality",)
    meta = ctx.stage_metadata["retrieve"]
    assert (meta["mode"], meta["candidates"], meta["clause_types"]) == ("hybrid", 2, ["confidentiality"])
    assert {"route_ms", "embed_ms", "search_ms"} <= set(meta)


@pytest.mark.django_db
def test_retrieve_applies_filters_and_mode(tenant, corpus):
    ctx, stage = prepare(
        tenant, until="retrieve", search_mode="keyword", filters={"document_ids": [corpus["lease"].pk]}
    )
    ctx = stage.run(ctx)
    assert {c.hit.document_id for c in ctx.candidates.candidates} <= {corpus["lease"].pk}
    assert ctx.candidates.mode == "keyword"


@pytest.mark.django_db
def test_rank_keeps_the_best_top_k_over_the_threshold(tenant, corpus, settings):
    settings.RAG_RERANKER_MODEL = ""  # with a cross-encoder, rank keeps RAG_RERANK_DEPTH for it
    ctx, stage = prepare(tenant, until="rank", similarity_threshold=0.0, top_k=1)
    ctx = stage.run(ctx)
    ((best, scores),) = ctx.ranked.items
    assert best.hit.document_id == corpus["msa"].pk
    assert ctx.stage_metadata["rank"]["kept"] == 1
    assert ctx.stage_metadata["rank"]["weights"] == {"similarity": 0.7, "recency": 0.2, "trust": 0.1}
    assert scores.rank_score == pytest.approx(0.7 * scores.similarity + 0.1 * 0.5)

    ctx, stage = prepare(tenant, until="rank", similarity_threshold=0.0, top_k=5)
    ranked = stage.run(ctx).ranked.items
    assert len(ranked) == 2
    assert [s.rank_score for _, s in ranked] == sorted((s.rank_score for _, s in ranked), reverse=True)

    ctx, stage = prepare(tenant, until="rank", similarity_threshold=1.0)
    assert stage.run(ctx).ranked.items == []


@pytest.mark.django_db
def test_rank_uses_the_tenants_weights(tenant, corpus):
    rag_services.ranking_weights_set(
        tenant=tenant, similarity_weight=0.5, recency_weight=0.0, trust_weight=1.0
    )
    ctx, stage = prepare(tenant, until="rank", similarity_threshold=0.0)
    ctx = stage.run(ctx)
    assert ctx.stage_metadata["rank"]["weights"] == {"similarity": 0.5, "recency": 0.0, "trust": 1.0}
    for _, scores in ctx.ranked.items:
        assert scores.rank_score == pytest.approx(0.5 * scores.similarity + 1.0 * 0.5)


@pytest.mark.django_db
def test_rank_drops_everything_when_nothing_is_semantically_close(tenant, corpus, settings):
    settings.RAG_MIN_SEMANTIC_SIMILARITY = 0.99
    ctx, stage = prepare(tenant, until="rank", similarity_threshold=0.0)
    ctx = stage.run(ctx)
    assert ctx.ranked.items == []
    assert ctx.stage_metadata["rank"]["dropped_reason"] == "no passage semantically close to the question"
    assert ctx.stage_metadata["rank"]["best_cosine"] < 0.99


@pytest.mark.django_db
@pytest.mark.parametrize("reranking_enabled", [True, False])
def test_rerank_keeps_the_order_and_cuts_to_the_context_passages(tenant, corpus, reranking_enabled):
    ctx, stage = prepare(
        tenant, until="rerank", similarity_threshold=0.0, max_chunks=1, reranking_enabled=reranking_enabled
    )
    best = ctx.ranked.items[0][0].hit.chunk_id
    assert len(ctx.ranked.items) == 2
    ctx = stage.run(ctx)
    if not reranking_enabled:  # the order stays; the cross-encoder may reorder
        assert [c.hit.chunk_id for c, _ in ctx.ranked.items] == [best]
    reranker = "ms-marco-MiniLM-L-12-v2" if reranking_enabled else "none"
    assert ctx.stage_metadata["rerank"] == {"reranker": reranker, "kept": 1}


# --- select template ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_select_template_takes_the_templates_settings(tenant):
    ctx, stage = prepare(tenant, until="select_template", response_style="detailed")
    ctx = stage.run(ctx)
    assert (ctx.citation_style, ctx.strictness, ctx.follow_up_count) == ("inline_numbers", "normal", 3)
    assert ctx.stage_metadata["select_template"] == {
        "template_id": "legal_analysis_detailed",
        "template_version": 1,
        "builtin": True,
        "citation_style": "inline_numbers",
        "strictness": "normal",
        "follow_up_count": 3,
    }


@pytest.mark.django_db
def test_select_template_options_override_the_template(tenant):
    ctx, stage = prepare(
        tenant,
        until="select_template",
        citation_style="bracketed_ids",
        strictness="strict",
        follow_up_count=0,
    )
    ctx = stage.run(ctx)
    assert (ctx.citation_style, ctx.strictness, ctx.follow_up_count) == ("bracketed_ids", "strict", 0)


@pytest.mark.django_db
def test_select_template_uses_the_tenants_own_template(tenant):
    template_services.template_update(
        tenant=tenant,
        template_id="legal_analysis_balanced",
        data={"citation_style": "end_list", "strictness": "lenient", "follow_up_count": 4},
    )
    ctx, stage = prepare(tenant, until="select_template")
    ctx = stage.run(ctx)
    assert ctx.template.tenant_id == tenant.pk and not ctx.template.is_builtin
    assert (ctx.citation_style, ctx.strictness, ctx.follow_up_count) == ("end_list", "lenient", 4)


# --- build context, build prompt ---------------------------------------------------------------------


@pytest.mark.django_db
def test_build_context_fences_the_kept_passages(tenant, corpus):
    ctx, stage = prepare(tenant, until="build_context", citation_style="bracketed_ids")
    ctx = stage.run(ctx)
    msa = corpus["msa"]
    assert [p.document_id for p in ctx.retrieval.passages] == [msa.pk]
    assert ctx.context.text.startswith(
        f'<source id="doc_{msa.pk}" doc_id="doc_{msa.pk}" title="{MSA_TITLE}" '
    )
    assert CONFIDENTIAL_SENTENCE in ctx.context.text
    assert [s.citation_id for s in ctx.context.sources] == [f"doc_{msa.pk}"]
    meta = ctx.stage_metadata["build_context"]
    assert meta.pop("answerable") is True and meta.pop("answerability") > 0.5
    assert meta == {
        "passages": 1,
        "dropped": 0,
        "tokens": tokens.count_tokens(ctx.context.text),
        "budget": 3000,
        "injection_flagged": [],
    }
    assert ctx.halted is None


@pytest.mark.django_db
def test_build_context_without_passages_halts_with_not_found(tenant, corpus):
    ctx, stage = prepare(tenant, until="build_context", similarity_threshold=1.0)
    ctx = stage.run(ctx)
    assert ctx.context.entries == ()
    assert (ctx.halted, ctx.not_found_reason) == ("no_passages", "no_passages")


@pytest.mark.django_db
def test_build_context_without_passages_does_not_halt_a_dry_run(tenant, corpus):
    ctx, stage = prepare(tenant, until="build_context", similarity_threshold=1.0, dry_run=True)
    ctx = stage.run(ctx)
    assert ctx.halted is None and ctx.not_found_reason is None


@pytest.mark.django_db
@pytest.mark.parametrize("strictness", ["lenient", "normal", "strict"])
def test_build_prompt_fills_the_template(tenant, corpus, strictness):
    ctx, stage = prepare(tenant, until="build_prompt", strictness=strictness, follow_up_count=4)
    ctx = stage.run(ctx)
    prompt = ctx.prompt
    assert ctx.context.text in prompt.user and QUESTION in prompt.user
    assert "REQUIREMENTS:" in prompt.user and "3. Generate 4 concise follow-up questions" in prompt.user
    assert prompt.system.endswith(STRICTNESS_RULES[strictness])
    assert (prompt.template_id, prompt.strictness, prompt.follow_up_count) == (
        "legal_analysis_balanced",
        strictness,
        4,
    )
    assert ctx.stage_metadata["build_prompt"]["estimated_tokens"] == tokens.count_tokens(
        prompt.system
    ) + tokens.count_tokens(prompt.user)
    assert ctx.halted is None


@pytest.mark.django_db
def test_build_prompt_halts_a_dry_run(tenant, corpus):
    ctx, stage = prepare(tenant, until="build_prompt", dry_run=True)
    assert stage.run(ctx).halted == "dry_run"


# --- generate ----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_generate_sends_the_prompt_and_sources_to_the_provider(tenant, corpus, fake_provider):
    provider = fake_provider(reply("Yes [1].", [{"id": "1"}]))
    ctx, stage = prepare(tenant, until="generate", temperature=0.4, max_new_tokens=300, follow_up_count=1)
    ctx = stage.run(ctx)
    (request,) = provider.requests
    assert (request.system, request.prompt) == (ctx.prompt.system, ctx.prompt.user)
    assert request.question == ctx.search_query == QUESTION
    assert request.sources == ctx.context.sources
    assert (request.temperature, request.max_tokens, request.follow_up_count) == (0.4, 300, 1)
    assert [g.text for g in ctx.generations] == [json.dumps(reply("Yes [1].", [{"id": "1"}]))]
    assert ctx.stage_metadata["generate"] == {
        "provider": "fake",
        "model": "fake-1",
        "input_tokens": 120,
        "output_tokens": 30,
        "cost_estimate": 0.0015,
        "latency_ms": 7.5,
    }


@pytest.mark.django_db
def test_generate_lets_the_providers_error_through(tenant, corpus, fake_provider):
    fake_provider(error=LLMUnavailable("down"))
    ctx, stage = prepare(tenant, until="generate")
    with pytest.raises(LLMUnavailable):
        stage.run(ctx)
    assert ctx.generations == []


# --- post-process ------------------------------------------------------------------------------------


def _postprocessed(tenant, fake_provider, model_reply, **options):
    fake_provider(model_reply)
    ctx, stage = prepare(tenant, until="postprocess", **options)
    return stage.run(ctx)


@pytest.mark.django_db
def test_postprocess_tops_follow_ups_up_to_exactly_the_count(tenant, corpus, fake_provider):
    ctx = _postprocessed(
        tenant,
        fake_provider,
        reply(f'"{CONFIDENTIAL_SENTENCE}" [1]', [{"id": "1"}], ["Who is bound by it?"]),
        follow_up_count=3,
    )
    assert ctx.processed.follow_ups == [
        "Who is bound by it?",
        *generic_follow_ups(ctx.search_query, MSA_TITLE)[:2],
    ]
    assert "confidentiality" in ctx.processed.follow_ups[1]  # the question's topic, by name
    assert ctx.stage_metadata["postprocess"] == {
        "output_format": "json",
        "truncated": False,
        "citations": 1,
        "invalid_citations": [],
        "confidence": 0.9,
    }


@pytest.mark.django_db
@pytest.mark.parametrize(("count", "expected"), [(0, 0), (1, 1), (2, 2), (5, 5)])
def test_postprocess_gives_exactly_follow_up_count(tenant, corpus, fake_provider, count, expected):
    many = [f"Model question {n}?" for n in range(5)]
    ctx = _postprocessed(tenant, fake_provider, reply("Yes [1].", [{"id": "1"}], many), follow_up_count=count)
    assert ctx.processed.follow_ups == many[:expected]


@pytest.mark.django_db
def test_postprocess_tops_up_without_citations_about_the_documents(tenant, corpus, fake_provider):
    ctx = _postprocessed(tenant, fake_provider, reply("Yes.", follow_ups=[]), follow_up_count=2)
    assert ctx.processed.follow_ups == generic_follow_ups(ctx.search_query, "the documents")[:2]


@pytest.mark.django_db
def test_postprocess_maps_a_plain_text_reply(tenant, corpus, fake_provider):
    ctx = _postprocessed(tenant, fake_provider, "Each party keeps the information secret [1] [7].")
    processed = ctx.processed
    assert processed.output_format == "text"
    assert [c.source.document_id for c in processed.citations] == [corpus["msa"].pk]
    assert processed.invalid_citations == ["7"]
    assert len(processed.follow_ups) == 2


# --- verify ------------------------------------------------------------------------------------------


def _verified(tenant, fake_provider, *replies, **options):
    provider = fake_provider(*replies)
    ctx, stage = prepare(tenant, until="verify", **options)
    ctx = stage.run(ctx)
    return ctx, provider


@pytest.mark.django_db
def test_verify_passes_a_faithful_answer_without_mitigation(tenant, corpus, fake_provider):
    ctx, provider = _verified(
        tenant,
        fake_provider,
        reply(
            f'The agreement says: "{CONFIDENTIAL_SENTENCE}" [1]',
            [{"id": "1", "snippet": CONFIDENTIAL_SENTENCE}],
        ),
    )
    assert provider.calls == 1
    assert not ctx.verification.hallucination_detected and ctx.mitigation == []
    assert ctx.not_found_reason is None
    assert ctx.stage_metadata["verify"]["retries"] == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("model_reply", "reason"),
    [
        (reply("I don't know.", confidence=0.0), "model_did_not_know"),
        (reply("Each party keeps Confidential Information secret.", []), "no_valid_citations"),
        (
            reply("Each party keeps Confidential Information secret [1].", [{"id": "1"}], confidence=0.02),
            "low_confidence",
        ),
    ],
)
def test_verify_decides_when_the_answer_is_i_dont_know(tenant, corpus, fake_provider, model_reply, reason):
    ctx, _ = _verified(tenant, fake_provider, model_reply)
    assert ctx.not_found_reason == reason
    assert ctx.stage_metadata["verify"]["not_found_reason"] == reason


@pytest.mark.django_db
def test_verify_re_runs_strictly_and_keeps_the_better_answer(tenant, corpus, fake_provider):
    invented = reply("Disclosure is allowed to affiliates [2].", [{"id": "2"}])
    fixed = reply(f'"{CONFIDENTIAL_SENTENCE}" [1]', [{"id": "1", "snippet": CONFIDENTIAL_SENTENCE}])
    ctx, provider = _verified(tenant, fake_provider, invented, fixed)
    assert provider.calls == 2
    assert "You MUST ONLY use provided sources. Cite EVERY claim." in provider.requests[1].system
    assert ctx.first_verification.invalid_citations == ["2"]
    assert not ctx.verification.hallucination_detected
    assert ctx.processed.answer == f'"{CONFIDENTIAL_SENTENCE}" [1]'
    assert ctx.mitigation == ["re-run"]
    assert len(ctx.generations) == 2
