"""Turn a model's reply into a checked answer: parse, validate, map citation tokens, normalize.

Models are asked for JSON (orchestration spec, "Expected Model Output Format") but do not always
comply: the JSON may sit in a ```json fence or between sentences of prose, or the reply may be
plain text citing `[1]`, `[doc_42]` or `[Lease agreement, page 3]` (the Ollama contract's style).
All of these are understood; anything else is an answer without citations.

A reply cut off at the token limit (`truncated`, or JSON that stops before its end) is never shown
as raw `{"answer": "…` text: what its JSON holds is salvaged (the answer, the citations listed in
full), the answer keeps only its complete sentences with their citation markers, and the
disclaimer says it was cut off.

Citation tokens are mapped to the sources the prompt listed (`rag.llm.Source`): by citation id, by
document id ("doc_42", "42"), or by title or file name ("msa.pdf"), alone or with a place in the
document: "[Lease, page 3]" ("p. 3", "pp. 3-4": a passage covering that page), "[Lease, section 4]"
("§ 4", "clause 4", "article 4": the passage whose section heading, or a heading in whose text, is
numbered 4 or 4.x) or "[Document: Lease, Chunk 3]" (the document's third chunk, as the legal
pipeline spec labels passages). A token that matches no source is kept in `invalid_citations` for
the hallucination check, never silently dropped; that includes a document of the context cited at a
page, section or chunk none of its passages in the context has: the reader would look there and not
find the claim, so it is not moved to another passage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.llm import Source

from .outbound_links import neutralise

I_DONT_KNOW_PATTERN = re.compile(
    r"^\W*(i (do not|don't) know|information not found|not found in the (knowledge base|context))\b", re.I
)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S | re.I)
# A citation marker: "[1]", "[doc_42, doc_43]", "[Lease, page 3]".
MARKER = re.compile(r"\[([^\[\]\n]{1,200})\]")
# A document and a place in it: "Lease, page 3", "msa.pdf, p.5", "Lease, section 10.2", "Lease, § 4",
# "Document: Lease, Chunk 3". The place is checked per kind (`_place`).
_LOCATED = re.compile(
    r"^(?:document:\s*)?(?P<name>.+?),\s*"
    r"(?P<kind>pages?|pp?\.?|sections?|sec\.?|§|clauses?|articles?|chunk)\s*(?P<place>\S.*?)\s*$",
    re.I,
)
_PLACE_KINDS = {
    "page": "page", "pages": "page", "p": "page", "pp": "page",
    "section": "section", "sections": "section", "sec": "section", "§": "section",
    "clause": "section", "clauses": "section", "article": "section", "articles": "section",
    "chunk": "chunk",
}  # fmt: skip
_PAGES = re.compile(r"(\d{1,6})(?:\s*[-\u2013]\s*(\d{1,6}))?")
_SECTION = re.compile(r"(\d{1,4}(?:\.\d{1,4})*)\.?(?:\s*\([a-z0-9]{1,4}\))*", re.I)
_CHUNK = re.compile(r"\d{1,6}")
_SECTION_WORD = r"(?:(?i:section|sec\.|clause|article)[ \t]+|§[ \t]*)?"
# The number a section heading starts with: "4. Rent", "Section 10.2 Termination", "§ 7".
_HEADING_NUMBER = re.compile(rf"^[ \t]*{_SECTION_WORD}(\d{{1,4}}(?:\.\d{{1,4}})*)\b")
# A numbered heading at a line start in a passage's text: "7. Confidentiality.", "Section 10.2 Term".
_HEADINGS_IN_TEXT = re.compile(rf"^[ \t]*{_SECTION_WORD}(\d{{1,4}}(?:\.\d{{1,4}})*)\.?[ \t]+[A-Z]", re.M)
_DOC_ID = re.compile(r"^(?:doc[_-]?)?(\d{1,18})$", re.I)
# A citation token as the context builder writes them: "1", "doc_42", "doc_42_2" (a second passage).
_TOKEN = re.compile(r"^(?:doc[_-]?)?\d{1,18}(?:_\d{1,6})?$", re.I)
# Where a sentence may end in a cut-off answer: at . ! or ? (with any closing quote or bracket and
# the citation markers right after it), or at a closing quote followed by citation markers
# ('"…" [1]; and'), before a space, ";" or the end of the text.
_MARKERS_AFTER = r"(?:\s*\[[^\[\]\n]{1,200}\])"
_SENTENCE_END = re.compile(
    rf"(?:[.!?][\"'\u201d\u2019)]*{_MARKERS_AFTER}*|[\"\u201d]{_MARKERS_AFTER}+)(?=[\s;]|$)"
)
ANSWER_FIELD = re.compile(r'"answer"\s*:\s*"')
_CITATIONS_FIELD = re.compile(r'"citations"\s*:\s*\[')
TRUNCATED_DISCLAIMER = (
    "The model's reply was cut off at the max_new_tokens limit: only its complete sentences are shown."
)
_CONFIDENCE_WORDS = {
    "very high": 0.95, "high": 0.85, "medium": 0.6, "moderate": 0.6, "low": 0.3, "very low": 0.1,
}  # fmt: skip


@dataclass(frozen=True)
class Citation:
    """A citation the answer makes, resolved to the source it names."""

    token: str  # as the model wrote it: "1", "doc_42", "Lease, page 3"
    source: Source
    snippet: str  # what the model quoted from it ("" when it quoted nothing)


@dataclass
class ProcessedAnswer:
    """The model's reply, parsed and checked against the prompt's sources."""

    answer: str | None  # None: the model did not know
    citations: list[Citation] = field(default_factory=list)
    invalid_citations: list[str] = field(default_factory=list)  # tokens naming no source
    follow_ups: list[str] = field(default_factory=list)
    confidence: float | None = None  # 0..1, None when the model gave none
    disclaimer: str = ""
    output_format: str = "json"  # "json" or "text"
    truncated: bool = False  # the reply was cut off at the token limit (flags.token_warning)
    images_removed: int = 0  # remote images taken out of the model's text (flags.answer_sanitized)
    links_removed: int = 0  # links to outside the app that the cited sources do not contain

    @property
    def sanitized(self) -> bool:
        """Whether an image or an outside link was taken out of the model's text."""
        return bool(self.images_removed or self.links_removed)


