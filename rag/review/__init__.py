"""Matter review: questions about every document of a matter at once.

Lawyers ask about the whole matter ("Which of these contracts can be terminated for
convenience?") and build review tables (every contract down the side, the issues across the top).
This package answers them from every document in scope, not from the top passages of the whole
scope, on top of retrieval (search filters, the reader's visibility, the cross-encoder's answer
windows) and the pipeline (the stages `rag.pipeline.stages.review` and `.compare`):

- `columns`: the built-in clause types (CUAD's categories) and how a question names one;
- `meaning`: the clause type a question means without naming it (by embedding);
- `questions`: which questions are list, presence, clause or summary questions;
- `model`: the learned clause model, a linear probe per clause type over paragraph embeddings,
  trained on lawyer labels (`train`); `signals`: its verdict per document, computed once;
- `classify`: which documents in scope hold a clause, with the passage and window that show it;
- `summary`: a document's key terms, each quoted;
- `tables`: review tables (documents by columns) built as background jobs, with exports;
- `compare`: two to four documents named in a question compared side by side, each searched in its
  own document (the answer is a table, one row per document).
"""
