"""Which questions are about every document in scope, and which clause type they ask about.

A list question asks which documents hold something ("Which of these agreements contain a
non-compete?", "Do any of the contracts give audit rights?", "List the agreements that can be
terminated for convenience"); a presence question asks whether one document holds it ("Does
this agreement contain a non-compete?"); a clause question asks something else about it ("What
insurance must the distributor carry?"). Each is a matter-review question when it names one of
the built-in clause types (rag.review.columns); other questions are answered by search. A summary
question ("Summarize this agreement", "What are the key terms?") asks for a document's key terms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .columns import Column, presence_column_named
from .meaning import column_meant

LIST, PRESENCE, CLAUSE, SUMMARY = "list", "presence", "clause", "summary"

# "Which of these agreements …", "Do any of the contracts …", "List the agreements that …", "How many
# of these contracts …": the words asking which, then the documents (not "What licenses does …").
_ASKS_WHICH_DOCUMENTS = re.compile(
    r"^\s*(?:(?:and|so|also|now),?\s+)?(?:which|what|list|name|identify|find|show(?: me)?|tell me|how many|"
    r"are there any|is there any|do any|does any|have any|did any)"
    r"(?:\s+(?:of|all|the|these|those|our|my|its|their|in|this|matter'?s?|case'?s?))*"
    r"\s+(?:agreements|contracts|documents|deals|leases|files|ones|of them)\b",
    re.I,
)
_YES_NO = re.compile(
    r"^\s*(?:(?:and|so|also|now),?\s+)?(?:does|do|did|is|are|was|were|can|could|may|might|must|has|have|"
    r"will|would|shall|should)\b",
    re.I,
)


# "Summarize this agreement", "What are the key terms?", "Give me an overview of the contract".
_SUMMARIZE = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+)?"
    r"(?:summari[sz]e\b|give (?:me )?(?:a |an )?(?:summary|overview)\b"
    r"|what are (?:the )?(?:key|main|important|principal) (?:terms|provisions|points)\b"
    r"|(?:key|main) terms\b|(?:an )?overview of\b)",
    re.I,
)


@dataclass(frozen=True)
class MatterQuestion:
    kind: str  # LIST, PRESENCE (yes/no), CLAUSE (another question about the clause) or SUMMARY
    column: Column | None  # None for SUMMARY


def matter_question(question: str, *, one_document: bool = False) -> MatterQuestion | None:
    """What `question` asks of the documents in scope, or None when it means no built-in clause
    type (then search answers it). A clause type is found by its names, or by meaning
    (rag.review.meaning) for a list question or, with `one_document` (the scope is one document),
    any question: elsewhere the review has nothing to answer, so the embedding is not spent."""
    if _SUMMARIZE.search(question):
        return MatterQuestion(SUMMARY, None)
    lists = bool(_ASKS_WHICH_DOCUMENTS.search(question))
    column = presence_column_named(question)
    if column is None and (lists or one_document):
        column = column_meant(question)
    if column is None:
        return None
    if lists:
        return MatterQuestion(LIST, column)
    if _YES_NO.search(question):
        return MatterQuestion(PRESENCE, column)
    return MatterQuestion(CLAUSE, column)


# What follows the summary words when they name a document: "… of the Hydraspin supply agreement".
_LEADING = re.compile(r"^(?:\s*(?:of|for|in|on|from|the|this|that|these|those)\b)+", re.I)


def summarized_name(question: str) -> str:
    """The name a summary question gives its document ("the Hydraspin supply agreement" in
    "Summarize the Hydraspin supply agreement"), or "" ("Summarize this agreement")."""
    found = _SUMMARIZE.search(question)
    if found is None:
        return ""
    rest = _LEADING.sub("", question[found.end() :]).strip(" ?.!:;,")
    return "" if re.fullmatch(r"(?i)(?:agreement|contract|document|deal|it)?", rest) else rest
