"""Judge an upload's type from its content (magic bytes, ZIP structure), then check its name agrees."""

from __future__ import annotations

import os
import re
import zipfile

from rag.ingest.extract.detect_image import IMAGE_EXTENSION_KINDS, IMAGE_KIND_NAMES, image_kind
from rag.ingest.extract.document import MIME_TYPES
from rag.ingest.extract.docx import MAIN_PART, OLE_MAGIC, ZIP_ERRORS, is_encrypted_office_file, open_zip
from rag.ingest.extract.email_sniff import is_outlook_message, looks_like_email
from rag.ingest.extract.txt import looks_like_text
from ragsite.exceptions import DocumentTooComplex, EmptyFile, UnsupportedMediaType

EXTENSION_KINDS = {".pdf": "pdf", ".docx": "docx", ".txt": "txt", ".eml": "eml", **IMAGE_EXTENSION_KINDS}
KIND_NAMES = {
    "pdf": "a PDF document",
    "docx": "a Word (DOCX) document",
    "txt": "a plain text (TXT) document",
    "eml": "an e-mail (EML) message",
    **IMAGE_KIND_NAMES,
}
# Names of other known (mostly binary) types: refused even when the content is acceptable, because
# a renamed file is more likely a mistake than a document.
REFUSED_EXTENSIONS = frozenset(
    {
        *(".exe", ".dll", ".msi", ".bat", ".cmd", ".com", ".scr", ".bin", ".so", ".dylib", ".apk", ".jar"),
        *(".iso", ".dmg", ".zip", ".gz", ".tgz", ".7z", ".rar", ".tar", ".bz2", ".xz"),
        *(".gif", ".bmp", ".webp", ".heic", ".svg", ".ico"),
        *(".doc", ".dot", ".docm", ".dotx", ".dotm", ".xls", ".xlsx", ".xlsm", ".ppt", ".pptx"),
        *(".odt", ".ods", ".odp", ".rtf", ".pages", ".msg", ".mp3", ".mp4", ".mov", ".avi", ".wav", ".m4a"),
    }
)
_SUPPORTED = "a PDF, DOCX, TXT or EML document or a scanned page (PNG, JPEG, TIFF)"
_OUTLOOK = (
    "This file is an Outlook message (.msg), which cannot be read here. Save or download the e-mail "
    "as .eml (Outlook on the web, the new Outlook, Gmail, Apple Mail and Thunderbird do) and upload that."
)
_OFFICE_HINT = " Open it in Word and save it as .docx or PDF, then upload that file."
# (magic bytes, short name for details, what to tell the user)
_SIGNATURES = (
    (b"GIF87a", "gif", "a GIF image"),
    (b"GIF89a", "gif", "a GIF image"),
    (OLE_MAGIC, "ole", "an old-style Microsoft Office file (such as .doc, .xls or .ppt)"),
    (b"{\\rtf", "rtf", "a Rich Text Format (RTF) document"),
    (b"\x7fELF", "executable", "a computer program"),
    (b"\x1f\x8b", "gzip", "a compressed (gzip) archive"),
    (b"7z\xbc\xaf\x27\x1c", "7z", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "rar", "a RAR archive"),
    (b"%!PS", "postscript", "a PostScript file"),
)
_PACKAGES = (  # a ZIP that is some other Office/e-book format, told apart by its main part
    ("xl/workbook.xml", "xlsx", "an Excel spreadsheet (XLSX)"),
    ("ppt/presentation.xml", "pptx", "a PowerPoint presentation (PPTX)"),
    ("mimetype", "opendocument", "an OpenDocument or e-book file (such as ODT or EPUB)"),
)
_WORD_VARIANTS = (  # content types python-docx refuses as "not a Word file"
    (b"macroEnabled", "docm", "a macro-enabled Word document (DOCM)"),
    (b"wordprocessingml.template", "dotx", "a Word template (DOTX)"),
)
_MAX_CONTENT_TYPES = 1024 * 1024


def _refuse(description: str, detected: str, hint: str = "") -> UnsupportedMediaType:
    return UnsupportedMediaType(
        f"This file is {description}, not {_SUPPORTED}.{hint}", details={"detected": detected}
    )


