"""DOCX: paragraphs and tables in document order, headings from Word's heading styles.

The ZIP container and its XML are checked before python-docx touches them: a small upload can
decompress to gigabytes (zip bomb) or declare entities that expand exponentially (billion laughs).
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator

import docx
from docx.opc.exceptions import OpcError
from docx.oxml.exceptions import InvalidXmlError
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import etree

from rag.ingest.extract.document import DOCX_MIME, ExtractedDocument, SectionSpan, single_page
from rag.ingest.extract.headings import MAX_SECTIONS, find_headings
from ragsite.exceptions import CorruptDocument, DocumentTooComplex, EncryptedDocument, NoExtractableText

MB = 1024 * 1024
MAX_MEMBERS = 10_000
MAX_TOTAL_UNCOMPRESSED = 200 * MB
MAX_DOCUMENT_XML = 100 * MB
MAX_RATIO = 100  # only enforced for members larger than RATIO_MIN_SIZE: tiny XML compresses well
RATIO_MIN_SIZE = 10 * MB
MAIN_PART = "word/document.xml"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Word saves a password-protected .docx as an OLE container holding an "EncryptedPackage" stream.
ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")
# A DOCX never needs a DTD, and only a DTD can declare entities. Searched in UTF-8 and UTF-16.
_DTD_MARKERS = [
    marker.encode(encoding)
    for marker in ("<!DOCTYPE", "<!ENTITY")
    for encoding in ("utf-8", "utf-16-le", "utf-16-be")
]
_DTD = re.compile(b"|".join(re.escape(marker) for marker in _DTD_MARKERS))
_DTD_OVERLAP = max(len(marker) for marker in _DTD_MARKERS)
ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError, NotImplementedError)
# What python-docx and lxml raise on malformed packages and XML; converted to CorruptDocument.
_PARSE_ERRORS = (
    *ZIP_ERRORS,
    KeyError,
    IndexError,
    TypeError,
    AttributeError,
    etree.LxmlError,
    OpcError,
    InvalidXmlError,
)
_CENTRAL_DIRECTORY_ENTRY = b"PK\x01\x02"
_SCAN_CHUNK = 1 * MB
_HEADING_STYLES = ("Heading", "Title")


def is_encrypted_office_file(data: bytes) -> bool:
    """A password-protected Word (or other Office) file, which is an OLE container, not a ZIP."""
    return data.startswith(OLE_MAGIC) and ENCRYPTED_PACKAGE in data


def open_zip(data: bytes) -> zipfile.ZipFile:
    """The archive, refusing more than MAX_MEMBERS entries before zipfile parses them all.

    Raises DocumentTooComplex, or one of ZIP_ERRORS for a damaged archive.
    """
    # Counting central-directory signatures is a cheap upper bound on the number of members.
    if data.count(_CENTRAL_DIRECTORY_ENTRY) > MAX_MEMBERS:
        raise DocumentTooComplex(
            f"The document contains more than {MAX_MEMBERS} internal files.",
            details={"max_members": MAX_MEMBERS},
        )
    return zipfile.ZipFile(io.BytesIO(data))


def check_zip_limits(archive: zipfile.ZipFile) -> None:
    """Refuse zip bombs from the central directory alone, without decompressing anything.

    The declared sizes can be trusted as upper bounds: zipfile never returns more than a member's
    declared size (a member that inflates further fails its CRC check instead).
    """
    members = archive.infolist()
    too_complex = "The document is too large to process safely once decompressed."
    if len(members) > MAX_MEMBERS:
        raise DocumentTooComplex(too_complex, details={"members": len(members), "max_members": MAX_MEMBERS})
    total = sum(info.file_size for info in members)
    if total > MAX_TOTAL_UNCOMPRESSED:
        raise DocumentTooComplex(too_complex, details={"uncompressed_bytes": total})
    for info in members:
        if info.file_size > RATIO_MIN_SIZE and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise DocumentTooComplex(
                "The document is compressed suspiciously well (a possible zip bomb) and was not opened.",
                details={"member": info.filename, "uncompressed_bytes": info.file_size},
            )
        if info.filename == MAIN_PART and info.file_size > MAX_DOCUMENT_XML:
            raise DocumentTooComplex(too_complex, details={"uncompressed_bytes": info.file_size})


def check_no_dtd(archive: zipfile.ZipFile) -> None:
    """Refuse XML parts that carry a DTD (entity expansion, external entities).

    python-docx parses with resolve_entities=False and libxml2 caps entity amplification, so this
    is defence in depth, and it turns such files into a clear DocumentTooComplex.
    """
    for info in archive.infolist():
        if not info.filename.lower().endswith((".xml", ".rels")):
            continue
        with archive.open(info) as member:
            tail = b""
            while chunk := member.read(_SCAN_CHUNK):
                if _DTD.search(tail + chunk):
                    raise DocumentTooComplex(
                        "The document contains XML declarations (a DTD) that are not allowed in Word files.",
                        details={"member": info.filename},
                    )
                tail = chunk[-_DTD_OVERLAP:]


def _blocks(container, document) -> Iterator[Paragraph | Table]:
    """Body paragraphs and tables in document order, including those inside content controls."""
    for child in container.iterchildren():
        if child.tag == qn("w:p"):
            yield Paragraph(child, document)
        elif child.tag == qn("w:tbl"):
            yield Table(child, document)
        elif child.tag == qn("w:sdt"):
            content = child.find(qn("w:sdtContent"))
            if content is not None:
                yield from _blocks(content, document)


def _table_text(table: Table) -> str:
    """One line per row, cells joined with " | "; a merged cell is written once per row."""
    lines = []
    for row in table.rows:
        cells, previous = [], None
        for cell in row.cells:
            if cell is not previous:  # python-docx repeats the same object across a horizontal span
                cells.append(" ".join(cell.text.split()))
            previous = cell
        if any(cells):
            lines.append(" | ".join(cells))
    return "\n".join(lines)


def _is_heading(paragraph: Paragraph) -> bool:
    style = paragraph.style
    return bool(style is not None and style.name and style.name.startswith(_HEADING_STYLES))


def _load(data: bytes):
    if is_encrypted_office_file(data):
        raise EncryptedDocument()
    try:
        archive = open_zip(data)
        with archive:
            check_zip_limits(archive)
            check_no_dtd(archive)
        return docx.Document(io.BytesIO(data))
    except _PARSE_ERRORS as exc:
        raise CorruptDocument("The Word file is damaged and cannot be read.") from exc


def _block_texts(document) -> Iterator[tuple[str, bool]]:
    """(text, is_heading) for each paragraph and table of the body."""
    for block in _blocks(document.element.body, document):
        if isinstance(block, Table):
            yield _table_text(block), False
        else:
            yield block.text, _is_heading(block)


def extract_docx(data: bytes) -> ExtractedDocument:
    """Paragraphs and table rows, one block per line; empty paragraphs are dropped."""
    document = _load(data)
    try:
        blocks = list(_block_texts(document))
    except _PARSE_ERRORS as exc:
        raise CorruptDocument("The Word file is damaged and cannot be read.") from exc
    parts: list[str] = []
    headings: list[SectionSpan] = []
    offset = 0
    for text, heading in blocks:
        if not text.strip():
            continue
        if parts:
            offset += 1  # the "\n" joining this block to the previous one
        if heading and len(headings) < MAX_SECTIONS:
            headings.append(SectionSpan(title=" ".join(text.split())[:120], start=offset))
        parts.append(text)
        offset += len(text)
    text = "\n".join(parts)
    if not text:
        raise NoExtractableText("No extractable text: the Word document has no text in its body.")
    return ExtractedDocument(
        text=text,
        kind="docx",
        mime_type=DOCX_MIME,
        pages=single_page(text),
        # Documents formatted by hand (bold lines, no heading styles) still get detected headings.
        sections=headings or find_headings(text),
    )
