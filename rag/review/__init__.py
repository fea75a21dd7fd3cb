"""Matter review: questions about every document of a matter at once.

Lawyers ask about the whole matter ("Which of these contracts can be terminated for
convenience?") and build review tables (every contract down the side, the issues across the top).
This package answers them from every document in scope, not from the top passages of the whole
scope, on top of retrieval (search filters, the reader's visibility, the cross-encoder's answer
windows) and the pipeline (one stage, `rag.pipeline.stages.review`):

- `columns`: the built-in clause types (CUAD's categories) and how a question names one;
- `model`: the learned clause model, a linear probe per clause type over the passages' stored
  embeddings plus the cross-encoder's best window, trained on lawyer labels (`train`);
- `classify`: which documents in scope hold a clause, with the passage and window that show it;
- `answers`: the list and presence answers built from those verdicts;
- `compare`: two to four documents named in a question compared side by side, each searched in its
  own document (the answer is a table, one row per document).
"""
