"""Answers that answer: the value a question asks for, stated first, then the quote it comes from.

The offline provider quotes; a lawyer wants the answer ("New York law", "31 October 2024", "90
days", "$5,000", "redacted in this copy"). This package reads it from the quoted text, on top of
retrieval's passages and below the providers (rag.llm.extractive calls `direct.opening`; the
pipeline's `document_dates` stage adds the passages that date a document):

- `asked`: what a question asks for (a jurisdiction, a date and which one, a duration, an amount,
  a percentage), from its interrogative and noun;
- `values`: those values as contracts write them, with offsets, and the marks of a redacted or
  blank value;
- `dates`: the dates a document defines (the agreement date, the Effective Date) and the end of a
  term computed from them;
- `direct`: the first sentence, citing where each value comes from, or nothing when no quoted text
  gives it.
"""
