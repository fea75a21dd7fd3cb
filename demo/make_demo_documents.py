"""Regenerate demo/documents/ from the CUAD v1 plain-text contracts named in demo/documents.json.

    .venv/bin/python demo/make_demo_documents.py [--cuad DIR]

A format conversion only: the contracts' words are kept. The PDF is laid out one original (EDGAR)
page per page with its "Source:" line as the footer, in a core font, so characters outside latin-1
are replaced by their nearest ASCII form (curly quotes → straight, bullets → "-"). The DOCX gets
Word heading styles for numbered and ALL-CAPS heading lines; its whitespace is reflowed and the
bare page numbers of the EDGAR layout are dropped. TXT files are copied byte for byte.

The output is deterministic (fixed creation dates and ZIP timestamps), so regenerating it changes
nothing in git unless this script or the sources change. fpdf2 is a development dependency.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import sys
import zipfile
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "documents"
MANIFEST = HERE / "documents.json"
DEFAULT_CUAD = Path("/work/shared/eval/cuad-full-corpus/cuad")
FIXED_DATE = datetime(2021, 3, 15, tzinfo=UTC)  # any fixed date would do (CUAD v1 appeared in March 2021)
ZIP_DATE = (2021, 3, 15, 0, 0, 0)
AUTHOR = "The Atticus Project, CUAD v1 (CC BY 4.0)"

_LATIN1_SAFE = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "--",
        "\u2022": "-",  # •
        "\u25cf": "-",  # ●
        "\u2026": "...",
        "\u00a0": " ",
    }
)
_SOURCE_LINE = re.compile(r"^\s*(Source: [^\n]+?)\s*$", re.MULTILINE)
_PAGE_NUMBER = re.compile(r"\d{1,3}")
_LEADING_PAGE_COUNTER = re.compile(r"^\d{1,3}\s{20,}")  # "1          EXHIBIT 10.17"
_NUMBERED = re.compile(r"(?P<number>\d{1,2}\.)\s+(?P<rest>.+)", re.DOTALL)
_RUN_IN_TITLE = re.compile(r"(?P<title>[A-Z][^.;:]{0,60}[.;:])\s+(?P<body>\S.*)", re.DOTALL)
MAX_TITLE_WORDS = 8
_LIST_LABEL = re.compile(r"\(?[a-z]{1,4}[.)]\s")  # "d. Mailing Lists", "(ii) the …"


def latin1(text: str) -> str:
    """`text` in characters a PDF core font can show; fails on anything not mapped."""
    safe = text.translate(_LATIN1_SAFE)
    unmapped = sorted({ch for ch in safe if ord(ch) > 0xFF})
    if unmapped:
        raise ValueError(f"no latin-1 replacement for {unmapped!r}; add one to _LATIN1_SAFE")
    return safe


def _is_caps_heading(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return len(letters) >= 3 and text.isupper() and len(text) <= 80


# --- PDF ------------------------------------------------------------------------------------------


def make_pdf(source: str, title: str) -> bytes:
    from fpdf import FPDF
    from fpdf.enums import XPos, YPos

    parts = _SOURCE_LINE.split(latin1(source))
    # [page text, source line, page text, source line, ...]; a trailing empty page is dropped.
    pages = [(parts[i].strip(), parts[i + 1]) for i in range(0, len(parts) - 1, 2) if parts[i].strip()]

    class Pdf(FPDF):
        footer_text = ""

        def footer(self):
            self.set_y(-15)
            self.set_font("Helvetica", "I", 8)
            self.cell(0, 10, self.footer_text, align="C")

    pdf = Pdf(format="Letter")
    pdf.set_creation_date(FIXED_DATE)
    pdf.set_title(title)
    pdf.set_author(AUTHOR)
    pdf.set_subject("CUAD v1 contract converted to PDF for the Lexrag demo")
    pdf.set_margins(25, 22, 25)
    pdf.set_auto_page_break(auto=True, margin=22)
    for text, source_line in pages:
        pdf.footer_text = source_line
        pdf.add_page()
        for paragraph in re.split(r"\s{3,}", text):
            heading = _is_caps_heading(paragraph)
            pdf.set_font("Helvetica", "B" if heading else "", 11 if heading else 10)
            pdf.multi_cell(
                0, 5, paragraph, align="C" if heading else "J", new_x=XPos.LMARGIN, new_y=YPos.NEXT
            )
            pdf.ln(2.5)
    return bytes(pdf.output())


# --- DOCX -----------------------------------------------------------------------------------------


def _continues(before: str, after: str) -> bool:
    """Whether `after`, found across a page break, continues the paragraph `before`."""
    if before.endswith((".", ":", ";", "!", "?")) or _LIST_LABEL.match(after):
        return False
    if after[0].islower():
        return True  # "… of a similar or" | "different nature …"
    # "… IF EITHER PARTY HAS NOT BEEN" | "REPRESENTED BY …"
    return before[-1].isalpha() and after[0].isalpha() and not _is_caps_heading(after)


def _docx_blocks(source: str) -> tuple[list[str], str]:
    """Paragraph texts with whitespace reflowed, and the EDGAR "Source:" line.

    Page numbers and "Source:" footers are layout, not contract text: they are dropped, and a
    paragraph the original page break cut in two is joined again.
    """
    footer = _SOURCE_LINE.search(source)
    blocks: list[str] = []
    page_break = False
    for raw in re.split(r"\n\s*\n", source):
        raw = _LEADING_PAGE_COUNTER.sub("", raw.strip())
        text = " ".join(raw.split())
        if not text or _PAGE_NUMBER.fullmatch(text) or _SOURCE_LINE.fullmatch(text):
            page_break = page_break or bool(text)
            continue
        if page_break and blocks and _continues(blocks[-1], text):
            blocks[-1] = f"{blocks[-1]} {text}"
        else:
            blocks.append(text)
        page_break = False
    return blocks, footer.group(1) if footer else ""


def _heading_split(text: str) -> tuple[str, str] | None:
    """("1. Term.", "This agreement shall …") for a numbered section; None for body text."""
    numbered = _NUMBERED.fullmatch(text)
    if not numbered or not numbered["rest"][0].isupper():
        return None
    number, rest = numbered["number"], numbered["rest"]
    if len(rest) <= 60 and len(rest.split()) <= MAX_TITLE_WORDS:  # "9. Warranties; Suspension, Termination"
        return f"{number} {rest}", ""
    run_in = _RUN_IN_TITLE.fullmatch(rest)  # "8. Term. This agreement shall …"
    if not run_in or len(run_in["title"].split()) > MAX_TITLE_WORDS:
        return None
    return f"{number} {run_in['title']}", run_in["body"]


def _fixed_zip_dates(data: bytes) -> bytes:
    """The same ZIP with every member dated ZIP_DATE (python-docx stamps members with "now")."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for member in source.infolist():
            info = zipfile.ZipInfo(member.filename, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            target.writestr(info, source.read(member))
    return out.getvalue()


def make_docx(source: str, title: str) -> bytes:
    import docx

    blocks, footer = _docx_blocks(source)
    document = docx.Document()
    properties = document.core_properties
    properties.title = title
    properties.author = AUTHOR
    properties.last_modified_by = AUTHOR
    properties.comments = "CUAD v1 contract converted to DOCX for the Lexrag demo"
    properties.created = properties.modified = FIXED_DATE.replace(tzinfo=None)
    properties.revision = 1
    document.sections[0].footer.paragraphs[0].text = footer
    for text in blocks:
        if _is_caps_heading(text):
            document.add_heading(text, level=1)
        elif split := _heading_split(text):
            heading, body = split
            document.add_heading(heading, level=2)
            if body:
                document.add_paragraph(body)
        else:
            document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return _fixed_zip_dates(buffer.getvalue())


# --- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuad", type=Path, default=DEFAULT_CUAD, help="folder of CUAD v1 .txt files")
    args = parser.parse_args(argv)

    OUTPUT.mkdir(exist_ok=True)
    for entry in json.loads(MANIFEST.read_text(encoding="utf-8"))["documents"]:
        source_path = args.cuad / entry["cuad_file"]
        target = OUTPUT / entry["file"]
        suffix = target.suffix.lower()
        if suffix == ".txt":
            shutil.copyfile(source_path, target)
        else:
            source = source_path.read_text(encoding="utf-8")
            make = {".pdf": make_pdf, ".docx": make_docx}[suffix]
            target.write_bytes(make(source, entry["title"]))
        print(f"{target.relative_to(HERE.parent)}: {target.stat().st_size / 1024:.1f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