def process(
    text: str, sources: Sequence[Source], *, follow_up_count: int, truncated: bool = False
) -> ProcessedAnswer:
    """Parse `text` (the model's reply) and map its citations to `sources` (see module docstring).
    `truncated`: the provider says the reply was cut off at the token limit.

    Returns exactly `follow_up_count` follow-up questions when the model gave at least that many,
    fewer otherwise (the caller may add its own).
    """
    text = text or ""
    data = _json_object(text)
    if data is None:
        data = salvaged_json(text)
        truncated = truncated or data is not None
    if data is None and truncated:
        text = complete_sentences(text)
    result = _from_text(text, sources) if data is None else _from_json(data, sources)
    if truncated:
        result.truncated = True
        result.disclaimer = " ".join(filter(None, [TRUNCATED_DISCLAIMER, result.disclaimer]))
    result.follow_ups = result.follow_ups[: max(follow_up_count, 0)]
    if result.answer is not None and I_DONT_KNOW_PATTERN.match(result.answer):
        result.answer, result.citations = None, []
    _neutralise_links(result)
    return result


def _neutralise_links(result: ProcessedAnswer) -> None:
    """Take remote images and outside links out of everything the model wrote that is shown
    (rag.pipeline.outbound_links); a URL stays as text only when a cited source contains it."""
    cited = [citation.source.text for citation in result.citations]
    outcomes = []
    if result.answer is not None:
        outcomes.append(neutralise(result.answer, cited))
        result.answer = outcomes[-1].text
    outcomes.append(neutralise(result.disclaimer, cited))
    result.disclaimer = outcomes[-1].text
    follow_ups = [neutralise(question, cited) for question in result.follow_ups]
    result.follow_ups = [outcome.text for outcome in follow_ups]
    outcomes += follow_ups
    result.images_removed += sum(outcome.images for outcome in outcomes)
    result.links_removed += sum(outcome.links for outcome in outcomes)


def _json_object(text: str) -> dict | None:
    """The first JSON object in `text`: the whole text, a fenced block, or a {...} in prose."""
    candidates = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict) and "answer" in value:
            return value
    return None


def salvaged_json(text: str) -> dict | None:
    """What a JSON reply cut off before its end still holds: {"answer": its complete sentences
    (all of it when its string was closed), "citations": the citation objects listed in full}.
    None when `text` has no "answer" field."""
    field = ANSWER_FIELD.search(text)
    if field is None:
        return None
    answer, closed = json_string_prefix(text, field.end())
    if not closed:
        answer = complete_sentences(answer)
    return {"answer": answer, "citations": _complete_items(text, field.end())}


