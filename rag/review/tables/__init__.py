"""Review tables: every document of a case down the side, the questions across the top, each cell
the answer with its quote (issue #34, "Review tables").

- `models`: ReviewTable, ReviewCell and the firm's saved column sets (ReviewTemplate);
- `columns`: a table's columns, built-in (rag.review.columns) or typed in plain words;
- `services` / `selectors`: making, running, cancelling and reading tables, re-checked against
  the reader on every read;
- `fill`: the background job that fills the cells (presence columns through
  rag.review.classify.review, one call per column for every document; value columns and typed
  questions through the pipeline, one question per document);
- `export`: CSV and XLSX.
"""
