"""normalize(): the rules, the offset map back to the source, and speed."""

from __future__ import annotations

import random

import pytest

from rag.ingest.normalize import NormalizedText, normalize


def check_offsets(source: str, norm: NormalizedText) -> None:
    """Every normalized character points at the source character it came from."""
    assert len(norm.offsets) == len(norm.text) + 1
    assert norm.offsets[-1] == len(source)
    offsets = list(norm.offsets)
    assert offsets == sorted(offsets)
    for i, char in enumerate(norm.text):
        origin = source[offsets[i]]
        if char == " ":
            assert origin.isspace(), (i, origin)
        elif origin != char:
            assert ord(origin) > 127, (i, origin, char)  # a translated character
            if i + 1 < len(norm.text) and offsets[i + 1] == offsets[i]:
                continue  # a ligature expansion
        if i + 1 < len(norm.text):
            assert offsets[i + 1] > offsets[i] or source[offsets[i]] in "\ufb00\ufb01\ufb02\ufb03\ufb04"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("", ""),
        ("   \r\n\t ", ""),
        ("\ufeff", ""),
        ("plain text", "plain text"),
        ("  padded  ", "padded"),
        ("a\r\nb", "a b"),
        ("a \r\n\r\n  b", "a b"),
        ("page one\x0cpage two", "page one page two"),
        ("tab\tseparated", "tab separated"),
        ("non\u00a0breaking\u202fspaces\u3000here", "non breaking spaces here"),
        ("line\u2028separator\u2029paragraph", "line separator paragraph"),
        ("\ufeffBOM first", "BOM first"),
        ("soft\u00adhyphen", "softhyphen"),
        ("zero\u200bwidth\u200d\u2060chars", "zerowidthchars"),
        ("bell\x07and\x00nul\x7fdel", "bellandnuldel"),
        ("agree-\nment", "agreement"),
        ("agree-\r\n   ment", "agreement"),
        ("agree\u00ad\nment", "agreement"),
        ("co\u2010\nop", "coop"),
        ("Non-\nDisclosure", "Non- Disclosure"),
        ("1999-\n2000", "1999- 2000"),
        ("well - \nknown", "well - known"),
        ("self-evident", "self-evident"),
        ("\uff21\uff22\uff23 \uff11\uff12", "ABC 12"),
        ("\ufb01nal pro\ufb01t", "final profit"),
        ("\u201cquoted\u201d \u2018single\u2019 Licensee\u2019s", "\"quoted\" 'single' Licensee's"),
        ("caf\u00e9 na\u00efve", "caf\u00e9 na\u00efve"),
        ("e\u0301", "e\u0301"),  # no composition across characters
        ("a \u200b b", "a b"),
        ("a\u200b \u200bb", "a b"),
        ("Section\u00a0\u00a7\u00a012", "Section \u00a7 12"),
    ],
)
def test_rules(source, expected):
    norm = normalize(source)
    assert norm.text == expected
    check_offsets(source, norm)


def test_offsets_point_at_the_source():
    source = "\ufeff  Hello,\r\n\r\nthe agree-\nment \ufb01le."
    norm = normalize(source)
    assert norm.text == "Hello, the agreement file."
    assert norm.offsets[0] == source.index("H")
    assert source[norm.offsets[norm.text.index("m")]] == "m"
    assert (
        norm.offsets[norm.text.index("fi")]
        == norm.offsets[norm.text.index("fi") + 1]
        == source.index("\ufb01")
    )
    assert norm.to_source(0, len(norm.text)) == (source.index("H"), len(source))
    start, end = norm.to_source(norm.text.index("agreement"), norm.text.index("agreement") + 9)
    assert source[start:end] == "agree-\nment"
    assert norm.to_source(3, 3) == (norm.offsets[3], norm.offsets[3])


def test_to_source_rejects_spans_outside_the_text():
    norm = normalize("abc")
    with pytest.raises(ValueError):
        norm.to_source(2, 4)
    with pytest.raises(ValueError):
        norm.to_source(2, 1)


def test_rejects_non_str():
    with pytest.raises(TypeError):
        normalize(b"bytes")


PIECES = [
    "word", "Agreement", "agree", "ment", "Inc.", "\u00e9t\u00e9", "1999", "\ufb01", "\ufb03", "\uff21",
    "\u2019", "\u201c", "-", "\u2010", "\u00ad", "\u200b", "\ufeff", "\x00", "\x07",
    " ", " ", " ", "  ", "\n", "\r\n", "\n\n", "\t", "\x0c", "\u00a0", "\u2028", "-\n", "-\r\n  ", "\u00ad\n",
]  # fmt: skip


def random_text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(PIECES) for _ in range(n))


def test_random_spans_map_back_exactly():
    """For random normalized spans, the source span from to_source() normalizes to the same text.

    The one allowed difference: a span that cuts a ligature's expansion ("f" of "fi") maps to the
    whole ligature, so its normalization contains the span instead of equalling it.
    """
    rng = random.Random(20240611)
    checked = 0
    for _ in range(400):
        source = random_text(rng, rng.randint(0, 60))
        norm = normalize(source)
        check_offsets(source, norm)
        assert normalize(norm.text).text == norm.text  # idempotent
        n = len(norm.text)
        for _ in range(20):
            s = rng.randint(0, n)
            e = rng.randint(s, n)
            a, b = norm.to_source(s, e)
            assert 0 <= a <= b <= len(source)
            expected = norm.text[s:e].strip(" ")
            got = normalize(source[a:b]).text
            cuts_expansion = (s > 0 and norm.offsets[s - 1] == norm.offsets[s]) or (
                e < n and norm.offsets[e - 1] == norm.offsets[e]
            )
            if cuts_expansion:
                assert expected in got
            else:
                assert got == expected, (source, s, e, source[a:b])
            checked += 1
    assert checked == 8000


def test_random_source_substrings_normalize_consistently():
    """A source substring that starts and ends at a kept, non-space character normalizes to the
    slice of the full normalization between those characters."""
    rng = random.Random(7)
    for _ in range(300):
        source = random_text(rng, rng.randint(1, 60))
        norm = normalize(source)
        index = {src: i for i, src in enumerate(norm.offsets[:-1])}
        kept = [
            src
            for src, i in index.items()
            if norm.text[i] != " " and source[src] not in "-\u2010\ufb00\ufb01\ufb02\ufb03\ufb04"
        ]
        if not kept:
            continue
        for _ in range(10):
            a, b = sorted(rng.choice(kept) for _ in range(2))
            assert normalize(source[a : b + 1]).text == norm.text[index[a] : index[b] + 1]


def test_two_megabytes_normalize_in_one_pass():
    """A 2 MB contract normalizes whole (its speed is bench/ingest.py's "normalize" stage, not a
    timed test: a busy machine must not fail the suite)."""
    paragraph = (
        "THIS AGREEMENT (the \u201cAgreement\u201d) is made  by and between Acme, Inc.\r\n"
        "and Beta Corp. (the \u201cParties\u201d).\tThe parties agree-\r\nment is binding;\x0c"
        "Section\u00a05.1  Term.\r\n\r\n"
    )
    source = paragraph * (2_000_000 // len(paragraph) + 1)
    norm = normalize(source)
    assert norm.text.startswith('THIS AGREEMENT (the "Agreement") is made by and between Acme, Inc. and Beta')
    assert "agreement is binding; Section 5.1 Term. THIS" in norm.text
    assert norm.text.count("THIS AGREEMENT") == source.count("THIS AGREEMENT")
