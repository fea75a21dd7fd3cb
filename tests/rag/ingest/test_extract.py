"""rag.ingest.extract against real files in tests/fixtures/ (regenerate with make_fixtures.py)."""

from __future__ import annotations

import codecs
import io
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import docx
import pytest
from pypdf import PdfReader, PdfWriter

from rag.ingest.extract import (
    DOCX_MIME,
    PDF_MIME,
    TXT_MIME,
    ExtractedDocument,
    PageSpan,
    detect_kind,
    extract,
)
from rag.ingest.extract.headings import find_headings
from ragsite.exceptions import (
    CorruptDocument,
    DocumentTooComplex,
    EmptyFile,
    EncryptedDocument,
    NoExtractableText,
    UnsupportedMediaType,
)
from tests.fixtures.make_fixtures import document_xml, minimal_docx

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MB = 1024 * 1024


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def load(name: str) -> ExtractedDocument:
    data = fixture(name)
    kind, _ = detect_kind(data, name)
    return extract(data, kind)


def squash(text: str) -> str:
    """PDF text wraps lines; compare phrases with whitespace collapsed."""
    return " ".join(text.split())


def page_text(document: ExtractedDocument, number: int) -> str:
    page = document.pages[number - 1]
    assert page.number == number
    return document.text[page.start : page.end]


def raw_zip(entries: list[tuple[str, bytes, int, int]]) -> bytes:
    """A ZIP written by hand: (name, deflated payload, crc32, declared uncompressed size) per member.

    Lets a test reuse one compressed payload for many members, or declare sizes without paying for
    them; zipfile reads such archives like any other.
    """
    local, central = bytearray(), bytearray()
    for name, payload, crc, size in entries:
        encoded, offset = name.encode(), len(local)
        fields = (crc, len(payload), size, len(encoded))
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, *fields, 0) + encoded + payload
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, *fields, 0, 0, 0, 0, 0, offset
        )
        central += encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), len(local), 0)
    return bytes(local + central + end)


def deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def docx_with_body(body: bytes) -> bytes:
    return minimal_docx(document_xml(body))


def paragraph_xml(text: str, style: str | None = None) -> bytes:
    props = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f"<w:p>{props}<w:r><w:t>{text}</w:t></w:r></w:p>".encode()


# --- detect_kind ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kind", "mime"),
    [
        ("contract.pdf", "pdf", PDF_MIME),
        ("encrypted.pdf", "pdf", PDF_MIME),
        ("encrypted_empty_password.pdf", "pdf", PDF_MIME),
        ("scanned.pdf", "pdf", PDF_MIME),
        ("corrupt.pdf", "pdf", PDF_MIME),
        ("contract.docx", "docx", DOCX_MIME),
        ("zip_bomb.docx", "docx", DOCX_MIME),
        ("contract.txt", "txt", TXT_MIME),
        ("latin1.txt", "txt", TXT_MIME),
        ("utf16.txt", "txt", TXT_MIME),
        ("nul_bytes.txt", "txt", TXT_MIME),
    ],
)
def test_detect_kind_of_fixtures(name, kind, mime):
    assert detect_kind(fixture(name), name) == (kind, mime)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("image.png", "This file is a PNG image, not a PDF, DOCX, TXT or EML document."),
        ("not_docx.zip", "This file is a ZIP archive"),
        ("binary.txt", "its content is not readable text"),
    ],
)
def test_detect_kind_refuses_unsupported_content(name, words):
    with pytest.raises(UnsupportedMediaType) as info:
        detect_kind(fixture(name), name)
    assert words in info.value.message
    assert info.value.status_code == 415


def test_detect_kind_judges_content_not_name():
    # A file without an extension, or with an unknown one, is judged by its content alone.
    assert detect_kind(fixture("contract.pdf"), "scan")[0] == "pdf"
    assert detect_kind(fixture("contract.docx"), "contract.v2-final")[0] == "docx"
    assert detect_kind(fixture("contract.txt"), "notes.md")[0] == "txt"
    assert detect_kind(fixture("contract.pdf"), r"C:\Users\ann\Desktop\CONTRACT.PDF")[0] == "pdf"
    # A PNG named .pdf is still a PNG.
    with pytest.raises(UnsupportedMediaType, match="PNG image"):
        detect_kind(fixture("image.png"), "contract.pdf")


