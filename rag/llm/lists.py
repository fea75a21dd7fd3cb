"""The list a lead-in announces.

A clause that ends in a colon ("C. Either Party may terminate this Agreement immediately following
written notice to the other Party if the other Party:", "9.1 Each Party shall purchase and
maintain … the following insurance coverages:") says nothing until its items are read; quoted
alone, it answers "when can it be terminated?" or "what insurance?" with a dangling colon. Its
items follow as paragraphs of their own, so the paragraph that holds the lead-in ends at the colon.
`announced_list` reads them from the passage, whole, as far as a budget allows.
"""

from __future__ import annotations

import re

LIST_CHARS = 600  # what the items may add to a quote (whitespace collapsed)
OMISSION = " …"  # where a quote is cut short: the text goes on in the document
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# "(i)", "ii)", "(a)", "a)", "D.", "9.2", "*", "•": a paragraph that is an item of a list.
_MARKER = re.compile(
    r"^(?:(?P<open>\()?(?P<label>\d{1,3}(?:\.\d{1,3})*|[a-z]{1,6})(?P<close>[.)])|(?P<bullet>[*\u2022\u00b7\u2013\u2014-]))(?=\s)",
    re.I,
)
_ENDS_SENTENCE = re.compile(r"[.;:!?][\"'\u201d)\]]*$")


def announced_list(text: str, end: int, lead: str, budget: int = LIST_CHARS) -> str:
    """The items of the list that `lead` (a quote ending in a colon, at `end` of `text`)
    announces, whitespace collapsed, ending in OMISSION where the list goes on beyond what is
    quoted; "" when nothing follows.

    Read: the first paragraph after the colon, then each next one opening with a list marker of
    the first one's kind ("(i)", "(ii)", …) or, after an item itself ending in a colon, of the
    items it announces ("a) During the first 30 days:" then "* …"), as many whole paragraphs as
    `budget` holds. The list ends at a paragraph without such a marker, at one of another kind, or
    at the lead's own next sibling ("D." after "C. … if the other Party:"). Where the passage ends
    inside the list, the quote says it goes on."""
    paragraphs = _paragraphs(text, end)
    if not paragraphs:
        return ""
    sibling = _next_sibling(lead)
    kinds: set[tuple] = set()  # the markers of the list and of the lists its items announce
    items: list[str] = []
    used = 0
    for index, (paragraph, whole) in enumerate(paragraphs):
        kind, label = _marker(paragraph)
        if kind is not None and label == sibling:
            break  # the lead's own next sibling: its list is over
        if index and kind not in kinds and not (kind and items[-1].endswith(":")):
            break
        if kind is not None:
            kinds.add(kind)
        fits = used + len(paragraph) <= budget and (whole or _ENDS_SENTENCE.search(paragraph))
        if not fits:
            if items:
                return " ".join(items) + OMISSION
            return cut_at_word(paragraph, budget) + OMISSION
        items.append(paragraph)
        used += len(paragraph) + 1
        if not whole:
            return " ".join(items) + OMISSION  # the passage ends here; the list may not
        if kind is None:
            break  # a first paragraph that is no item (a formula, a sentence) is the list
    return " ".join(items)


def _paragraphs(text: str, end: int) -> list[tuple[str, bool]]:
    """The paragraphs of `text` after `end`, whitespace collapsed, each with whether it is whole
    (a paragraph break follows it in `text`)."""
    found: list[tuple[str, bool]] = []
    position = end
    while position < len(text):
        brk = PARAGRAPH_BREAK.search(text, position)
        stop = brk.start() if brk else len(text)
        paragraph = " ".join(text[position:stop].split())
        if paragraph:
            found.append((paragraph, brk is not None))
        if brk is None:
            break
        position = brk.end()
    return found


def _marker(paragraph: str) -> tuple[tuple | None, str | None]:
    """The kind of list marker opening `paragraph` (brackets, and digits, capitals or lower case,
    or a bullet) and its label ("ii", "9.2"; None for a bullet), or (None, None) when it opens
    with none."""
    marker = _MARKER.match(paragraph)
    if marker is None:
        return None, None
    if marker["bullet"]:
        return ("bullet",), None
    label = marker["label"]
    case = "digit" if label[0].isdigit() else "upper" if label.isupper() else "lower"
    return (bool(marker["open"]), marker["close"], case), label


def _next_sibling(lead: str) -> str | None:
    """The label the item after `lead`'s own would carry ("D" after "C.", "9.2" after "9.1",
    "b" after "(a)"), or None when `lead` opens with no such label."""
    label = _marker(lead)[1]
    if label is None:
        return None
    if label[0].isdigit():
        head, _, last = label.rpartition(".")
        return f"{head}.{int(last) + 1}" if head else str(int(label) + 1)
    if len(label) == 1 and label.lower() != "z":
        return chr(ord(label) + 1)
    return None


def cut_at_word(text: str, budget: int) -> str:
    """`text` cut at a word end within `budget` characters (whole when it fits), without a
    trailing comma, semicolon or colon."""
    if len(text) <= budget:
        return text.rstrip(" ,;:")
    return text[: text.rfind(" ", 0, budget)].rstrip(" ,;:")
