"""Suggested follow-up questions that name what they are about: the document by its title (never a
file name) and the topic of the question (its clause type), so a click asks something a lawyer
would type ("Are there exceptions to the termination provisions of the Distributor Agreement —
Tripath / Detto?") rather than "…to this in snotarator-2019?"."""

from __future__ import annotations

import re

from rag.retrieval import legal_terms

# A title that is really a file name ("snotarator-2019_v3", "msa.final"): one token of letters,
# digits and - _ . with at least one of them or a digit.
_FILE_NAME_LIKE = re.compile(r"(?=[\w.-]*[\d_.-])[\w.-]+")


def readable_title(title: str) -> str:
    """The document's title for a question, or "this document" when the title is a file name's."""
    title = (title or "").strip()
    if not title or _FILE_NAME_LIKE.fullmatch(title):
        return "this document"
    return title


def topic(question: str) -> str:
    """The clause type the question asks about ("governing law"), or ""."""
    found = legal_terms.clause_types(question)
    return found[0].name if found else ""


def generic_follow_ups(question: str, title: str) -> list[str]:
    """Follow-ups about the question's topic in the document `title` (the first one cited)."""
    title = readable_title(title)
    subject = topic(question)
    if subject:
        return [
            f"Are there exceptions or conditions to the {subject} provisions of {title}?",
            f"Which other documents address {subject}?",
            f"How does {title} define the terms its {subject} provisions use?",
            f"What happens on termination or breach under {title}?",
            f"Who bears the {subject} obligations under {title}?",
        ]
    return [
        f"What happens on termination or breach under {title}?",
        f"Which law governs {title}?",
        f"Who are the parties to {title}, and what are their main obligations?",
        f"How long does {title} last, and how can it be renewed?",
    ]
