"""E-mail (.eml) extraction and detection: headers and body as text, HTML made safe, attachments
judged and listed, the limits on attachments and nesting, and .msg refused pointing to .eml."""

from __future__ import annotations

import pytest

from rag.ingest.extract import EML_MIME, detect_kind, extract
from rag.ingest.extract.docx import OLE_MAGIC
from rag.ingest.extract.email import email_attachments, extract_email, parse, sent_on
from rag.ingest.extract.html_text import html_to_text
from ragsite.exceptions import UnsupportedMediaType
from tests.rag.conftest import fixture_bytes
from tests.rag.ingest.email_messages import SENT, attach, attach_message, eml, message

XLSX_MIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def test_a_plain_email_is_its_headers_then_its_body():
    msg = message(cc="Carol <carol@acme.example>")
    extracted = extract(eml(msg), "eml")
    assert (extracted.kind, extracted.mime_type) == ("eml", EML_MIME)
    assert extracted.text == (
        "From: Alice Smith <alice@acme.example>\n"
        "To: Bob Jones <bob@globex.example>\n"
        "Cc: Carol <carol@acme.example>\n"
        "Date: Tue, 04 Mar 2025 09:30:00 +0000\n"
        "Subject: Draft share purchase agreement\n\n"
        "Bob,\n\nPlease find the draft attached.\n\nAlice"
    )
    assert extracted.title == "Draft share purchase agreement — Alice Smith, 2025-03-04"
    assert [(p.start, p.end) for p in extracted.pages] == [(0, len(extracted.text))]
    assert "Message-ID" not in extracted.text  # only the headers a reader cares about


def test_html_only_body_keeps_what_a_reader_sees_and_nothing_else():
    html = (
        "<html><head><title>ignored title</title><style>p {color: red}</style></head><body>"
        "<script>alert('steal')</script><p>Dear&nbsp;Bob,</p><p>Terms &amp; conditions "
        "&lt;v2&gt; attached.<br>Best,<br>Alice</p><div>Caf&eacute; &#8212; Paris</div>"
        "<noscript>enable scripts</noscript></body></html>"
    )
    text = extract(eml(message(plain=None, html=html)), "eml").text
    body = text.split("\n\n", 1)[1]
    assert body == "Dear Bob,\n\nTerms & conditions <v2> attached.\nBest,\nAlice\n\nCafé — Paris"
    for hidden in ("alert", "color: red", "ignored title", "enable scripts", "<p>", "&amp;"):
        assert hidden not in text


def test_html_to_text_survives_an_unclosed_script_and_tables():
    assert html_to_text("<p>Visible</p><script>var secret = 1;") == "Visible"
    rows = "<tr><td>Party</td><td>Acme</td></tr><tr><td>Price</td><td>$5</td></tr>"
    table = html_to_text(f"<table>{rows}</table>")
    assert table == "Party | Acme\nPrice | $5"


def test_multipart_alternative_prefers_the_plain_text():
    msg = message(plain="The plain words.", html="<p>The <b>HTML</b> words.</p>")
    text = extract(eml(msg), "eml").text
    assert text.endswith("Subject: Draft share purchase agreement\n\nThe plain words.")
    assert "HTML" not in text


def test_non_ascii_headers_are_decoded():
    msg = message(subject="Vertragsentwurf: Änderungen für Zoë", sender="Zoë Müller <zoe@beispiel.de>")
    raw = eml(msg)
    assert b"=?utf-8?" in raw  # encoded on the wire as RFC 2047 words
    extracted = extract(raw, "eml")
    assert "Subject: Vertragsentwurf: Änderungen für Zoë" in extracted.text
    assert "From: Zoë Müller <zoe@beispiel.de>" in extracted.text
    assert extracted.title == "Vertragsentwurf: Änderungen für Zoë — Zoë Müller, 2025-03-04"


def test_missing_date_and_subject():
    msg = message(subject=None, sent=None)
    assert sent_on(parse(eml(msg))) is None
    extracted = extract(eml(msg), "eml")
    assert "Date:" not in extracted.text and "Subject:" not in extracted.text
    assert extracted.title == "E-mail from Alice Smith"
    assert sent_on(parse(eml(message()))) == SENT.date()


