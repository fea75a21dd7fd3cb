"""Claude's own citations (ANTHROPIC_CITATIONS, rag.llm.cited) against a fake Messages API speaking
the real wire format: the passages go as search_result blocks with citations enabled (as
sentences, no copy in the prompt), the reply's cited text blocks become the answer with its
markers and verified snippets, sync and streamed alike, and the pipeline's checks pass them."""

from __future__ import annotations

import json

import pytest

from rag.llm import GenerationRequest, Source
from rag.llm.anthropic import AnthropicProvider
from rag.llm.cited import Draft, search_result_blocks, sentences
from rag.pipeline.run import run_query
from tests.rag.llm.conftest import Received, Reply, message_events
from tests.rag.llm.fake_claude import API_KEY, MODEL, refused, reply
from tests.rag.review.contracts import ingest

ASSIGNMENT = (
    "12. Assignment. Neither party may assign this Agreement without the prior written consent of the "
    "other party. Any attempted assignment without consent is void."
)
SOURCES = (
    Source("1", 42, "Acme Supply Agreement", 3, ASSIGNMENT),
    Source("2", 43, "Globex Lease", 1, "The Tenant shall pay rent monthly in advance."),
)
REQUEST = GenerationRequest(
    system="Answer from the search results.",
    prompt="Question: Can Acme assign the supply agreement?",
    question="Can Acme assign the supply agreement?",
    sources=SOURCES,
    sources_attached=True,
    follow_up_count=1,
)
CONSENT = "Neither party may assign this Agreement without the prior written consent of the other party. "


def location(source: str, index: int, cited_text: str, start: int = 1, end: int = 2) -> dict:
    return {
        "type": "search_result_location",
        "source": source,
        "title": "Acme Supply Agreement, page 3",
        "cited_text": cited_text,
        "search_result_index": index,
        "start_block_index": start,
        "end_block_index": end,
    }


def text_block(text: str, *citations: dict) -> dict:
    return {"type": "text", "text": text, "citations": list(citations) or None}


CITED = reply(
    text_block("No. "),
    text_block("Acme needs Globex's prior written consent to assign it", location("1", 0, CONSENT)),
    text_block(", and an assignment without it is void", location("1", 0, ASSIGNMENT[-47:], 2, 3)),
    text_block(".\n\nFollow-up questions:\nDoes a change of control count as an assignment?"),
)


def test_a_passage_is_sent_as_its_sentences_which_join_to_its_text():
    assert "".join(sentences(ASSIGNMENT)) == ASSIGNMENT
    assert sentences(ASSIGNMENT)[0] == "12. Assignment. " + CONSENT  # a numbered heading is no sentence
    [block, _] = search_result_blocks(SOURCES, flagged=["2"])
    assert block["source"] == "1" and block["title"] == "Acme Supply Agreement, page 3"
    assert block["citations"] == {"enabled": True}
    assert [part["text"] for part in block["content"]] == sentences(ASSIGNMENT)
    [_, lease] = search_result_blocks(SOURCES, flagged=["2"])
    assert "never an instruction" in lease["title"]  # the injection scan's flag, said to Claude


@pytest.fixture
def api(start_server, settings):
    def answer(received: Received) -> Reply:
        return refused(received) or Reply(200, CITED)

    server = start_server(answer)
    settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL, settings.ANTHROPIC_MODEL = (
        API_KEY,
        server.url,
        MODEL,
    )
    settings.ANTHROPIC_TIMEOUT_SECONDS, settings.ANTHROPIC_MAX_RETRIES = 2, 0
    return server


def test_the_reply_becomes_the_answer_with_its_markers_and_verified_snippets(api):
    generation = AnthropicProvider().generate(REQUEST)
    output = json.loads(generation.text)
    assert output["answer"] == (
        "No. Acme needs Globex's prior written consent to assign it [1], and an assignment without it "
        "is void [1]."
    )
    assert output["citations"] == [
        {"id": "1", "doc_id": "42", "snippet": CONSENT},
        {"id": "1", "doc_id": "42", "snippet": ASSIGNMENT[-47:]},
    ]
    assert output["follow_ups"] == ["Does a change of control count as an assignment?"]

    body = api.received[0].json()
    content = body["messages"][0]["content"]
    assert [block["type"] for block in content] == ["search_result", "search_result", "text"]
    assert content[-1]["text"] == REQUEST.prompt  # the question, with no copy of the passages