def _extension(filename: str) -> str:
    name = re.split(r"[\\/]", filename or "")[-1]
    return os.path.splitext(name)[1].lower()


def _is_pdf(data: bytes) -> bool:
    if data[:1024].lstrip()[:5] == b"%PDF-":
        return True
    # Readers accept the header anywhere in the first 1024 bytes; demand the trailer too so a
    # text file that merely mentions "%PDF-" is not taken for one.
    return b"%PDF-" in data[:1024] and b"%%EOF" in data[-1024:]


def _word_variant(archive: zipfile.ZipFile) -> None:
    """Refuse Word files python-docx cannot open (macro-enabled documents, templates)."""
    try:
        info = archive.getinfo("[Content_Types].xml")
        if info.file_size > _MAX_CONTENT_TYPES:
            return
        content_types = archive.read(info)
    except (*ZIP_ERRORS, KeyError):
        return  # extract() reports the damage
    for marker, detected, description in _WORD_VARIANTS:
        if marker in content_types:
            raise _refuse(description, detected, " Save it as a regular .docx document and upload that.")


def _zip_kind(data: bytes, extension: str) -> str:
    try:
        archive = open_zip(data)
    except (*ZIP_ERRORS, DocumentTooComplex):
        # Unreadable or oversized: if it names a Word body (local headers hold names in clear) or
        # is called .docx, extract() gives the precise error (damaged / too complex).
        if MAIN_PART.encode() in data or extension == ".docx":
            return "docx"
        raise _refuse("a damaged or unreadable ZIP archive", "zip") from None
    with archive:
        names = set(archive.namelist())
        if MAIN_PART in names:
            _word_variant(archive)
            return "docx"
    for part, detected, description in _PACKAGES:
        if part in names:
            raise _refuse(description, detected, _OFFICE_HINT if detected != "opendocument" else "")
    raise _refuse("a ZIP archive", "zip", " Unzip it and upload the documents inside.")


def _content_kind(data: bytes, extension: str) -> str:
    if _is_pdf(data):
        return "pdf"
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return _zip_kind(data, extension)
    if is_encrypted_office_file(data) and extension in ("", ".docx"):
        return "docx"  # extract() says it is password-protected
    if data.startswith(OLE_MAGIC) and (extension == ".msg" or is_outlook_message(data)):
        raise UnsupportedMediaType(_OUTLOOK, details={"detected": "msg"})
    if image := image_kind(data):
        return image
    for magic, detected, description in _SIGNATURES:
        if data.startswith(magic):
            raise _refuse(description, detected, _OFFICE_HINT if detected == "ole" else "")
    if data.startswith(b"MZ") and b"\x00" in data[:64]:
        raise _refuse("a Windows program", "executable")
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        raise _refuse("a WebP image", "webp")
    # A text file named .txt stays text even when it opens like an e-mail (a typed memo).
    if extension != ".txt" and looks_like_email(data, named_eml=extension == ".eml"):
        return "eml"
    if looks_like_text(data):
        return "txt"
    raise UnsupportedMediaType(
        f"This file is not {_SUPPORTED}: its content is not readable text.", details={"detected": "binary"}
    )


def detect_kind(data: bytes, filename: str) -> tuple[str, str]:
    """(kind, mime_type) judged from the content, not the name.

    Raises EmptyFile for zero bytes, and UnsupportedMediaType when the content is not a PDF, DOCX or
    TXT document or a PNG/JPEG/TIFF image, or when the name ends in .pdf/.docx/.txt/.png/... (or
    another known type such as .exe or .gif) that does not match the content. Other or missing
    extensions are judged by content alone.
    """
    if not data:
        raise EmptyFile()
    extension = _extension(filename)
    kind = _content_kind(data, extension)
    expected = EXTENSION_KINDS.get(extension)
    if expected != kind and (expected is not None or extension in REFUSED_EXTENSIONS):
        raise UnsupportedMediaType(
            f"The file name ends in {extension} but the file is {KIND_NAMES[kind]}. "
            f"Rename it to end in .{kind} and upload it again.",
            details={"extension": extension, "detected": kind},
        )
    return kind, MIME_TYPES[kind]
