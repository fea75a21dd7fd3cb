"""The citation forms a model writes besides the context's tokens resolve to the passage they name,
through the real pipeline (real ingestion of a three-page PDF, real retrieval; only the model is a
fake that reads the prompt as a model would): "[Title, section 4]", "[file.pdf, page 3]" (the file
name with its extension, the Ollama contract's style) and "[Title, Chunk 3]" (the legal pipeline
spec's passage label). A form naming a document of the context at a place none of its passages in
the context has is an invalid citation, never moved to another passage."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from rag.pipeline.run import run_query

TITLE = "Shi Farms Supply Agreement"
FILENAME = "supply-agreement.pdf"
QUESTION = "When may either party terminate the agreement and who indemnifies whom?"
_FENCE = re.compile(r"<source ([^>]*)>\n(.*?)\n</source boundary=\"[^\"]+\">", re.S)
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


@dataclass(frozen=True)
class Shown:
    """One source block of the prompt, as the model reads it."""

    attributes: dict
    body: str

    @property
    def id(self) -> str:
        return self.attributes["id"]

    @property
    def pages(self) -> range:
        first, _, last = self.attributes["page"].partition("-")
        return range(int(first), int(last or first) + 1)

    @property
    def section_number(self) -> str | None:
        match = re.match(r"(\d+)\.", self.attributes.get("section", ""))
        return match.group(1) if match else None

    @property
    def claim(self) -> str:
        """A claim the passage supports: its longest line, word for word."""
        return max(self.body.splitlines(), key=len).strip().rstrip(".;,")


def shown_sources(prompt: str) -> list[Shown]:
    return [Shown(dict(_ATTRIBUTE.findall(header)), body) for header, body in _FENCE.findall(prompt)]


# Each form picks a passage other than the first of the document (a form that fell back to the
# document's first passage would pass otherwise) and cites it in that form.


def by_section(shown: list[Shown]) -> tuple[str, Shown]:
    numbers = [s.section_number for s in shown]
    target = next(s for s in shown[1:] if s.section_number and numbers.count(s.section_number) == 1)
    return f"{TITLE}, section {target.section_number}", target


def by_file_and_page(shown: list[Shown]) -> tuple[str, Shown]:
    for target in shown[1:]:
        for page in target.pages:
            if not any(page in other.pages for other in shown if other is not target):
                return f"{FILENAME}, page {page}", target
    raise AssertionError("no page shown in only one passage")


def by_chunk(shown: list[Shown]) -> tuple[str, Shown]:
    target = shown[-1]
    return f"{TITLE}, Chunk {target.attributes['chunk']}", target


def by_labelled_chunk(shown: list[Shown]) -> tuple[str, Shown]:
    target = shown[-1]
    return f"Document: {TITLE}, Chunk {target.attributes['chunk']}", target


@pytest.fixture
def supply_agreement(case, upload):
    return upload(case, "contract.pdf", filename=FILENAME, title=TITLE).document


def ask(tenant, document) -> dict:
    """The result of asking about `document` alone (so every passage of it is in the context, ranked
    by relevance) without chain of thought (one model call)."""
    return run_query(
        tenant=tenant, question=QUESTION, cot_enabled=False, filters={"document_ids": [document.pk]}
    ).result


@pytest.mark.django_db
@pytest.mark.parametrize("form", [by_section, by_file_and_page, by_chunk, by_labelled_chunk])
def test_each_citation_form_resolves_to_the_passage_it_names(tenant, supply_agreement, fake_provider, form):
    cited: list[tuple[str, Shown]] = []

    def model(request):
        shown = shown_sources(request.prompt)
        token, target = form(shown)
        cited.append((token, target))
        return {"answer": f"{target.claim} [{token}].", "confidence": 0.9}

    fake_provider(model)
    result = ask(tenant, supply_agreement)
    token, target = cited[-1]
    assert result["answer"] == f"{target.claim} [1]."  # the reader gets numbers, whatever the form
    assert [c["citation_id"] for c in result["citations"]] == ["1"]
    assert " ".join(result["citations"][0]["snippet"].split()) in " ".join(target.body.split())  # its passage
    assert result["citations"][0]["document_id"] == supply_agreement.pk
    flags = result["flags"]
    assert flags["invalid_citations"] == [] and not flags["hallucination_detected"], token
    assert not flags["needs_verification"] and flags["mitigation_applied"] is None


def _page_not_shown(shown: list[Shown]) -> str:
    return f"{TITLE}, page {max(p for s in shown for p in s.pages) + 5}"


def _section_not_shown(shown: list[Shown]) -> str:
    return f"{FILENAME}, section 9"  # the agreement has sections 1 to 5


def _chunk_not_shown(shown: list[Shown]) -> str:
    numbers = {int(s.attributes["chunk"]) for s in shown}
    return f"{TITLE}, Chunk {min(set(range(1, len(shown) + 2)) - numbers)}"


@pytest.mark.django_db
@pytest.mark.parametrize("invent", [_page_not_shown, _section_not_shown, _chunk_not_shown])
def test_a_place_the_context_does_not_have_is_an_invalid_citation(
    tenant, supply_agreement, fake_provider, invent
):
    """The document is in the context, the page, section or chunk is not: the citation is flagged
    (and removed), not moved to one of the document's other passages."""
    invented: list[tuple[str, str]] = []

    def model(request):
        shown = shown_sources(request.prompt)
        first, second = shown[0], shown[1]
        token = invent(shown)
        invented.append((token, first.id))
        return {
            "answer": f"{first.claim} [{first.id}]. {second.claim} [{token}].",
            "confidence": 0.9,
        }

    fake_provider(model)
    result = ask(tenant, supply_agreement)
    token, first_id = invented[-1]
    assert result["flags"]["invalid_citations"] == [token]
    assert result["flags"]["hallucination_detected"] is True
    assert "removed" in result["flags"]["mitigations_applied"]
    assert [c["citation_id"] for c in result["citations"]] == [first_id]
    assert f"[{token}]" not in result["answer"]
