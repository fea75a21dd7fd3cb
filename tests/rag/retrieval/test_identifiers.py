"""identifiers.python_regex(): the Python twin of the PostgreSQL patterns matches what they match.

The expectations are those of the keyword-search tests in test_keyword.py, which run the same
patterns inside PostgreSQL; here no database is needed.
"""

from __future__ import annotations

import pytest

from rag.retrieval.identifiers import extract_identifiers, python_regex

from .conftest import CLAUSES


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Section 10.2", {"payment"}),
        ("Section 10", {"termination", "payment", "notices"}),
        ("section 3", {"termination"}),
        ("\u00a7 2-207", {"ucc", "ucc_dash"}),
        ("UCC \u00a7 2\u2013207", {"ucc", "ucc_dash"}),
        ("Rule 12(b)(6)", {"motion"}),
        ("123 F.3d 456", {"motion"}),
        ("123 F. 3d 457", {"other_cite"}),
    ],
)
def test_python_regexes_match_what_the_database_patterns_match(query, expected):
    identifiers, _ = extract_identifiers(query)
    assert identifiers
    regexes = [python_regex(identifier.pattern) for identifier in identifiers]
    matched = {name for name, text in CLAUSES.items() if all(regex.search(text) for regex in regexes)}
    assert matched == expected


def test_a_bare_section_number_matches_a_numbered_heading_on_any_line():
    (identifier,) = extract_identifiers("Section 10")[0]
    regex = python_regex(identifier.pattern)
    assert regex.search("ARTICLE 9\n  10. Termination\nEither party may terminate.")
    assert not regex.search("ARTICLE 9 and 10. Termination")  # "10." mid-line is no heading
    assert not regex.search("within 10 days")


def test_unknown_database_syntax_is_refused():
    with pytest.raises(ValueError, match="no Python equivalent"):
        python_regex(r"[[:digit:]]+")