@pytest.mark.parametrize(
    ("source", "name", "words"),
    [
        ("contract.pdf", "contract.docx", "ends in .docx but the file is a PDF document"),
        ("contract.pdf", "contract.txt", "ends in .txt but the file is a PDF document"),
        ("contract.docx", "contract.pdf", "ends in .pdf but the file is a Word (DOCX) document"),
        ("contract.txt", "contract.pdf", "ends in .pdf but the file is a plain text (TXT) document"),
        ("contract.txt", "setup.exe", "ends in .exe"),
        ("contract.pdf", "photo.png", "ends in .png"),
        ("contract.docx", "contract.doc", "Rename it to end in .docx"),
    ],
)
def test_detect_kind_refuses_a_name_that_contradicts_the_content(source, name, words):
    with pytest.raises(UnsupportedMediaType) as info:
        detect_kind(fixture(source), name)
    assert words in info.value.message
    assert info.value.details["extension"] == name[name.rindex(".") :].lower()


def test_detect_kind_empty_file():
    with pytest.raises(EmptyFile):
        detect_kind(b"", "contract.pdf")
    # Whitespace is not "empty" for detection; extraction reports it has no text.
    assert detect_kind(b" \r\n\t ", "blank.txt")[0] == "txt"


def test_detect_kind_names_other_office_formats():
    part = b"<x/>"
    xlsx = raw_zip(
        [
            (name, deflate(part), zlib.crc32(part), len(part))
            for name in ("[Content_Types].xml", "xl/workbook.xml")
        ]
    )
    with pytest.raises(UnsupportedMediaType, match=r"Excel spreadsheet \(XLSX\)"):
        detect_kind(xlsx, "figures")
    legacy_doc = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4096)
    with pytest.raises(UnsupportedMediaType, match=r"old-style Microsoft Office file.*save it as \.docx"):
        detect_kind(legacy_doc, "brief.doc")
    with pytest.raises(UnsupportedMediaType, match="Rich Text Format"):
        detect_kind(b"{\\rtf1\\ansi Contract}", "contract")


def test_detect_kind_refuses_macro_enabled_word_files():
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(fixture("contract.docx"))) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            body = source.read(info)
            if info.filename == "[Content_Types].xml":
                body = body.replace(
                    b"officedocument.wordprocessingml.document.main+xml",
                    b"ms-word.document.macroEnabled.main+xml",
                )
            target.writestr(info, body)
    with pytest.raises(UnsupportedMediaType, match="macro-enabled Word document"):
        detect_kind(out.getvalue(), "contract")


def test_detect_kind_treats_many_nuls_as_binary():
    text = b"The Seller shall deliver the Goods. " * 10
    assert detect_kind(text[:200] + b"\x00" + text[200:], "a.txt")[0] == "txt"
    with pytest.raises(UnsupportedMediaType, match="not readable text"):
        detect_kind(text.replace(b" ", b"\x00", 20), "a.txt")


# --- PDF -----------------------------------------------------------------------------------------


def test_pdf_pages_are_numbered_contiguous_and_distinct():
    document = load("contract.pdf")
    assert (document.kind, document.mime_type, document.encoding) == ("pdf", PDF_MIME, None)
    assert [page.number for page in document.pages] == [1, 2, 3]
    assert document.pages[0].start == 0
    assert document.pages[-1].end == len(document.text)
    for before, after in zip(document.pages, document.pages[1:], strict=False):
        assert document.text[before.end : after.start] == "\n\n"

    assert "Purchase Price of the Product" in squash(page_text(document, 1))
    assert "Either Party may terminate this Agreement" in squash(page_text(document, 2))
    assert "Either Party may terminate" not in squash(page_text(document, 1) + page_text(document, 3))
    assert "IN WITNESS WHEREOF" in page_text(document, 3)
    assert "Timothy S Orr" in squash(page_text(document, 3))
    # The notices table (drawn as text lines) stays on page 2.
    assert "Steven Turetsky" in page_text(document, 2)


def test_pdf_page_at_boundaries():
    document = load("contract.pdf")
    first, second, third = document.pages
    assert document.page_at(0) == 1
    assert document.page_at(first.end - 1) == 1
    assert document.page_at(first.end) == 1  # the "\n\n" separator belongs to the earlier page
    assert document.page_at(second.start - 1) == 1
    assert document.page_at(second.start) == 2
    assert document.page_at(second.end - 1) == 2
    assert document.page_at(third.start) == 3
    assert document.page_at(len(document.text) - 1) == 3
    assert document.page_at(document.text.index("Either Party may terminate")) == 2
    for outside in (-1, len(document.text)):
        with pytest.raises(ValueError):
            document.page_at(outside)


def test_page_at_with_an_empty_page():
    text = "ab\n\n\n\ncd"  # page 2 (a blank page) has no characters of its own
    pages = [PageSpan(1, 0, 2), PageSpan(2, 4, 4), PageSpan(3, 6, 8)]
    document = ExtractedDocument(text=text, kind="pdf", mime_type=PDF_MIME, pages=pages, sections=[])
    assert [document.page_at(i) for i in range(len(text))] == [1, 1, 1, 1, 2, 2, 3, 3]


