"""Tesseract OCR of one page image: its text and its mean word confidence.

Why the command line (`tesseract stdin stdout ... tsv` in a subprocess) and not a Python binding:
- pytesseract is itself a wrapper around this same subprocess (plus temporary files), and adds
  nothing we use; tesserocr (the C API through Cython) has no per-call time limit, so a pathological
  page would hold the worker with no way to stop it short of killing the process, and it ties the
  Python build to the installed libtesseract's headers; ocrmypdf rewrites whole PDFs (and needs
  Ghostscript, pikepdf, ...) when all we want is text.
- A subprocess can be killed after `timeout` seconds (RAG_OCR_PAGE_TIMEOUT), its binary is a
  setting (RAG_OCR_TESSERACT_CMD), and a missing binary is an ordinary, reportable error.

The page goes in as an uncompressed PGM on stdin (no temporary files, nothing to encode); the TSV
that comes out gives every word with its confidence and its block/paragraph/line numbers, from
which the text is rebuilt (words joined by spaces, lines by newlines, paragraphs by a blank line),
so the text and the confidence describe the very same words.

Language data: Debian's `tesseract-ocr-eng` (/usr/share/tesseract-ocr/5/tessdata/eng.traineddata);
`languages()` lists what the binary finds.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
from dataclasses import dataclass

from PIL import Image

from ragsite.exceptions import OCRLimitExceeded, OCRUnavailable

# OpenMP threads per tesseract process. Tesseract's own threads fight each other (and other
# workers) on a small machine; parallelism comes from the worker pool instead.
_THREADS = "1"
_WORD_LEVEL = "5"


@dataclass(frozen=True)
class RecognisedPage:
    text: str  # "" when no word was recognised
    confidence: float  # mean word confidence 0-100; 0.0 when no word was recognised


def _unavailable(command: str, reason: str) -> OCRUnavailable:
    return OCRUnavailable(
        f"Text recognition (OCR) is not available on this server: {reason}. "
        "Ask the administrator to install Tesseract (Debian: tesseract-ocr tesseract-ocr-eng) "
        "or set RAG_OCR_TESSERACT_CMD, then reindex the document.",
        details={"command": command},
    )


class Tesseract:
    """One configured Tesseract: `run(image, dpi=...)` -> RecognisedPage."""

    def __init__(self, *, command: str, languages: str, timeout: float):
        if not command:
            raise ValueError("the tesseract command is empty")
        if not languages or not all(part.isidentifier() for part in languages.split("+")):
            raise ValueError(f"languages must be like 'eng' or 'eng+deu', not {languages!r}")
        if timeout <= 0:
            raise ValueError("the OCR timeout must be positive")
        self.command, self.languages, self.timeout = command, languages, timeout

    def _call(self, args: list[str], *, stdin: bytes | None, timeout: float) -> subprocess.CompletedProcess:
        env = {**os.environ, "OMP_THREAD_LIMIT": _THREADS}
        try:
            return subprocess.run(
                [self.command, *args], input=stdin, capture_output=True, timeout=timeout, env=env, check=False
            )
        except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
            raise _unavailable(self.command, f"the program {self.command!r} was not found") from exc

    def languages_installed(self) -> list[str]:
        """The languages the binary has data for (OCRUnavailable when it cannot be run)."""
        result = self._call(["--list-langs"], stdin=None, timeout=30)
        lines = result.stdout.decode(errors="replace").splitlines()
        return [line.strip() for line in lines[1:] if line.strip()] if result.returncode == 0 else []

    def run(self, image: Image.Image, *, dpi: int, page: int) -> RecognisedPage:
        """Recognise `image` (any mode; read as grayscale) scanned at `dpi`. `page` names it in errors.

        OCRUnavailable when the binary is missing or fails; OCRLimitExceeded after `timeout` seconds.
        """
        pgm = io.BytesIO()
        image.convert("L").save(pgm, "PPM")
        args = ["stdin", "stdout", "-l", self.languages, "--dpi", str(dpi), "tsv"]
        try:
            result = self._call(args, stdin=pgm.getvalue(), timeout=self.timeout)
        except subprocess.TimeoutExpired as exc:  # subprocess.run has already killed it
            raise OCRLimitExceeded(
                f"Page {page} took longer than {self.timeout:g} s to read by OCR "
                "(RAG_OCR_PAGE_TIMEOUT); the scan may be too dense or damaged.",
                details={"page": page, "timeout_seconds": self.timeout},
            ) from exc
        if result.returncode != 0:
            message = result.stderr.decode(errors="replace").strip().splitlines()
            raise _unavailable(
                self.command, f"Tesseract failed ({message[-1] if message else result.returncode})"
            )
        return parse_tsv(result.stdout.decode("utf-8", errors="replace"))


def parse_tsv(tsv: str) -> RecognisedPage:
    """Tesseract's TSV -> text (lines joined by newlines, paragraphs and blocks by a blank line)
    and the mean confidence of its words."""
    lines: list[list[str]] = []
    breaks: list[bool] = []  # a paragraph break comes before line i
    confidences: list[float] = []
    last_line = last_paragraph = None
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        word = (row.get("text") or "").replace("\x00", "").strip()
        if row.get("level") != _WORD_LEVEL or not word:
            continue
        paragraph = (row["page_num"], row["block_num"], row["par_num"])
        line = (*paragraph, row["line_num"])
        if line != last_line:
            breaks.append(last_paragraph is not None and paragraph != last_paragraph)
            lines.append([])
            last_line, last_paragraph = line, paragraph
        lines[-1].append(word)
        confidences.append(max(float(row["conf"]), 0.0))
    parts = []
    for words, paragraph_break in zip(lines, breaks, strict=True):
        if parts:
            parts.append("\n\n" if paragraph_break else "\n")
        parts.append(" ".join(words))
    mean = sum(confidences) / len(confidences) if confidences else 0.0
    return RecognisedPage(text="".join(parts), confidence=round(mean, 1))
