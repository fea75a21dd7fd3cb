"""Malformed and hostile request bodies, odd Unicode and path-like upload file names.

Every one gets a clear answer: a 4xx with the one error body (`error_type`, `message`,
`request_id`, `details`), or — for text the pipeline can clean (NUL, bidi overrides) — an ordinary
answer; never a 5xx. Refused writes leave no rows behind (cases, documents, templates, keys) and no
files; uploads are stored under MEDIA_ROOT by a random name whatever name they were sent with.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from rag.models import Case, Document
from templates_admin.models import PromptTemplate
from tenants.models import ApiKey, Role
from tests.error_bodies import error_fields_of

from .conftest import body_text, upload

QUERY = "/api/v1/rag/query"
JSON = "application/json"


def _nested(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


_NESTED_OBJECTS = ('{"query": "rent", "filters": ' + '{"a":' * 5000 + "1" + "}" * 5000 + "}").encode()

# (id, path, raw body, content type, expected status, expected error_type)
BAD_BODIES = [
    ("truncated-json", QUERY, b'{"query": ', JSON, 400, "ParseError"),
    ("not-json", QUERY, b"query=rent", JSON, 400, "ParseError"),
    ("wrong-content-type", QUERY, b'{"query": "rent"}', "text/plain", 415, "UnsupportedMediaType"),
    ("invalid-utf8", QUERY, b'{"query": "\xff\xfe rent"}', JSON, 400, "ParseError"),
    ("nan", QUERY, b'{"query": "rent", "top_k": NaN}', JSON, 400, "ParseError"),
    ("int-5000-digits", QUERY, b'{"query": "rent", "top_k": 1' + b"0" * 5000 + b"}", JSON, 400, "ParseError"),
    ("array-body", QUERY, b"[1, 2]", JSON, 400, "InvalidInput"),
    ("string-body", QUERY, b'"rent"', JSON, 400, "InvalidInput"),
    ("query-not-text", QUERY, b'{"query": {"$ne": null}}', JSON, 400, "InvalidQuery"),
    # Python's decoder recurses: ~1000 levels was a RecursionError (500) before StrictJSONParser.
    (
        "nested-100000-lists",
        QUERY,
        f'{{"query": "rent", "filters": {_nested(100_000)}}}'.encode(),
        JSON,
        400,
        "ParseError",
    ),
    ("nested-5000-objects", QUERY, _NESTED_OBJECTS, JSON, 400, "ParseError"),
    (
        "nested-40-levels",
        QUERY,
        f'{{"query": "rent", "filters": {_nested(40)}}}'.encode(),
        JSON,
        400,
        "ParseError",
    ),
    # An unpaired surrogate decodes to a str that UTF-8 (tokenizer, database, renderer) cannot encode.
    ("lone-high-surrogate", QUERY, b'{"query": "What is the rent \\ud800?"}', JSON, 400, "ParseError"),
    ("lone-low-surrogate-key", QUERY, b'{"query": "rent", "\\udc00": 1}', JSON, 400, "ParseError"),
    (
        "surrogate-in-filter",
        QUERY,
        b'{"query": "rent", "filters": {"jurisdictions": ["\\udfff"]}}',
        JSON,
        400,
        "ParseError",
    ),
    (
        "surrogate-in-case-name",
        "/api/v1/rag/cases",
        b'{"name": "Acme \\ud83d v. Globex"}',
        JSON,
        400,
        "ParseError",
    ),
    ("huge-body-5mb", QUERY, json.dumps({"query": "a " * 2_500_000}).encode(), JSON, 413, "PayloadTooLarge"),
    (
        "combining-marks-1mb",
        QUERY,
        json.dumps({"query": "a" + "\u0301" * 1_000_000}).encode(),
        JSON,
        413,
        "PayloadTooLarge",
    ),
    (
        "combining-marks-under-limit",
        QUERY,
        json.dumps({"query": "a" + "\u0301" * 200_000}).encode(),
        JSON,
        400,
        "InvalidQuery",
    ),
    ("query-too-long", QUERY, json.dumps({"query": "rent " * 20_000}).encode(), JSON, 400, "InvalidQuery"),
    (
        "nul-in-filter",
        QUERY,
        b'{"query": "rent", "filters": {"jurisdictions": ["a\\u0000b"]}}',
        JSON,
        400,
        None,
    ),
    (
        "nul-in-metadata-filter",
        QUERY,
        b'{"query": "rent", "filters": {"metadata": {"k\\u0000": "v"}}}',
        JSON,
        400,
        None,
    ),
    ("nul-in-template-id", QUERY, b'{"query": "rent", "template_id": "a\\u0000"}', JSON, 400, None),
    (
        "nul-in-case-name",
        "/api/v1/rag/cases",
        b'{"name": "Acme\\u0000 v. Globex"}',
        JSON,
        400,
        "ValidationError",
    ),
    ("nul-in-key-name", "/api/v1/tenants/api-keys", b'{"name": "k\\u0000"}', JSON, 400, "ValidationError"),
    (
        "nul-in-template",
        "/api/v1/rag/admin/templates",
        b'{"template_id": "t1", "name": "a\\u0000", "system_prompt": "s", '
        b'"user_prompt": "{context} {question}"}',
        JSON,
        400,
        "ValidationError",
    ),
]


def _rows() -> dict[str, int]:
    return {
        "cases": Case.objects.count(),
        "documents": Document.objects.count(),
        "templates": PromptTemplate.objects.count(),
        "keys": ApiKey.objects.count(),
    }


def _assert_error_body(response, status: int, error_type: str | None) -> None:
    assert response.status_code == status, (response.status_code, body_text(response)[:400])
    body = response.json()
    assert set(body) == error_fields_of(response.request["PATH_INFO"]), body
    assert body["message"] and body["request_id"]
    if error_type:
        assert body["error_type"] == error_type, body


@pytest.mark.parametrize(
    ("path", "raw", "content_type", "status", "error_type"),
    [case[1:] for case in BAD_BODIES],
    ids=[case[0] for case in BAD_BODIES],
)
def test_a_bad_body_is_a_clear_4xx_and_writes_nothing(path, raw, content_type, status, error_type, alpha):
    before = _rows()
    response = alpha.client(Role.ADMIN).generic("POST", path, raw, content_type=content_type)
    _assert_error_body(response, status, error_type)
    assert _rows() == before


# Text the sanitizer cleans: answered (200) as the cleaned question, never a 5xx.
CLEANED_QUERIES = {
    "nul": "What is the\u0000 project code name?",
    "rtl-override": "\u202eWhat is the project code name?\u202c",
    "bidi-isolates": "\u2067What is the project code name?\u2069",
    "bom-and-zero-width": "\ufeffWhat\u200b is the project\u200d code name?",
    "control-characters": "What\x07 is the\x1b project code\x7f name?",
    "combining-marks": "What is the project code name?" + "\u0301" * 50,
    "emoji-and-astral": "What is the project code name? \U0001f4dc\U0001f9fe",
}


@pytest.mark.parametrize("question", CLEANED_QUERIES.values(), ids=CLEANED_QUERIES.keys())
def test_odd_unicode_in_a_question_is_cleaned_and_answered(question, alpha):
    response = alpha.client().post(QUERY, {"query": question, "use_cache": False}, format="json")
    assert response.status_code == 200, body_text(response)[:400]
    assert alpha.marker in (response.json()["answer"] or ""), response.json()


# Ids from the path: traversal, NUL, absurd length. A 404 (JSON) whatever they hold.
ODD_IDS = {
    "nul": "a%00b",
    "traversal": "..%2F..%2Fetc%2Fpasswd",
    "very-long": "a" * 5000,
    "sql-ish": "1%27%20OR%20%271%27%3D%271",
    "unicode": "%E2%80%AE%F0%9F%93%9C",
}
ID_ROUTES = ["/api/v1/rag/jobs/{}", "/api/v1/rag/queries/{}", "/api/v1/rag/admin/audit/{}"]


@pytest.mark.parametrize("route", ID_ROUTES)
@pytest.mark.parametrize("value", ODD_IDS.values(), ids=ODD_IDS.keys())
def test_an_odd_id_in_the_path_is_a_json_404(route, value, alpha):
    response = alpha.client(Role.ADMIN).get(route.format(value))
    _assert_error_body(response, 404, "NotFound")


# --- Uploads -------------------------------------------------------------------------------------

HOSTILE_NAMES = {
    "dot-dot-slash": "../../etc/passwd",
    "dot-dot-txt": "../../../../tmp/lexrag-escape.txt",
    "absolute": "/etc/cron.d/lexrag.txt",
    "windows-dot-dot": "..\\..\\windows\\system32\\evil.txt",
    "windows-absolute": "C:\\Windows\\System32\\drivers\\etc\\hosts.txt",
    "unc-path": "\\\\server\\share\\evil.txt",
    "nul-byte": "contract.txt\x00.exe",
    "very-long": "a" * 4000 + ".txt",
    "dot-only": "..",
    "rtl-override": "contract\u202etxt.exe",
    "newlines": "contract\r\nX-Injected: 1.txt",
}


def _raw_upload(client, case_id: int, filename: str, content: bytes):
    """POST a multipart body written by hand, so the file name goes over the wire exactly as given
    (Django's test client and SimpleUploadedFile would keep only its last path component)."""
    boundary = "----lexrag-security-boundary"
    quoted = filename.replace('"', "%22")
    body = (
        (
            f"--{boundary}\r\n"
            f'Content-Disposition: form-data; name="files"; filename="{quoted}"\r\n'
            "Content-Type: text/plain\r\n\r\n"
        ).encode("utf-8", "surrogatepass")
        + content
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return client.generic(
        "POST",
        f"/api/v1/rag/cases/{case_id}/documents",
        body,
        content_type=f"multipart/form-data; boundary={boundary}",
    )


def _files_under(root: Path) -> set[Path]:
    return {path for path in root.rglob("*") if path.is_file()}


@pytest.fixture
def watched_tree(world, tmp_path_factory):
    """The whole pytest temporary tree (MEDIA_ROOT is inside it): where an escaping path would land."""
    return tmp_path_factory.getbasetemp()


@pytest.mark.parametrize("filename", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
def test_a_path_like_file_name_never_escapes_media_root(filename, alpha, watched_tree):
    media_root = Path(settings.MEDIA_ROOT).resolve()
    before = _files_under(watched_tree)
    passwd = os.stat("/etc/passwd").st_mtime_ns
    content = f"Upload named {filename!r}: the deposit is one hundred dollars.".encode()

    response = _raw_upload(alpha.client(), alpha.only_case_id, filename, content)

    assert response.status_code < 500, body_text(response)[:400]
    new_files = _files_under(watched_tree) - before
    assert all(media_root in path.resolve().parents for path in new_files), new_files
    assert os.stat("/etc/passwd").st_mtime_ns == passwd
    if response.status_code != 201:
        _assert_error_body(response, response.status_code, None)
        assert not new_files
        return
    shown = response.json()["documents"][0]
    document = Document.objects.get(pk=shown["id"])
    stored = Path(document.file.path).resolve()
    assert media_root in stored.parents and stored in new_files
    assert re.fullmatch(r"[0-9a-f]{32}\.txt", stored.name), "stored under a random name, not the one sent"
    name = shown["original_filename"]
    assert name and len(name) <= 255
    assert not any(ch in name for ch in "/\\\x00\r\n"), name
    assert name not in {".", ".."}


def test_an_upload_over_the_size_limit_is_413_and_stores_nothing(alpha, settings):
    settings.RAG_MAX_UPLOAD_MB = 1
    media_root = Path(settings.MEDIA_ROOT)
    before, rows = _files_under(media_root), _rows()
    response = upload(alpha.client(), alpha.only_case_id, "big.txt", b"lease terms " * 100_000)
    _assert_error_body(response, 413, "PayloadTooLarge")
    assert _files_under(media_root) == before and _rows() == rows


def test_one_bad_file_in_a_batch_stores_none_of_them(alpha):
    media_root = Path(settings.MEDIA_ROOT)
    before, rows = _files_under(media_root), _rows()
    files = [
        SimpleUploadedFile("good.txt", b"The deposit is two hundred dollars."),
        SimpleUploadedFile("../../evil.txt", b"%PDF-1.4 not really a pdf at all"),
        SimpleUploadedFile("empty.txt", b""),
    ]
    response = alpha.client().post(
        f"/api/v1/rag/cases/{alpha.only_case_id}/documents", {"files": files}, format="multipart"
    )
    assert 400 <= response.status_code < 500, body_text(response)[:400]
    details = response.json()["details"]["files"]
    assert {item["index"] for item in details} == {1, 2}
    assert all("/" not in item["filename"] for item in details)
    assert _files_under(media_root) == before and _rows() == rows


BAD_METADATA = {
    "not-json": "{party: Acme}",
    "not-an-object": '["Acme"]',
    "nul": '{"party": "Acme\\u0000"}',
    "nul-key": '{"par\\u0000ty": "Acme"}',
    "lone-surrogate": '{"party": "\\ud800"}',
    "nested-5000": '{"a": ' + _nested(5000) + "}",
    "nested-40": '{"a": ' + _nested(40) + "}",
}


@pytest.mark.parametrize("metadata", BAD_METADATA.values(), ids=BAD_METADATA.keys())
def test_bad_upload_metadata_is_a_400_and_stores_nothing(metadata, alpha):
    media_root = Path(settings.MEDIA_ROOT)
    before, rows = _files_under(media_root), _rows()
    response = alpha.client().post(
        f"/api/v1/rag/cases/{alpha.only_case_id}/documents",
        {"files": [SimpleUploadedFile("m.txt", b"The deposit is fifty dollars.")], "metadata": metadata},
        format="multipart",
    )
    _assert_error_body(response, 400, "ValidationError")
    assert "metadata" in response.json()["details"]
    assert _files_under(media_root) == before and _rows() == rows