def test_pdf_sections_are_found_on_their_pages():
    document = load("contract.pdf")
    titles = [section.title for section in document.sections]
    assert titles == [
        "SUPPLY AGREEMENT",
        "1. PRODUCTS AND PAYMENTS",
        "2. TERM AND TERMINATION",
        "3. INDEMNIFICATION",
        "4. NOTICES",
        "5. ENTIRE AGREEMENT",
        "IN WITNESS WHEREOF",
    ]
    by_title = {section.title: section for section in document.sections}
    for section in document.sections:
        assert document.text.startswith(section.title, section.start)
    assert document.page_at(by_title["2. TERM AND TERMINATION"].start) == 2
    assert document.page_at(by_title["IN WITNESS WHEREOF"].start) == 3


def test_encrypted_pdf_needs_its_password():
    with pytest.raises(EncryptedDocument) as info:
        load("encrypted.pdf")
    assert "password-protected" in info.value.message
    assert info.value.status_code == 422


def test_pdf_encrypted_with_empty_user_password_is_extracted():
    assert load("encrypted_empty_password.pdf").text == load("contract.pdf").text


def aes_pdf(user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(fixture("contract.pdf"))))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def test_aes_encrypted_pdfs():
    # AES needs the `cryptography` package; owner-password-only PDFs are common in practice.
    assert "Either Party may terminate" in squash(extract(aes_pdf(""), "pdf").text)
    with pytest.raises(EncryptedDocument):
        extract(aes_pdf("s3cret"), "pdf")


def test_scanned_pdf_has_no_extractable_text():
    with pytest.raises(NoExtractableText) as info:
        load("scanned.pdf")
    assert info.value.message.startswith("No extractable text")


def test_truncated_pdf_is_corrupt():
    with pytest.raises(CorruptDocument, match="incomplete"):
        load("corrupt.pdf")


def test_pdf_with_garbage_after_the_header_is_corrupt():
    data = b"%PDF-1.7\n" + bytes(range(256)) * 8 + b"\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
    assert detect_kind(data, "x.pdf")[0] == "pdf"
    with pytest.raises(CorruptDocument, match="damaged"):
        extract(data, "pdf")


def test_pdf_with_too_many_pages_is_refused_before_reading_them():
    writer = PdfWriter()
    for _ in range(5001):
        writer.add_blank_page(612, 792)
    out = io.BytesIO()
    writer.write(out)
    with pytest.raises(DocumentTooComplex) as info:
        extract(out.getvalue(), "pdf")
    assert info.value.details == {"pages": 5001, "max_pages": 5000}


# --- DOCX ----------------------------------------------------------------------------------------


def test_docx_sections_come_from_heading_styles():
    document = load("contract.docx")
    assert (document.kind, document.mime_type, document.encoding) == ("docx", DOCX_MIME, None)
    assert document.pages == [PageSpan(number=1, start=0, end=len(document.text))]
    assert [section.title for section in document.sections] == [
        "SUPPLY AGREEMENT",  # Title style
        "1. PRODUCTS AND PAYMENTS",
        "2. TERM AND TERMINATION",
        "3. INDEMNIFICATION",
        "4. NOTICES",
        "5. ENTIRE AGREEMENT",
        "B. Governing Law",  # Heading 2
        "IN WITNESS WHEREOF",
    ]
    for section in document.sections:
        assert document.text.startswith(section.title + "\n", section.start)


def test_docx_tables_appear_where_they_are():
    text = load("contract.docx").text
    rows = [
        "Party | Address | Attention",
        "Shi Farms | 214 39th Lane, Pueblo, CO 81006 | Steven Turetsky",
        "Gridiron | 1119 West 1st Ave - Suite G, Spokane, WA 99021 | Tim Orr",
    ]
    assert "\n".join(rows) in text
    assert text.index("on the next business day.") < text.index(rows[0]) < text.index("5. ENTIRE AGREEMENT")
    assert "\n\n" not in text  # paragraphs joined by one newline, empty ones dropped


def test_docx_merged_cells_are_written_once_and_content_controls_are_read():
    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 1)).text = "Term"
    table.cell(0, 2).text = "Five years"
    table.cell(1, 0).text = "Fee"
    out = io.BytesIO()
    document.save(out)
    assert extract(out.getvalue(), "docx").text == "Term | Five years\nFee |  | "

    control = (
        b"<w:sdt><w:sdtContent>" + paragraph_xml("Inside a content control") + b"</w:sdtContent></w:sdt>"
    )
    text = extract(docx_with_body(paragraph_xml("Before") + control + paragraph_xml("After")), "docx").text
    assert text == "Before\nInside a content control\nAfter"


