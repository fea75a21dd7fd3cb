"""A party's name in a preamble, and its short form for a title: "TRIPATH TECHNOLOGY, INC." ->
"Tripath Technology"; "Beijing SINA" for "Beijing SINA Internet Information Service Co."."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .casing import is_upper, recase
from .words import DOCUMENT_WORDS, LEGAL_SUFFIXES, bare, word_set

_LEADING_NOISE = re.compile(r"^(?:[\s,;:.)\-]|\b(?:and|AND|And)\b|\(\w\)|\d\))+")
_MAX_NAME_WORDS = 8
_NAME_CONNECTORS = frozenset(
    {"of", "de", "du", "des", "la", "le", "der", "van", "von", "y", "&", "-", "for", "and", "AND"}
)
_NOT_NAME_WORDS = word_set("THIS PARTY PARTIES WHEREAS LADIES DEAR YOU YOUR OUR ITS THEIR EACH ADDRESS")
# One of these alone is a role or a sentence's first word, not a party's name.
_NOT_ALONE = word_set(
    """COMPANY CORPORATION LICENSOR LICENSEE DISTRIBUTOR SUPPLIER CUSTOMER BUYER SELLER PURCHASER VENDOR
    AGENT CONSULTANT CONTRACTOR CLIENT PROVIDER MANUFACTURER RESELLER SPONSOR EMPLOYEE EMPLOYEES EXECUTIVE
    FRANCHISEE FRANCHISOR OWNER OPERATOR LANDLORD TENANT LESSOR LESSEE RECIPIENT INVESTOR SHAREHOLDER
    MEMBER PARTNER BANK TRUST FUND ADVISER ADVISOR ADMINISTRATOR MANAGER DEVELOPER PUBLISHER AFFILIATE
    PRODUCER PROMOTER SERVICER GUARANTOR HOLDER PARENT SUBSIDIARY UNIVERSITY SHIPPER CARRIER MERCHANT
    PURSUANT NOTWITHSTANDING CAPITALIZED INTRODUCTION HERETO ONCE WHEN IF UNDER UPON CHAPTER ARTICLE SECTION
    SCHEDULE EXHIBIT"""
)
# A sentence's first word, not a name's ("If Retainer ...", "Under the ...").
_NOT_FIRST = word_set(
    "IF WHEN ONCE UNDER UPON PURSUANT NOTWITHSTANDING IN ON FOR AT AS BY TO WITH FROM ANY ALL SUCH"
)
_MONTHS = word_set("JANUARY FEBRUARY MARCH APRIL MAY JUNE JULY AUGUST SEPTEMBER OCTOBER NOVEMBER DECEMBER")
_ABBREVIATIONS = word_set("MR MRS MS DR ST JR SR MT NO BROS INTL")


@dataclass(frozen=True)
class Party:
    """A party as the preamble names it: its name (legal form dropped) and defined term ("" if none)."""

    words: tuple[str, ...]
    term: str


def name_run(text: str) -> list[str]:
    """The name that `text` starts with: capitalised words (and "of", "&", ...), a ", Inc." kept,
    up to a lower-case word, a parenthesis, a house number or an all-capitals name's end."""
    tokens = _LEADING_NOISE.sub("", text).split()
    name: list[str] = []
    for i, token in enumerate(tokens):
        word = token.rstrip(",;")
        # After "Inc." or ", " only another legal form ("Co., Ltd.") belongs to the name.
        after_form = name and (name[-1].endswith(",") or bare(name[-1]) in LEGAL_SUFFIXES)
        if after_form and bare(word) not in LEGAL_SUFFIXES:
            break
        # "ADAMS GOLF'S PRODUCT" ends at the possessive; "Papa John's International" does not.
        possessive = re.search(r"'s$", word) and not (i + 1 < len(tokens) and tokens[i + 1][:1].isupper())
        if possessive or ".." in word:
            break
        if not word or word.endswith(":") or word[0] in "([\"'":
            break
        if word[0].isdigit() and (i or not re.search(r"[A-Za-z]", word)):
            break
        connector = word in _NAME_CONNECTORS and i + 1 < len(tokens) and tokens[i + 1][:1].isupper()
        if not (word[0].isupper() or word[0].isdigit() or (name and connector)):
            break
        # An all-capitals name ends where mixed-case text (an address) begins.
        capitals = [w for w in name if len(bare(w)) > 1]  # initials ("R. C.") do not count
        if len(capitals) >= 2 and all(map(is_upper, capitals)) and not is_upper(word) and not connector:
            break
        name.append(word + ("," if token.endswith(",") else ""))
        if token.endswith(";") or _ends_sentence(word):
            break
    if name and _ends_sentence(name[-1]):
        name[-1] = name[-1][:-1]
    return [word.rstrip(",") for word in name]


