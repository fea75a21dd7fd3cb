"""Word lists and helpers shared by the heading and party finders."""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text` (word lists written as one string)."""
    return frozenset(text.split())


# Legal-form words dropped from a party's short name, compared without dots or case (see `bare`).
LEGAL_SUFFIXES = word_set(
    """INC INCORPORATED CORP CORPORATION CO LTD LIMITED LLC LC LP LLP LLLP PLC PC NA SA SAS SPA SRL SL
    SARL GMBH AG KG NV BV AB ASA OY KK PTY PTE BHD ULC S/A"""
)
# A heading ends at the first of these ...
TERMINAL_WORDS = word_set("AGREEMENT AGREEMENTS CONTRACT LEASE SUBLEASE INDENTURE DEED CHARTER BYLAWS")
# ... or, in a heading without one, at the last of these.
SECONDARY_WORDS = word_set(
    "LICENSE LICENCE AMENDMENT ADDENDUM GUARANTY GUARANTEE UNDERSTANDING INTENT WAIVER RELEASE "
    "CONSENT UNDERTAKING PROTOCOL MOU"
)
DOCUMENT_WORDS = TERMINAL_WORDS | SECONDARY_WORDS


def bare(word: str) -> str:
    """`word` in capitals without surrounding punctuation or dots, for comparisons ("Inc.," -> "INC")."""
    return word.strip(",;:()\"'").replace(".", "").upper()