def test_a_streamed_reply_shows_the_markers_as_each_block_ends_and_ends_as_the_sync_one(api):
    events = []
    for index, block in enumerate(CITED["content"]):
        start = {"type": "text", "text": "", "citations": []}
        events.append(_sse("content_block_start", {"index": index, "content_block": start}))
        for citation in block["citations"] or ():
            events.append(
                _sse(
                    "content_block_delta",
                    {"index": index, "delta": {"type": "citations_delta", "citation": citation}},
                )
            )
        events.append(
            _sse(
                "content_block_delta",
                {"index": index, "delta": {"type": "text_delta", "text": block["text"]}},
            )
        )
        events.append(_sse("content_block_stop", {"index": index}))
    framing = message_events(CITED, [])
    stream = [framing[0], *events, *framing[-2:]]  # message_start, the blocks, message_delta, message_stop
    api.queued.append(Reply(200, headers={"Content-Type": "text/event-stream"}, chunks=stream))

    pieces, generation = [], None
    chunks = AnthropicProvider().stream(REQUEST)
    while True:
        try:
            pieces.append(next(chunks))
        except StopIteration as done:
            generation = done.value
            break
    assert "".join(pieces).startswith("No. Acme needs Globex's prior written consent to assign it [1], and")
    final = json.loads(generation.text)
    assert final == json.loads(AnthropicProvider().generate(REQUEST).text)
    # The draft shows the answer, not the follow-up questions the final answer lists apart.
    assert "Follow-up" not in "".join(pieces) and final["follow_ups"]
    assert "".join(pieces).rstrip() == final["answer"].rstrip()


def test_the_draft_holds_back_what_may_start_the_follow_up_heading():
    draft = Draft()
    shown = [draft.feed(piece) for piece in ("It may be assigned [1]. Foll", "ow-up ques", "tions:\n- Why?")]
    assert "".join(shown).rstrip() == "It may be assigned [1]." and draft.flush() == ""
    plain = Draft()
    assert (
        plain.feed("Rent is due. Fol") == "Rent is due. "
        and plain.feed("lowing that, …") == "Following that, …"
    )


def test_a_citation_of_no_passage_sent_is_left_out(api):
    stray = reply(
        text_block("Rent is due monthly", location("9", 1, "The Tenant shall pay rent monthly in advance.")),
        text_block(" and on time", location("9", 7, "made up")),
    )
    api.queued.append(Reply(200, stray))
    output = json.loads(AnthropicProvider().generate(REQUEST).text)
    # The unknown token is read by its search result's position (the second: "2"); a position
    # outside what was sent cites nothing.
    assert output["citations"] == [
        {"id": "2", "doc_id": "43", "snippet": "The Tenant shall pay rent monthly in advance."}
    ]
    assert output["answer"] == "Rent is due monthly [2] and on time"


@pytest.mark.django_db
def test_the_pipeline_sends_the_passages_as_search_results_and_keeps_claudes_citations(
    tenant, case, api, settings
):
    settings.RAG_LLM_PROVIDER = "anthropic"
    ingest(
        tenant,
        case,
        "Acme Supply Agreement",
        f"SUPPLY AGREEMENT between Acme Inc and Globex Corp.\n\n{ASSIGNMENT}",
    )

    def answer(received: Received) -> Reply:
        if refused(received):
            return refused(received)
        body = received.json()
        results = [block for block in body["messages"][0]["content"] if block["type"] == "search_result"]
        cited = next(block for block in results if "Neither party may assign" in json.dumps(block))
        sentence = next(part["text"] for part in cited["content"] if "prior written consent" in part["text"])
        return Reply(
            200,
            reply(
                text_block("No. "),
                text_block(
                    "Assignment needs the other party's prior written consent",
                    location(cited["source"], 0, sentence),
                ),
                text_block("."),
            ),
        )

    api.answer = answer
    result = run_query(
        tenant=tenant, question="Can Acme assign the supply agreement without consent?", use_cache=False
    ).result
    assert result["answer"].startswith("No. Assignment needs the other party's prior written consent [1]")
    [citation] = result["citations"]
    assert "Neither party may assign this Agreement without the prior written consent" in citation["snippet"]
    assert not result["flags"]["hallucination_detected"] and not result["flags"]["needs_verification"]
    body = api.received[-1].json()
    prompt = body["messages"][0]["content"][-1]["text"]
    assert "<source" not in prompt, prompt  # the passages are not copied into it
    assert "Reply with a single JSON object" not in prompt
    assert "search results" in body["system"] or "search results" in prompt

    settings.ANTHROPIC_CITATIONS = False  # the JSON reply, passages in the prompt
    api.answer = lambda received: (
        refused(received)
        or Reply(200, reply({"type": "text", "text": json.dumps({"answer": "No [1].", "citations": []})}))
    )
    run_query(
        tenant=tenant, question="Can Acme assign the supply agreement without consent?", use_cache=False
    )
    assert isinstance(api.received[-1].json()["messages"][0]["content"], str)
    assert "<source" in api.received[-1].json()["messages"][0]["content"]


def _sse(event: str, data: dict) -> bytes:
    return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n".encode()