def test_docx_without_heading_styles_falls_back_to_heading_lines():
    body = paragraph_xml("ARTICLE 1 DEFINITIONS") + paragraph_xml("Terms have the meanings below.")
    document = extract(docx_with_body(body), "docx")
    assert [(s.title, s.start) for s in document.sections] == [("ARTICLE 1 DEFINITIONS", 0)]


def test_empty_docx_has_no_extractable_text():
    out = io.BytesIO()
    docx.Document().save(out)
    with pytest.raises(NoExtractableText):
        extract(out.getvalue(), "docx")


def test_truncated_docx_is_corrupt():
    data = fixture("contract.docx")[:20_000]
    assert detect_kind(data, "contract.docx")[0] == "docx"
    with pytest.raises(CorruptDocument, match="Word file is damaged"):
        extract(data, "docx")


def test_password_protected_word_file():
    # Word stores an encrypted .docx as an OLE container with an "EncryptedPackage" stream.
    data = (
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(512) + "EncryptedPackage".encode("utf-16-le") + bytes(512)
    )
    assert detect_kind(data, "contract.docx")[0] == "docx"
    with pytest.raises(EncryptedDocument):
        extract(data, "docx")


def test_zip_bomb_is_refused_without_inflating_it():
    data = fixture("zip_bomb.docx")
    assert detect_kind(data, "zip_bomb.docx")[0] == "docx"
    tracemalloc.start()
    try:
        with pytest.raises(DocumentTooComplex) as info:
            extract(data, "docx")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Refused from the archive's declared sizes: the member is never decompressed into memory.
    assert peak < 16 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB"
    assert "zip bomb" in info.value.message
    assert info.value.details["member"] == "word/document.xml"


def test_zip_limits_are_judged_from_the_directory_without_decompressing():
    # The member claims 3.5 GB but its data is not even valid DEFLATE: had anything been
    # decompressed the error would be CorruptDocument, not DocumentTooComplex.
    bogus = bytes(range(256)) * 4
    data = raw_zip([("word/document.xml", bogus, 0, 3500 * MB)])
    assert detect_kind(data, "contract.docx")[0] == "docx"
    with pytest.raises(DocumentTooComplex):
        extract(data, "docx")


def test_docx_total_uncompressed_size_limit():
    # 21 members of 10 MB: each ratio check passes (not over 10 MB), the 200 MB total does not.
    member = b" " * (10 * MB)
    payload, crc = deflate(member), zlib.crc32(member)
    entries = [(f"word/media/part{i}.xml", payload, crc, len(member)) for i in range(21)]
    body = document_xml(paragraph_xml("Hello"))
    data = raw_zip([("word/document.xml", deflate(body), zlib.crc32(body), len(body)), *entries])
    with pytest.raises(DocumentTooComplex) as info:
        extract(data, "docx")
    assert info.value.details["uncompressed_bytes"] > 200 * MB


def test_docx_main_part_size_limit():
    # Declared 101 MB at a modest ratio (< 100): only the document.xml limit applies.
    payload = bytes(range(256)) * 4096 * 2  # 2 MB standing in for compressed data
    data = raw_zip([("word/document.xml", payload, 0, 101 * MB)])
    with pytest.raises(DocumentTooComplex) as info:
        extract(data, "docx")
    assert info.value.details == {"uncompressed_bytes": 101 * MB}


def test_docx_with_too_many_members():
    empty = deflate(b"")
    data = raw_zip([(f"word/{name}.xml", empty, 0, 0) for name in ["document", *range(10_000)]])
    # zipfile is not even asked to parse it; the Word body's name in a local header is enough.
    assert detect_kind(data, "")[0] == "docx"
    with pytest.raises(DocumentTooComplex, match="more than 10000 internal files"):
        extract(data, "docx")


def test_docx_with_entity_declarations_is_refused():
    laughs = b"".join(b'<!ENTITY l%d "%s">' % (i, b"&l%d;" % (i - 1) * 10) for i in range(1, 10))
    xml = (
        b'<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY l0 "lol">' + laughs + b"]>"
        b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        b"<w:body><w:p><w:r><w:t>&l9;</w:t></w:r></w:p></w:body></w:document>"
    )
    with pytest.raises(DocumentTooComplex, match="DTD"):
        extract(minimal_docx(xml), "docx")


# --- TXT -----------------------------------------------------------------------------------------


