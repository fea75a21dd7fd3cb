"""The research memo as a Word document (python-docx), each citation a real footnote.

python-docx writes paragraphs and runs but has no footnote API, so this module adds the
`word/footnotes.xml` part itself (the two separator footnotes Word expects, then one footnote per
citation reference) and puts a `w:footnoteReference` run where the answer cites. Word, LibreOffice
and Google Docs show them as ordinary footnotes.
"""

from __future__ import annotations

import io
from xml.sax.saxutils import escape

import docx
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.opc.constants import CONTENT_TYPE as CT
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import parse_xml
from docx.oxml.ns import qn
from docx.shared import Inches, Pt

from .memo import MemoEntry, Source, clean, uncited_note

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_SEPARATORS = (
    '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
    '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r>'
    "</w:p></w:footnote>"
)
_SUPERSCRIPT = '<w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'


def _lines(parts: tuple[str | Source, ...]) -> list[list[str | Source]]:
    """The answer's parts cut into its lines (a citation stays on the line that cites it)."""
    lines = _split(parts, "\n")
    return [[part for part in line if part != ""] for line in lines]


def _split(parts, separator: str) -> list[list[str | Source]]:
    """`parts` cut at every `separator` in their text; a citation stays with the text before it."""
    pieces: list[list[str | Source]] = [[]]
    for part in parts:
        if isinstance(part, Source):
            pieces[-1].append(part)
            continue
        first, *rest = part.split(separator)
        pieces[-1].append(first)
        pieces.extend([piece] for piece in rest)
    return pieces


def _is_row(line: list[str | Source]) -> bool:
    return bool(line) and isinstance(line[0], str) and line[0].lstrip().startswith("|")


def _blocks(lines: list[list[str | Source]]) -> list[tuple[bool, list[list[str | Source]]]]:
    """Runs of consecutive lines: (True, rows) for a table the answer draws with "|" (a
    comparison), (False, lines) for text."""
    blocks: list[tuple[bool, list[list[str | Source]]]] = []
    for line in lines:
        is_row = _is_row(line)
        if blocks and blocks[-1][0] == is_row:
            blocks[-1][1].append(line)
        else:
            blocks.append((is_row, [line]))
    return [(is_table, block) for is_table, block in blocks if any(block)]


def _cells(row: list[str | Source]) -> list[list[str | Source]]:
    """A table line's cells, each its text and citations ("| Alpha | "…" [1] |")."""
    cells = _split(row, "|")
    cells = [[p.strip() if isinstance(p, str) else p for p in cell] for cell in cells]
    if len(cells) <= 2:
        return cells
    # Drop the text before the first "|" and after the last; a citation marked after the last
    # stays in the last cell.
    *middle, tail = cells[1:]
    middle[-1].extend(part for part in tail if isinstance(part, Source) or part)
    return middle


_RULE = {"---", ":---", "---:", ":---:"}


def _add_table(document, rows: list[list[str | Source]], footnotes: list[str]) -> None:
    """The rows as a Word table, the first as its header, citations as footnotes in their cells."""
    cells = [_cells(row) for row in rows]
    cells = [row for row in cells if not all(_plain(cell) in _RULE for cell in row)]  # "| --- |"
    width = max(len(row) for row in cells)
    table = document.add_table(rows=len(cells), cols=width)
    table.style = "Table Grid"
    for r, row in enumerate(cells):
        for c, cell in enumerate(row):
            paragraph = table.cell(r, c).paragraphs[0]
            _write(paragraph, tuple(cell), footnotes)
            if r == 0:
                for run in paragraph.runs:
                    run.bold = True


def _plain(cell: list[str | Source]) -> str:
    return "".join(part for part in cell if isinstance(part, str)).strip()


def _write(paragraph, parts: tuple[str | Source, ...], footnotes: list[str]) -> None:
    """`parts` as runs of `paragraph`, each Source a footnote reference."""
    for index, part in enumerate(parts):
        if isinstance(part, Source):
            footnotes.append(_footnote_xml(len(footnotes) + 1, part.reference))
            paragraph._p.append(_reference_run(len(footnotes)))
            continue
        cites_next = index + 1 < len(parts) and isinstance(parts[index + 1], Source)
        paragraph.add_run(clean(part.rstrip() if cites_next else part))  # "governs¹", not "governs ¹"


