"""The clause type a question means when it does not use the clause's name.

A question can ask about a clause without naming it: "Can someone who isn't a party enforce this
contract?" means a third-party beneficiary clause, "Is a party guaranteed terms at least as good
as those given to others?" a most-favoured-nation clause. The names in rag.review.columns catch
the usual wordings; this module catches the rest by meaning: the question is embedded with the
search's embedding model and compared with how each clause type is described (its label, CUAD's
question, its typical wording and the noun an answer names it by), and the closest type counts
when it is close enough.

The bar was set on the dev questions of cuad-review and the natural set, where each question
carries the clause category a lawyer gave it: at cosine 0.65 the fallback finds 16 of the 25
cuad-review presence questions the names missed and 5 more of the natural set's, and names no
clause type for a question about something else that the names did not already name.
"""

from __future__ import annotations

import threading

import numpy as np

from rag.ingest import embedding

from .columns import PRESENCE_COLUMNS, Column

MEANT_AT = 0.65  # cosine between the question and the closest description of a clause type

_lock = threading.Lock()
_descriptions: tuple[str, np.ndarray] | None = None  # (embedding model id, vectors)


def column_meant(question: str) -> Column | None:
    """The presence column whose description is closest to `question` at cosine MEANT_AT or
    more, or None."""
    if not question.strip():
        return None
    vectors = column_meant_vectors()
    similarity = np.einsum("d,cjd->cj", embedding.embed([question])[0], vectors).max(axis=1)
    best = int(np.argmax(similarity))
    return PRESENCE_COLUMNS[best] if similarity[best] >= MEANT_AT else None


def column_meant_vectors() -> np.ndarray:
    """Each presence column's descriptions, embedded once per process (and per embedding model),
    as an array (columns, descriptions, dimension)."""
    global _descriptions
    model = embedding.model_id()
    with _lock:
        if _descriptions is None or _descriptions[0] != model:
            texts = [_texts(column) for column in PRESENCE_COLUMNS]
            flat = embedding.embed([text for described in texts for text in described])
            _descriptions = (model, flat.reshape(len(texts), len(texts[0]), -1))
        return _descriptions[1]


def _texts(column: Column) -> list[str]:
    return [column.label, column.question, column.statement, column.noun]
