"""The memo reads as a firm's memo (#36 item 13): the firm's privilege legend on every page, To /
From / Date / Matter / Client / Re lines, the author's full name (not the username), and no
quote of a passage the answer never cites."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from types import SimpleNamespace

import docx
import pytest
from django.contrib.auth import get_user_model

from rag.exports.docx_memo import memo_docx
from rag.exports.memo import memo_entry, memo_text
from tenants.models import DEFAULT_MEMO_LEGEND, Role
from tests.api.test_answer_exports import QUERY, QUESTION, _footnotes
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def lawyer(client, tenant):
    user = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    user.username, user.first_name, user.last_name = "jroe7", "Jane", "Roe"
    user.save()
    client.force_login(user)
    return client


def _memo(client, **body) -> docx.document.Document:
    response = client.post(QUERY, {"query": QUESTION, **body}, content_type="application/json")
    assert response.status_code == 200, response.content
    memo = client.get(f"/ask/{response.json()['request_id']}/memo.docx")
    assert memo.status_code == 200
    return docx.Document(io.BytesIO(memo.content))


def _lines(memo) -> dict[str, str]:
    """The heading's "Label:<tab>value" lines as {label: value}."""
    pairs = (p.text.split(":\t", 1) for p in memo.paragraphs if ":\t" in p.text)
    return {label: value for label, value in pairs}


def _legends(memo) -> tuple[str, str]:
    """The legend atop the first page's text, and in the later pages' header."""
    return memo.paragraphs[0].text, memo.sections[0].header.paragraphs[0].text


def test_the_memo_is_headed_to_from_re_with_matter_client_legend_and_full_name(corpus, case, lawyer):
    memo = _memo(lawyer, filters={"case_ids": [case.pk]})
    assert _legends(memo) == (DEFAULT_MEMO_LEGEND, DEFAULT_MEMO_LEGEND)
    assert DEFAULT_MEMO_LEGEND == "Privileged & Confidential — Attorney Work Product"
    assert memo.sections[0].different_first_page_header_footer  # the first page has it once
    lines = _lines(memo)
    assert lines["To"] == "File"
    assert lines["From"] == "Jane Roe"
    assert lines["Matter"] == "Acme v. Globex"
    assert lines["Client"] == "Acme Corp"
    assert lines["Re"] == QUESTION
    assert lines["Date"]
    assert list(lines) == ["To", "From", "Date", "Matter", "Client", "Re"]
    everything = "\n".join(p.text for p in memo.paragraphs)
    assert "jroe7" not in everything


def test_a_question_asked_across_the_firm_names_the_matter_of_the_documents_it_cites(corpus, lawyer):
    lines = _lines(_memo(lawyer))
    assert lines["Matter"] == "Acme v. Globex" and lines["Client"] == "Acme Corp"


def test_a_conversation_memo_is_re_its_first_question_and_how_many_followed(corpus, case, lawyer):
    for question in (QUESTION, "Which law governs the master services agreement?"):
        body = {"query": question, "conversation_id": "conv-memo", "filters": {"case_ids": [case.pk]}}
        assert lawyer.post(QUERY, body, content_type="application/json").status_code == 200
    memo = lawyer.get("/conversations/conv-memo/memo.docx")
    assert memo.status_code == 200
    lines = _lines(docx.Document(io.BytesIO(memo.content)))
    assert lines["Re"] == f"{QUESTION} (and 1 follow-up question)"
    assert lines["From"] == "Jane Roe" and lines["Matter"] == "Acme v. Globex"


def test_a_firm_words_its_own_legend(corpus, tenant, lawyer):
    tenant.memo_legend = "Confidential: prepared at the request of counsel"
    tenant.save(update_fields=["memo_legend"])
    memo = _memo(lawyer)
    assert _legends(memo) == ((tenant.memo_legend,) * 2)
    assert DEFAULT_MEMO_LEGEND not in "\n".join(p.text for p in memo.paragraphs)
    assert tenant.memo_legend in lawyer.get("/settings/").content.decode()  # members see it, read-only


def test_the_operator_admin_edits_the_legend(client, tenant):
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.test", "pw-123456"))
    page = client.get(f"/admin/tenants/tenant/{tenant.pk}/change/").content.decode()
    assert 'name="memo_legend"' in page and "Privileged &amp; Confidential — Attorney Work Product" in page


# A stored answer citing two passages, only the first of them marked in its text.
ROW = SimpleNamespace(
    query="What law governs the distributor agreement?",
    created_at=datetime(2026, 11, 27, tzinfo=UTC),
    confidence=0.8,
    result={
        "answer": 'The distributor agreement is governed by PRC law: "governed by the laws of the PRC" [1]',
        "citations": [
            {
                "citation_id": "1",
                "title": "Distributor Agreement",
                "page": 9,
                "document_id": 1,
                "snippet": "governed by the laws of the PRC",
                "char_start": 10,
                "char_end": 41,
            },
            {
                "citation_id": "2",
                "title": "Marketing Agreement",
                "page": 2,
                "document_id": 2,
                "snippet": "NOW, THEREFORE, the parties agree",
                "char_start": 0,
                "char_end": 33,
            },
        ],
        "confidence_score": 0.8,
    },
)


def test_a_citation_the_answer_never_marks_is_named_but_not_quoted():
    entry = memo_entry(ROW)
    content = memo_docx([entry], firm="Acme Law LLP", author="Jane Roe")
    footnotes = _footnotes(content)
    assert footnotes == ["Distributor Agreement, page 9: “governed by the laws of the PRC”"]
    text = "\n".join(p.text for p in docx.Document(io.BytesIO(content)).paragraphs)
    assert "NOW, THEREFORE" not in text
    assert "Also retrieved, not cited in the answer: Marketing Agreement, page 2." in text

    copied = memo_text([entry])  # "Copy with citations" follows the same rule
    assert "NOW, THEREFORE" not in copied and "[2]" not in copied
    assert "[1] Distributor Agreement, page 9" in copied and "Marketing Agreement, page 2" in copied