def test_txt_offsets_are_file_offsets():
    data = fixture("contract.txt")
    document = extract(data, detect_kind(data, "contract.txt")[0])
    assert document.text == data.decode("utf-8")
    assert (document.kind, document.mime_type, document.encoding) == ("txt", TXT_MIME, "utf-8")
    assert "\r\n" in document.text  # newlines are not normalised
    assert "UCC § 2-207" in document.text
    assert "“Goods”" in document.text
    assert document.pages == [PageSpan(1, 0, len(document.text))]
    assert [(s.title, document.text[s.start : s.start + len(s.title)]) for s in document.sections] == [
        ("MASTER PURCHASE AGREEMENT", "MASTER PURCHASE AGREEMENT"),
        ("ARTICLE 1 — DEFINITIONS", "ARTICLE 1 — DEFINITIONS"),
        ("Section 2. Acceptance", "Section 2. Acceptance"),
        ("3. GOVERNING LAW", "3. GOVERNING LAW"),
    ]


def test_txt_keeps_a_utf8_bom_as_python_reads_it():
    data = codecs.BOM_UTF8 + fixture("contract.txt")
    document = extract(data, "txt")
    assert document.text == data.decode("utf-8")
    assert document.text[0] == "\ufeff"
    assert document.encoding == "utf-8"


def test_txt_cp1252_and_latin1_fallbacks():
    data = fixture("latin1.txt")
    document = extract(data, detect_kind(data, "latin1.txt")[0])
    assert document.encoding == "cp1252"
    assert document.text == data.decode("cp1252")
    assert "150 000 €" in document.text
    assert "“Force majeure”" in document.text
    # 0x81 is undefined in cp1252, so only Latin-1 can decode it.
    document = extract(b"Clause \x81 r\xe9siliation", "txt")
    assert (document.encoding, document.text) == ("latin-1", "Clause \x81 résiliation")


@pytest.mark.parametrize("bom", [codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE])
def test_txt_utf16_with_bom(bom):
    data = fixture("utf16.txt")
    if bom == codecs.BOM_UTF16_BE:
        data = bom + data[2:].decode("utf-16-le").encode("utf-16-be")
    document = extract(data, detect_kind(data, "utf16.txt")[0])
    assert document.encoding == "utf-16"
    assert document.text == data.decode("utf-16")  # the BOM is consumed, as open() does
    assert "中文条款" in document.text
    assert [s.title for s in document.sections] == ["ARTICLE I"]


def test_txt_utf16_bom_with_broken_content_is_corrupt():
    with pytest.raises(CorruptDocument, match="UTF-16"):
        extract(codecs.BOM_UTF16_LE + "Term".encode("utf-16-le")[:-1], "txt")


def test_txt_stray_nuls_become_replacement_characters_one_for_one():
    data = fixture("nul_bytes.txt")
    document = extract(data, detect_kind(data, "nul_bytes.txt")[0])
    assert len(document.text) == len(data)
    assert "\x00" not in document.text
    positions = [i for i, byte in enumerate(data) if byte == 0]
    assert [i for i, ch in enumerate(document.text) if ch == "\ufffd"] == positions == [100, 901, 902]


@pytest.mark.parametrize(
    "data", [b" \r\n\t ", codecs.BOM_UTF8 + b"\n\n", codecs.BOM_UTF16_LE + " \n".encode("utf-16-le")]
)
def test_blank_txt_has_no_extractable_text(data):
    with pytest.raises(NoExtractableText):
        extract(data, "txt")


# --- extract() and headings ----------------------------------------------------------------------


def test_extract_rejects_unknown_kind_and_empty_data():
    with pytest.raises(ValueError, match="unknown document kind"):
        extract(b"hello", "rtf")
    with pytest.raises(EmptyFile):
        extract(b"", "pdf")


def test_find_headings_skips_prose():
    text = (
        "ARTICLE IV\n"
        "Section 4 of this Agreement shall survive termination.\n"
        "  Section 10. Term and Termination\n"
        "10 days after notice the Buyer may cure.\n"
        "1. Definitions. As used in this Agreement, the following terms apply.\n"
        "THE SOFTWARE IS PROVIDED AS IS, WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING\n"
        "EXHIBIT A\n"
        "$150,000\n"
    )
    sections = find_headings(text)
    assert [s.title for s in sections] == [
        "ARTICLE IV",
        "Section 10. Term and Termination",
        "1. Definitions",
        "EXHIBIT A",
    ]
    assert text[sections[1].start :].startswith("Section 10.")  # leading spaces are not part of it


def test_find_headings_is_capped():
    assert len(find_headings("ARTICLE 1\n" * 5000)) == 2000