def test_attachments_are_judged_and_listed_unsupported_ones_say_why():
    msg = message()
    attach(msg, "contract.pdf", fixture_bytes("contract.pdf"), "application/pdf")
    attach(msg, "notes.txt", b"Call Bob about clause 4.", "text/plain")
    attach(msg, "budget.xlsx", b"PK\x03\x04 not really a spreadsheet \x00\x01\x02", XLSX_MIME)
    attach(msg, "empty.txt", b"", "text/plain")
    attachments = email_attachments(parse(eml(msg)))
    assert [(a.filename, a.kind, a.skipped) for a in attachments] == [
        ("contract.pdf", "pdf", ""),
        ("notes.txt", "txt", ""),
        ("budget.xlsx", None, "unsupported type"),
        ("empty.txt", None, "empty"),
    ]
    assert attachments[0].content == fixture_bytes("contract.pdf")
    text = extract(eml(msg), "eml").text
    assert text.endswith(
        "Alice\n\nAttachments:\n- contract.pdf\n- notes.txt\n"
        "- budget.xlsx (not indexed: unsupported type)\n- empty.txt (not indexed: empty)"
    )


def test_an_attached_email_is_an_attachment_named_after_its_subject():
    inner = message(subject="Original offer", plain="We offer 5 million.")
    outer = message(subject="Fwd: Original offer", plain="See below.")
    attach_message(outer, inner)
    (attachment,) = email_attachments(parse(eml(outer)))
    assert (attachment.filename, attachment.kind) == ("Original offer.eml", "eml")
    assert "We offer 5 million." in extract(attachment.content, "eml").text
    assert "We offer 5 million." not in extract(eml(outer), "eml").text  # its own document


def test_limits_on_attachments_per_email_and_nesting(settings):
    settings.RAG_EMAIL_MAX_ATTACHMENTS = 2
    settings.RAG_EMAIL_MAX_DEPTH = 1
    msg = message()
    for number in range(3):
        attach(msg, f"note{number}.txt", f"Note {number}".encode(), "text/plain")
    judged = [(a.kind, a.skipped) for a in email_attachments(parse(eml(msg)))]
    assert judged == [("txt", ""), ("txt", ""), (None, "more than 2 attachments in one e-mail")]
    deep = [(a.kind, a.skipped) for a in email_attachments(parse(eml(msg)), depth=1)]
    assert deep == [(None, "nested too deep (limit 1)")] * 3
    listed = extract_email(eml(msg), depth=1).text
    assert "- note0.txt (not indexed: nested too deep (limit 1))" in listed


def test_body_text_beside_an_inline_image_stays_in_the_body():
    msg = message(plain=None, html=None)
    msg.make_mixed()
    for part in ("First half.", "Second half."):
        inline = message(plain=part)
        msg.attach(inline.get_body())  # a text part without a file name: body, not an attachment
    text = extract(eml(msg), "eml").text
    assert text.endswith("First half.\n\nSecond half.") and "Attachments" not in text


# --- detection -------------------------------------------------------------------------------------


def test_an_email_is_detected_by_its_bytes_whatever_its_name():
    raw = eml(message())
    assert detect_kind(raw, "message.eml") == ("eml", EML_MIME)
    assert detect_kind(raw, "forwarded message") == ("eml", EML_MIME)
    assert detect_kind(b"From my desk, a note.\nNothing else.", "memo")[0] == "txt"


def test_a_typed_memo_is_text_and_a_txt_stays_text():
    memo = b"To: Partners\nFrom: Associate\nDate: 1 May 2025\nRe: Disclosure\n\nThe memo body.\n"
    assert detect_kind(memo, "memo")[0] == "txt"  # no header only a mail program writes
    assert detect_kind(memo, "memo.eml")[0] == "eml"  # named an e-mail, it opens like one
    assert detect_kind(eml(message()), "saved.txt")[0] == "txt"  # its name says text: it is text


def test_a_file_named_eml_that_is_no_email_is_refused():
    with pytest.raises(UnsupportedMediaType, match=r"ends in \.eml but the file is a plain text"):
        detect_kind(b"Just some words, no headers at all.\n", "letter.eml")


def test_an_outlook_msg_is_refused_pointing_to_eml():
    # The directory of an Outlook .msg names its property streams "__substg1.0_<tag>" in UTF-16.
    msg = OLE_MAGIC + bytes(504) + "__substg1.0_0037001F".encode("utf-16-le") + bytes(512)
    for name in ("mail.msg", "mail"):
        with pytest.raises(UnsupportedMediaType) as info:
            detect_kind(msg, name)
        assert info.value.status_code == 415
        assert "Outlook message (.msg)" in info.value.message and ".eml" in info.value.message
        assert info.value.details == {"detected": "msg"}


def test_an_unknown_charset_and_control_characters_do_not_break_the_text():
    raw = (
        b"From: Alice <alice@acme.example>\r\nSubject: Odd\x00 one\r\nMessage-ID: <2@acme.example>\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=x-no-such-charset\r\n\r\n"
        b"Caf\xc3\xa9 terms\x00 agreed.\r\n"
    )
    extracted = extract(raw, "eml")
    assert extracted.title == "Odd one — Alice"
    assert extracted.text.endswith("Subject: Odd one\n\nCafé terms\ufffd agreed.")
    assert "\x00" not in extracted.text
