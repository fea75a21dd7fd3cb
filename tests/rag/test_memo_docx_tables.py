"""A comparison's table (an answer drawn with "|") is a real table in the Word memo, each citation a
footnote in its cell; the rest of the answer stays text."""

from __future__ import annotations

import io
import re
import zipfile
from datetime import UTC, datetime

import docx

from rag.exports.docx_memo import memo_docx
from rag.exports.memo import MemoEntry, answer_parts

ANSWER = (
    "Termination rights, side by side:\n"
    "| Document | Termination rights |\n"
    "| --- | --- |\n"
    '| Alpha Distribution Agreement | "Either party may terminate on 90 days\' notice." [1] |\n'
    "| Beta Supply Agreement | No termination provision found in Beta Supply Agreement. |\n"
    "Each side is quoted from its own document."
)
CITATIONS = [
    {
        "citation_id": "1",
        "title": "Alpha Distribution Agreement",
        "page": 3,
        "snippet": "Either party may terminate on 90 days' notice.",
        "document_id": 7,
        "char_start": 100,
        "char_end": 170,
    },
    {  # never marked in the answer: not quoted (#36 item 13)
        "citation_id": "2",
        "title": "Beta Supply Agreement",
        "page": 1,
        "snippet": "This Agreement continues for three (3) years.",
        "document_id": 8,
        "char_start": 0,
        "char_end": 45,
    },
]


def memo(answer: str = ANSWER) -> bytes:
    entry = MemoEntry(
        question="Compare the termination rights in the Alpha and Beta agreements",
        asked_at=datetime(2026, 11, 27, tzinfo=UTC),
        parts=answer_parts(answer, CITATIONS),
        message="",
        confidence=0.8,
    )
    return memo_docx([entry], firm="Acme Law LLP", author="A. Lawyer")


def test_a_comparison_is_a_word_table_with_its_citations_as_footnotes_in_the_cells():
    content = memo()
    document = docx.Document(io.BytesIO(content))
    assert len(document.tables) == 1
    table = document.tables[0]
    rows = [[cell.text for cell in row.cells] for row in table.rows]
    assert rows[0] == ["Document", "Termination rights"]  # the "| --- |" rule is no row
    assert [row[0] for row in rows[1:]] == ["Alpha Distribution Agreement", "Beta Supply Agreement"]
    assert rows[1][1] == '"Either party may terminate on 90 days\' notice."'
    assert rows[2][1] == "No termination provision found in Beta Supply Agreement."
    assert all(run.bold for run in table.rows[0].cells[0].paragraphs[0].runs)
    body = zipfile.ZipFile(io.BytesIO(content)).read("word/document.xml").decode()
    assert len(re.findall(r"<w:footnoteReference ", body)) == 1  # in Alpha's cell; Beta's is not marked
    assert "three (3) years" not in zipfile.ZipFile(io.BytesIO(content)).read("word/footnotes.xml").decode()
    text = "\n".join(p.text for p in document.paragraphs)
    assert (
        "Termination rights, side by side:" in text and "Each side is quoted from its own document." in text
    )
    assert "|" not in text


def test_an_answer_without_a_table_is_one_paragraph_of_lines_as_before():
    content = memo('Alpha Distribution Agreement states: "Either party may terminate …" [1]\nSecond line.')
    document = docx.Document(io.BytesIO(content))
    assert not document.tables
    answer = [p for p in document.paragraphs if "Second line." in p.text]
    assert len(answer) == 1 and "Either party may terminate" in answer[0].text