def _ends_sentence(word: str) -> bool:
    """A word with a full stop that is not an abbreviation ("Inc.", "N.A.", "Dr.", "R.")."""
    if not word.endswith(".") or "." in word[:-1]:
        return False
    return len(bare(word)) > 1 and bare(word) not in LEGAL_SUFFIXES | _ABBREVIATIONS


def clean(words: list[str]) -> list[str]:
    """Drop a leading "The" and trailing legal forms; [] when this is not a party's name."""
    while words and bare(words[0]) == "THE":
        words = words[1:]
    while words and (bare(words[-1]) in LEGAL_SUFFIXES or words[-1] in _NAME_CONNECTORS):
        words = words[:-1]
    if not words or len(words) > _MAX_NAME_WORDS or bare(words[0]) in {"A", "AN"}:
        return []
    if any(bare(word) in DOCUMENT_WORDS or bare(word) in _NOT_NAME_WORDS for word in words):
        return []
    return words


def _is_short_form(term: str, words: tuple[str, ...], common: frozenset[str]) -> bool:
    """True when `term` is a shorter form of a long name: its first words ("Beijing SINA"), its
    initials ("NFLA" for National Football League Alumni) or its one distinctive word ("Fox" for
    Twentieth Century Fox Licensing & Merchandising, but not "Bank" for First Bank of Omaha)."""
    term_words = [bare(word) for word in term.split()]
    name = [bare(word) for word in words]
    if len(term_words) < len(name) and term_words == name[: len(term_words)]:
        return True
    if len(name) <= 3:
        return False
    if len(term_words) == 1 and term_words[0] in name and not _is_common(term, common):
        return True
    initials = "".join(word[0] for word in name if word and word not in {"OF", "AND", "&", "THE"})
    letters = bare(term).replace("-", "")
    return is_upper(term) and len(letters) >= 2 and letters == initials


def short_name(party: Party, known: dict[str, str], common: frozenset[str]) -> str:
    """The party's name for a title: its defined term when that is a short form of a long name,
    else its name, all-capitals words recased (`known`: the document's spellings)."""
    if party.term and _is_short_form(party.term, party.words, common):
        prefix = [bare(word) for word in party.words[: len(party.term.split())]]
        if prefix == [bare(word) for word in party.term.split()]:
            return recase(list(party.words[: len(prefix)]), known)  # the name's spelling
        return party.term
    return recase(list(party.words), known)


def plausible(party: Party, common: frozenset[str]) -> bool:
    """False for a capitalised ordinary word or date taken for a name ("Pursuant", "November")."""
    words = [word for word in party.words if not re.fullmatch(r"(?:\w\.)+", word)]
    if not words or bare(words[0]) in _MONTHS | _NOT_FIRST or bare(words[-1]) in _MONTHS:
        return False
    if any(re.fullmatch(r"X{3,}|_+", bare(word)) for word in words):
        return False
    # "Distributor and NETGEAR" is two parties, one by its role.
    joined = " ".join(words)
    parts = [part.split() for part in re.split(r"\s(?:and|AND)\s", joined)]
    if len(parts) > 1 and any(len(part) == 1 and bare(part[0]) in _NOT_ALONE for part in parts):
        return False
    return not all(_is_common(word, common) for word in words)


def _is_common(word: str, common: frozenset[str]) -> bool:
    """An ordinary word: a role ("Licensee") or one the text also writes in lower case."""
    return bare(word) in _NOT_ALONE or word.lower() in common