def _footnote_xml(number: int, text: str) -> str:
    return (
        f'<w:footnote w:id="{number}"><w:p><w:pPr><w:spacing w:after="0"/></w:pPr>'
        f"<w:r>{_SUPERSCRIPT}<w:footnoteRef/></w:r>"
        f'<w:r><w:rPr><w:sz w:val="18"/></w:rPr><w:t xml:space="preserve"> {escape(clean(text))}</w:t></w:r>'
        "</w:p></w:footnote>"
    )


def _reference_run(number: int):
    return parse_xml(f'<w:r xmlns:w="{W_NS}">{_SUPERSCRIPT}<w:footnoteReference w:id="{number}"/></w:r>')


def _add_footnotes_part(document, footnotes: list[str]) -> None:
    xml = f'<w:footnotes xmlns:w="{W_NS}">{_SEPARATORS}{"".join(footnotes)}</w:footnotes>'
    part = Part(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, xml.encode(), document.part.package)
    document.part.relate_to(part, RT.FOOTNOTES)
    # Word finds the separators through the settings' footnote properties, which the schema
    # places just before <w:compat> (python-docx's template has one).
    properties = parse_xml(
        f'<w:footnotePr xmlns:w="{W_NS}"><w:footnote w:id="-1"/><w:footnote w:id="0"/></w:footnotePr>'
    )
    compat = document.settings.element.find(qn("w:compat"))
    if compat is not None:
        compat.addprevious(properties)
    else:
        document.settings.element.append(properties)


def _add_legend(document, legend: str) -> None:
    """The legend, bold and centred, atop the first page's text and in every later page's header
    (a memo printed or forwarded page by page keeps it)."""
    section = document.sections[0]
    section.different_first_page_header_footer = True
    header = section.header.paragraphs[0]
    header.alignment = WD_ALIGN_PARAGRAPH.CENTER
    header.add_run(legend).bold = True
    first = document.add_paragraph()
    first.alignment = WD_ALIGN_PARAGRAPH.CENTER
    first.add_run(legend).bold = True


def _subject(entries: list[MemoEntry]) -> str:
    """The Re line: the question, or a conversation's first one and how many followed."""
    if not entries:
        return ""
    more = len(entries) - 1
    follow_ups = f" (and {more} follow-up question{'s' if more > 1 else ''})" if more else ""
    return f"{entries[0].question}{follow_ups}"


def memo_docx(
    entries: list[MemoEntry],
    *,
    firm: str,
    author: str,
    title: str = "Research memo",
    legend: str = "",
    matter: str = "",
    client: str = "",
    to: str = "File",
) -> bytes:
    """The memo of `entries` as the bytes of a .docx file: the firm's privilege `legend` on every
    page, the firm, then To / From / Date / Matter / Client / Re lines, then each question, its
    answer with footnoted citations, and its confidence. "To: File" is a memo to the matter's
    file, the usual addressee of a research memo; the user forwards it from there."""
    document = docx.Document()
    document.styles["Normal"].font.size = Pt(11)
    if legend:
        _add_legend(document, clean(legend))
    document.add_heading(clean(title), level=0)
    document.add_paragraph(clean(firm))
    dates = sorted(entry.asked_at for entry in entries)
    when = dates[-1].strftime("%d %B %Y") if dates else ""
    fields = [("To", to), ("From", author), ("Date", when), ("Matter", matter), ("Client", client)]
    for label, value in [*fields, ("Re", _subject(entries))]:
        if value:
            line = document.add_paragraph()
            line.paragraph_format.space_after = Pt(0)
            line.paragraph_format.tab_stops.add_tab_stop(Inches(1))  # the values in one column
            line.add_run(f"{label}:").bold = True
            line.add_run(f"\t{clean(value)}")
    footnotes: list[str] = []
    for number, entry in enumerate(entries, 1):
        heading = "Question" if len(entries) == 1 else f"Question {number}"
        document.add_heading(heading, level=1)
        document.add_paragraph(clean(entry.question))
        document.add_heading("Answer", level=2)
        if not entry.answered:
            document.add_paragraph(clean(entry.unanswered_text))
        for is_table, lines in _blocks(_lines(entry.parts)):
            if is_table:
                _add_table(document, lines, footnotes)
            else:
                paragraph = document.add_paragraph()
                for number, line in enumerate(lines):
                    _write(paragraph, (*(("\n",) if number else ()), *line), footnotes)
        if entry.uncited:
            document.add_paragraph().add_run(clean(uncited_note(entry))).italic = True
        if entry.confidence is not None:
            note = document.add_paragraph()
            note.add_run(f"Confidence: {round(float(entry.confidence) * 100)} %").italic = True
    _add_footnotes_part(document, footnotes)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()
