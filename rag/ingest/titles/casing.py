"""Casing of words taken from an all-capitals heading or party name ("SPONSORSHIP AGREEMENT",
"ZANOTTI EAST INC.") for a title a person reads."""

from __future__ import annotations

import re

from .words import word_set

# Lower case inside a title ("Amendment No. 3 to ...", "Right of First Offer").
SMALL_WORDS = word_set("a an and as at by for in of on or the to under with de du des der van von")
# Short all-capitals words that are ordinary words, not acronyms ("WEB SITE", "NO. 3").
_SHORT_WORDS = word_set(
    "add age air art bay big box buy car day end fee gas key law map net new no no. oil one "
    "out pay red sea sub tax two use web way top sun non"
)
_ROMAN = re.compile(r"^(?=[IVXLC]+$)C{0,3}(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})$")
_LETTERS = re.compile(r"[A-Za-z]+")


def is_upper(word: str) -> bool:
    """True for a word with capitals and no lower-case letters ("LLC", "CO-BRANDING", "NO.")."""
    return any(c.isupper() for c in word) and not any(c.islower() for c in word)


def _looks_like_acronym(word: str) -> bool:
    letters = "".join(_LETTERS.findall(word))
    if not letters or word.lower() in _SHORT_WORDS:
        return False
    if _ROMAN.match(letters):
        return True
    return len(letters) <= 3 or not re.search(r"[AEIOUY]", letters)


def _capitalize(part: str) -> str:
    return part[:1].upper() + part[1:].lower()


def recase_word(word: str, known: dict[str, str], *, first: bool = False) -> str:
    """`word` as a title shows it: unchanged unless it is all capitals; then a small word in
    lower case (unless `first`), the spelling the document uses elsewhere (`known`: upper-cased
    form -> mixed-case form), an acronym kept, otherwise capitalised per hyphenated part."""
    if not is_upper(word):
        return word
    if not first and word.lower() in SMALL_WORDS:
        return word.lower()
    if word in known:
        return known[word]
    if _looks_like_acronym(word):
        return word
    return re.sub(r"[^-/]+", lambda part: _capitalize(part.group()), word)  # "Co-Branding"


def recase(words: list[str], known: dict[str, str]) -> str:
    """Join `words`, recasing those in all capitals (see `recase_word`)."""
    return " ".join(recase_word(word, known, first=i == 0) for i, word in enumerate(words))


def known_spellings(text: str) -> dict[str, str]:
    """{UPPER: Mixed} for every mixed-case word of `text` ("iVillage", "Tripath"), the first
    spelling seen winning, so an all-capitals name can borrow the document's own spelling."""
    known: dict[str, str] = {}
    for word in re.findall(r"[A-Za-z][\w&.'-]*[A-Za-z]", text):
        if not is_upper(word) and any(c.isupper() for c in word):
            known.setdefault(word.upper(), word)
    return known


def running_capitals(text: str) -> dict[str, str]:
    """{WORD: WORD} for words `text` writes in capitals between lower-case words ("... and SIGA
    shall ..."): acronyms to keep as they are, e.g. in a party's name."""
    tokens = [token.strip(",;:.()\"'") for token in text.split()]
    found = {}
    for before, token, after in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if len(token) > 1 and is_upper(token) and all(n.isalpha() and n.islower() for n in (before, after)):
            found[token] = token
    return found