def json_string_prefix(text: str, start: int) -> tuple[str, bool]:
    """The JSON string starting at `start` (just after its opening quote), decoded as far as it
    goes, and whether its closing quote was reached."""
    end = start
    while end < len(text) and text[end] != '"':
        end += 2 if text[end] == "\\" else 1
    closed = end < len(text)
    raw = text[start:end] if closed else text[start:end].rstrip("\\")
    while raw:  # an escape cut in the middle ("\u20") cannot be decoded: drop what is left of it
        try:
            return json.loads(f'"{raw}"'), closed
        except ValueError:
            raw = raw[: raw.rfind("\\")] if "\\" in raw else ""
    return "", closed


def _complete_items(text: str, start: int) -> list:
    """The items of the "citations" array after `start` that were sent in full."""
    field = _CITATIONS_FIELD.search(text, start)
    if field is None:
        return []
    decoder, items, position = json.JSONDecoder(), [], field.end()
    while True:
        position = len(text) - len(text[position:].lstrip(" \t\r\n,"))
        try:
            item, position = decoder.raw_decode(text, position)
        except ValueError:
            return items
        items.append(item)


def complete_sentences(text: str) -> str:
    """The longest start of `text` that ends a sentence (with its citation markers), its quotes
    and brackets balanced: what a reply cut off mid-sentence can show. "" when no sentence ended."""
    for match in reversed(list(_SENTENCE_END.finditer(text))):
        prefix = text[: match.end()]
        # "Section 10." at the very end may be "Section 10.2" cut short: not a sentence end.
        number_cut = match.end() == len(text) and text[match.start() - 1 : match.start()].isdigit()
        if _balanced(prefix) and not number_cut:
            return prefix.strip()
    return ""


def _balanced(text: str) -> bool:
    """Whether every citation bracket and straight quote opened in `text` is closed."""
    return text.count("[") == text.count("]") and text.count('"') % 2 == 0


def _from_json(data: dict, sources: Sequence[Source]) -> ProcessedAnswer:
    answer = data.get("answer")
    answer = answer.strip() if isinstance(answer, str) and answer.strip() else None
    citations: list[Citation] = []
    invalid: list[str] = []
    listed = data.get("citations") if isinstance(data.get("citations"), list) else []
    for item in listed:
        if isinstance(item, dict):
            token = str(item.get("id") or item.get("citation_id") or item.get("doc_id") or "").strip()
            snippet = item.get("snippet") if isinstance(item.get("snippet"), str) else ""
        else:
            token, snippet = str(item).strip(), ""
        if not token:
            continue
        source = resolve(token, sources, doc_id=item.get("doc_id") if isinstance(item, dict) else None)
        if source is None:
            invalid.append(token)
        else:
            citations.append(Citation(token=token, source=source, snippet=snippet.strip()))
    # Tokens used in the answer text but missing from the list still count.
    _add_markers(answer or "", sources, citations, invalid)
    follow_ups = data.get("follow_ups", data.get("follow_up_questions", []))
    return ProcessedAnswer(
        answer=answer,
        citations=citations,
        invalid_citations=list(dict.fromkeys(invalid)),
        follow_ups=[q.strip() for q in follow_ups if isinstance(q, str) and q.strip()]
        if isinstance(follow_ups, list)
        else [],
        confidence=normalize_confidence(data.get("confidence", data.get("confidence_score"))),
        disclaimer=data.get("disclaimer", "") if isinstance(data.get("disclaimer"), str) else "",
        output_format="json",
    )


def _from_text(text: str, sources: Sequence[Source]) -> ProcessedAnswer:
    answer = text.strip() or None
    citations: list[Citation] = []
    invalid: list[str] = []
    _add_markers(answer or "", sources, citations, invalid)
    return ProcessedAnswer(
        answer=answer,
        citations=citations,
        invalid_citations=list(dict.fromkeys(invalid)),
        output_format="text",
    )


def _add_markers(answer: str, sources, citations: list[Citation], invalid: list[str]) -> None:
    """Add the `[token]` markers of `answer` not already among `citations`."""
    cited = {c.source.citation_id for c in citations}
    for token in marker_tokens(answer):
        source = resolve(token, sources)
        if source is None:
            if _looks_like_citation(token):
                invalid.append(token)
        elif source.citation_id not in cited:
            cited.add(source.citation_id)
            citations.append(Citation(token=token, source=source, snippet=""))


def marker_tokens(text: str) -> list[str]:
    """The citation tokens of `text`'s [markers], in order: "[1, 2]" and "[1][2]" cite two
    sources, "[Lease, page 3]" one."""
    tokens = []
    for body in MARKER.findall(text):
        parts = [part.strip() for part in body.split(",")]
        if _located(body) or not all(_TOKEN.match(part) for part in parts):
            parts = [body.strip()]
        tokens += [part for part in parts if part]
    return tokens


