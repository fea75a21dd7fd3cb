"""Answers as work product (#23 item 6): a DOCX memo whose footnotes quote the cited passages
exactly, text with citations, conversation memos; the caller's own answers only, each recorded."""

from __future__ import annotations

import io
import re
import zipfile
from xml.etree import ElementTree

import docx
import pytest

from rag.models import AnswerExport, Document
from tenants.models import Role
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db

QUERY = "/api/v1/rag/query"
QUESTION = "How much notice is needed to terminate the master services agreement?"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _ask(client, question=QUESTION, **body) -> dict:
    response = client.post(QUERY, {"query": question, **body}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _footnotes(content: bytes) -> list[str]:
    """The text of each real footnote of a .docx, in order (the two separators left out)."""
    part = zipfile.ZipFile(io.BytesIO(content)).read("word/footnotes.xml")
    root = ElementTree.fromstring(part)  # noqa: S314 - the app's own output
    notes = [n for n in root.iter(f"{W}footnote") if int(n.get(f"{W}id")) > 0]
    return ["".join(t.text or "" for t in note.iter(f"{W}t")).strip() for note in notes]


def _references(content: bytes) -> int:
    body = zipfile.ZipFile(io.BytesIO(content)).read("word/document.xml")
    return len(re.findall(rb"<w:footnoteReference ", body))


def test_docx_memo_footnotes_quote_the_document_at_the_cited_offsets(corpus, viewer_client):
    answer = _ask(viewer_client)
    assert answer["citations"]
    response = viewer_client.get(f"/api/v1/rag/queries/{answer['request_id']}/export")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    assert "attachment" in response["Content-Disposition"]
    content = response.content

    memo = docx.Document(io.BytesIO(content))  # a valid Word package
    text = "\n".join(p.text for p in memo.paragraphs)
    assert QUESTION in text and "ninety (90) days" in text
    footnotes = _footnotes(content)
    assert len(footnotes) == _references(content) >= len(answer["citations"])
    for citation in answer["citations"]:
        document = Document.objects.get(pk=citation["document_id"])
        passage = document.text[citation["char_start"] : citation["char_end"]]
        expected = f"{citation['title']}, page {citation['page']}"
        assert any(note.startswith(expected) and f"“{passage}”" in note for note in footnotes), (
            expected,
            footnotes,
        )


def test_text_with_citations_numbers_each_source(corpus, viewer_client):
    answer = _ask(viewer_client)
    response = viewer_client.get(f"/api/v1/rag/queries/{answer['request_id']}/export", {"as": "text"})
    assert response.status_code == 200
    text = response.content.decode()
    assert text.startswith(f"Question: {QUESTION}")
    assert "Sources:\n[1] " in text
    first = answer["citations"][0]
    assert f"[1] {first['title']}, page {first['page']}: “{first['snippet']}”" in text


def test_every_export_is_recorded(corpus, viewer_client, tenant):
    answer = _ask(viewer_client)
    viewer_client.get(f"/api/v1/rag/queries/{answer['request_id']}/export")
    viewer_client.get(f"/api/v1/rag/queries/{answer['request_id']}/export", {"as": "text"})
    records = list(AnswerExport.objects.filter(tenant=tenant).order_by("created_at"))
    assert [r.format for r in records] == ["docx", "text"]
    assert all(r.request_ids == [answer["request_id"]] for r in records)
    assert records[0].api_key_prefix == viewer_client.raw_key.split("_")[1]


def test_a_conversation_exports_in_order(corpus, viewer_client):
    first = _ask(viewer_client, conversation_id="conv-1")
    second = _ask(viewer_client, "Which law governs the master services agreement?", conversation_id="conv-1")
    response = viewer_client.get("/api/v1/rag/conversations/conv-1/export", {"as": "text"})
    assert response.status_code == 200
    text = response.content.decode()
    assert text.index(QUESTION) < text.index("Which law governs")
    record = AnswerExport.objects.get(conversation_id="conv-1")
    assert record.request_ids == [first["request_id"], second["request_id"]]


def test_an_unknown_format_is_a_clear_400(corpus, viewer_client):
    answer = _ask(viewer_client)
    response = viewer_client.get(f"/api/v1/rag/queries/{answer['request_id']}/export", {"as": "pdf"})
    assert response.status_code == 400
    assert response.json()["error_type"] in ("ValidationError", "InvalidInput")
    assert not AnswerExport.objects.exists()


def test_another_callers_or_firms_answer_is_not_found(
    corpus, viewer_client, member_client, other_admin_client
):
    answer = _ask(viewer_client)
    for client in (member_client, other_admin_client):
        response = client.get(f"/api/v1/rag/queries/{answer['request_id']}/export")
        assert response.status_code == 404
        assert response.json()["error_type"] == "NotFound"
    assert other_admin_client.get("/api/v1/rag/conversations/x/export").status_code == 404
    assert not AnswerExport.objects.exists()


def test_staff_ui_exports_the_users_own_answer(corpus, client, tenant, other_tenant):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    client.force_login(user)
    response = client.post(QUERY, {"query": QUESTION}, content_type="application/json")
    request_id = response.json()["request_id"]

    memo = client.get(f"/ask/{request_id}/memo.docx")
    assert memo.status_code == 200 and memo["Cache-Control"] == "no-store"
    assert _footnotes(memo.content)
    text = client.get(f"/ask/{request_id}/citations.txt")
    assert text.status_code == 200 and "Sources:" in text.content.decode()
    assert "attachment" not in text.get("Content-Disposition", "")
    history = client.get("/history/").content.decode()
    assert f"/ask/{request_id}/memo.docx" in history
    assert f'href="/ask/{request_id}/"' in history  # the question opens its answer

    stranger = MembershipFactory(tenant=other_tenant, role=Role.ADMIN).user
    client.force_login(stranger)
    assert client.get(f"/ask/{request_id}/memo.docx").status_code == 404
    assert AnswerExport.objects.filter(user=user).count() == 2


def test_an_answer_not_found_exports_what_the_reader_was_told(corpus, viewer_client):
    # "Not found" alone drops what the lawyer read (a review's "None of …", a "No: … does not
    # contain …"): the memo says the same words.
    answer = _ask(viewer_client, "Which of these agreements have a source code escrow?")
    assert answer["answer"] is None and answer["message"].startswith("None of the ")
    assert _exported_text(viewer_client, answer).endswith(f"Answer: {answer['message']}\n")
    content = viewer_client.get(f"/api/v1/rag/queries/{answer['request_id']}/export").content
    paragraphs = [p.text for p in docx.Document(io.BytesIO(content)).paragraphs]
    assert answer["message"] in paragraphs
    # The API's generic "not found" reads as the memo's own words.
    plain = _ask(
        viewer_client, "What does the source code escrow clause of the master services agreement require?"
    )
    assert plain["message"] == "Information not found in the knowledge base."
    assert _exported_text(viewer_client, plain).endswith("Answer: Not found in the documents.\n")


def _exported_text(client, answer: dict) -> str:
    return client.get(f"/api/v1/rag/queries/{answer['request_id']}/export", {"as": "text"}).content.decode()
