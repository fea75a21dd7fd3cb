"""HTML (an e-mail's body) to plain text: what a reader sees, nothing a browser would not show.

Script, style and other invisible content is dropped, entities are decoded, block elements and
<br> become line breaks, and runs of spaces collapse as a browser collapses them.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

# Elements whose content is never shown as text.
_HIDDEN = frozenset({"script", "style", "head", "title", "template", "noscript", "iframe", "object", "svg"})
_BLOCKS = frozenset(
    {
        *("address", "article", "aside", "blockquote", "div", "dl", "dt", "dd", "fieldset", "figure"),
        *("footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav"),
        *("ol", "p", "pre", "section", "table", "tr", "ul", "center"),
    }
)
_PARAGRAPHS = frozenset({"p", "table", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6"})
_CELLS = frozenset({"td", "th"})
_SPACES = re.compile(r"[ \t\r\n\f\u00a0]+")
_BLANK_LINES = re.compile(r"\n{3,}")


class _TextCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden_depth = 0

    def _break(self, tag: str) -> None:
        """End the line (a paragraph: leave a blank line), unless the text already ends so."""
        wanted = 2 if tag in _PARAGRAPHS else 1
        have = 0
        for part in reversed(self.parts):
            content = part.rstrip(" \n")
            have += part.count("\n", len(content))  # line breaks after its last visible character
            if content:
                break
        else:
            return  # nothing written yet: no leading blank lines
        self.parts.append("\n" * max(wanted - have, 0))

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in _HIDDEN:
            self.hidden_depth += 1
        elif tag == "br":
            self.parts.append("\n")
        elif tag in _BLOCKS:
            self._break(tag)
        elif tag in _CELLS:
            self.parts.append(" | ")

    def handle_startendtag(self, tag: str, attrs) -> None:
        if tag == "br":
            self.parts.append("\n")
        elif tag in _BLOCKS:
            self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self.hidden_depth = max(self.hidden_depth - 1, 0)
        elif tag in _BLOCKS:
            self._break(tag)

    def handle_data(self, data: str) -> None:
        if not self.hidden_depth:
            self.parts.append(_SPACES.sub(" ", data))


def html_to_text(html: str) -> str:
    """The visible text of `html`: one line per block, at most one blank line in a row."""
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    lines = (line.strip(" |").strip() for line in "".join(collector.parts).split("\n"))
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
