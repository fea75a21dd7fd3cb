"""Answers as work product: a DOCX research memo with each citation as a footnote, and the same as
plain text with references ("Copy with citations")."""