def _looks_like_citation(token: str) -> bool:
    """A bracketed text that is meant as a citation (not "[sic]" or "[emphasis added]")."""
    return bool(_TOKEN.match(token) or _located(token))


def resolve(token: str, sources: Sequence[Source], *, doc_id=None) -> Source | None:
    """The source `token` names: its citation id, its document id ("42", "doc_42"), or its
    document's title or file name, with or without a page, section or chunk (see the module
    docstring). None when no source of the context is the one named."""
    token = token.strip()
    for source in sources:
        if token == source.citation_id:
            return source
    number = _DOC_ID.match(token)
    # With numbered citations ("[1]"), a bare number that is no source's number is an invented
    # citation, not a document id: "[9]" must not resolve to document 9.
    numbered = token.isdigit() and any(source.citation_id.isdigit() for source in sources)
    wanted = int(number.group(1)) if number and not numbered else _int(doc_id)
    if wanted is not None:
        for source in sources:
            if source.document_id == wanted:
                return source
    return _by_name(token, sources)


def _by_name(token: str, sources: Sequence[Source]) -> Source | None:
    """The first source whose document `token` names (a title may hold a comma, so the whole token
    is tried as a name first), or the first of them at the place `token` gives."""
    named = _named(token, sources)
    if named:
        return named[0]
    located = _located(token)
    if located is None:
        return None
    name, kind, place = located
    return next(iter(_at_place(_named(name, sources), kind, place)), None)


def _named(name: str, sources: Sequence[Source]) -> list[Source]:
    """The sources of the document called `name`: by title or by file name, ignoring case."""
    name = re.sub(r"^document:\s*", "", name.strip(), flags=re.I).strip().lower()
    return [s for s in sources if name and name in (s.title.strip().lower(), s.filename.strip().lower())]


def _located(token: str) -> tuple[str, str, tuple] | None:
    """(document name, kind, place) of a token naming a place in a document: ("Lease", "page",
    (3, 4)) for "Lease, pp. 3-4", ("Lease", "section", ("10.2",)), ("Lease", "chunk", (3,)).
    None for anything else."""
    match = _LOCATED.match(token.strip())
    if not match:
        return None
    kind = _PLACE_KINDS[match.group("kind").lower().rstrip(".")]
    place = _place(kind, match.group("place"))
    return (match.group("name").strip(), kind, place) if place is not None else None


def _place(kind: str, text: str) -> tuple | None:
    if kind == "page":
        pages = _PAGES.fullmatch(text)
        if not pages:
            return None
        first = int(pages.group(1))
        return first, int(pages.group(2) or first)
    if kind == "section":
        section = _SECTION.fullmatch(text)
        return (section.group(1),) if section else None
    return (int(text),) if _CHUNK.fullmatch(text) else None


def _at_place(named: Sequence[Source], kind: str, place: tuple) -> list[Source]:
    """The sources of `named` at `place`, best first."""
    if kind == "page":
        first, last = place
        return [s for s in named if s.page <= last and first <= max(s.page_end, s.page)]
    if kind == "chunk":
        return [s for s in named if s.chunk_number == place[0]]
    # A section: the passages that start in it come first, then those whose text has its heading.
    wanted = place[0]
    starting = [s for s in named if _within(_heading_number(s.section), wanted)]
    holding = [
        s
        for s in named
        if s not in starting and any(_within(n, wanted) for n in _HEADINGS_IN_TEXT.findall(s.text))
    ]
    return starting + holding


def _heading_number(heading: str) -> str | None:
    match = _HEADING_NUMBER.match(heading or "")
    return match.group(1) if match else None


def _within(number: str | None, section: str) -> bool:
    """Whether section `number` is `section` or one of its sub-sections ("10.2" is within "10";
    "10.25" is not within "10.2")."""
    return number is not None and (number == section or number.startswith(section + "."))


def _int(value) -> int | None:
    match = _DOC_ID.match(str(value).strip()) if value is not None else None
    return int(match.group(1)) if match else None


def normalize_confidence(value) -> float | None:
    """A confidence in 0..1 from 0.85, "0.85", 85, "85%" or "high"; None when there is none."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _CONFIDENCE_WORDS:
            return _CONFIDENCE_WORDS[text]
        percent = text.endswith("%")
        try:
            number = float(text.rstrip("%").strip())
        except ValueError:
            return None
        value = number / 100 if percent else number
    if not isinstance(value, int | float) or value != value:  # NaN
        return None
    if value > 1:
        value = value / 100  # a percentage
    return round(min(max(float(value), 0.0), 1.0), 4)
