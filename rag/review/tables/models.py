"""Review tables and the firm's saved column sets. Imported at the end of rag.models (app "rag").

A table belongs to a case; its `columns` are a list of {"key": "<built-in column>"} or
{"question": "<plain words>"}. It is filled by a background job (`rag.review.tables.fill`) run for
the reader who started it (`run_role`, `run_by`, `run_api_key_prefix`), and read by anyone who may
see the case, each reader seeing only the documents they may read now (`selectors`).

A cell keeps the document's `indexed_at` it was computed from, so a re-run recomputes only the
cells of documents indexed again since, adds new documents and drops removed ones.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from rag.models import Case, Document
from tenants.models import TenantOwned


class ReviewStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE = (ReviewStatus.QUEUED, ReviewStatus.RUNNING)


class ReviewTable(TenantOwned):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="review_tables")
    name = models.CharField(max_length=200, blank=True)
    columns = models.JSONField(default=list, help_text='[{"key": built-in} or {"question": text}, …]')
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who the latest run reads for (their role decides which confidential text is read).
    run_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    run_role = models.CharField(max_length=16)
    run_api_key_prefix = models.CharField(max_length=8, blank=True)
    run = models.PositiveIntegerField(default=0, help_text="The latest run's number; older runs stop.")
    status = models.CharField(max_length=16, choices=ReviewStatus.choices, default=ReviewStatus.QUEUED)
    done = models.PositiveIntegerField(default=0, help_text="Cells of the latest run finished.")
    total = models.PositiveIntegerField(default=0, help_text="Cells of the latest run in all.")
    error = models.JSONField(null=True, blank=True, help_text="{error_type, message} when failed.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["tenant", "case"], name="review_table_tenant_case")]

    def __str__(self) -> str:
        return self.name or f"Review table {self.pk}"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE


# A cell with no review (what taking a review back, or computing the cell again, leaves).
UNREVIEWED = {"reviewed_answer": "", "review_note": "", "reviewer": "", "reviewed_at": None}


class ReviewCell(TenantOwned):
    """One document's answer to one column. `answer`: "Yes"/"No" for a presence column, else the
    pipeline's answer (or its "not found" message); `quote` is `Document.text[char_start:char_end]`
    inside `chunk`. `needs_review`: low confidence, no evidence or an error (`error`)."""

    table = models.ForeignKey(ReviewTable, on_delete=models.CASCADE, related_name="cells")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="+")
    column_index = models.PositiveSmallIntegerField()
    column_key = models.CharField(max_length=64, help_text="A built-in column's key, or q<index>.")
    answer = models.TextField(blank=True)
    quote = models.TextField(blank=True)
    chunk_id = models.BigIntegerField(null=True, blank=True)
    char_start = models.PositiveIntegerField(null=True, blank=True)
    char_end = models.PositiveIntegerField(null=True, blank=True)
    page = models.PositiveIntegerField(null=True, blank=True)
    confidence = models.FloatField(null=True, blank=True)
    needs_review = models.BooleanField(default=False)
    error = models.CharField(max_length=300, blank=True)
    document_indexed_at = models.DateTimeField(null=True, blank=True)
    computed_at = models.DateTimeField(auto_now=True)
    # A lawyer's review of the cell: their answer (it wins over the machine's in the page and the
    # exports) and note, who and when. Cleared when the cell is computed again for a changed
    # document: the review judged text that is gone.
    # (db_default: rows an older release inserts, during a rolling upgrade, get "" too)
    reviewed_answer = models.TextField(blank=True, db_default="")
    review_note = models.TextField(blank=True, db_default="")
    reviewer = models.CharField(
        max_length=150, blank=True, db_default="", help_text="Username, or the API key's prefix."
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["document_id", "column_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["table", "document", "column_index"], name="review_cell_unique_table_document_column"
            )
        ]

    def __str__(self) -> str:
        return f"{self.table_id}:{self.document_id}:{self.column_key}"

    @property
    def reviewed(self) -> bool:
        return self.reviewed_at is not None

    @property
    def final_answer(self) -> str:
        """The answer to show: the reviewer's where the cell was reviewed, else the machine's."""
        return self.reviewed_answer if self.reviewed else self.answer


class ReviewTemplate(TenantOwned):
    """A firm's saved column set (made and deleted by its admins, used by everyone)."""

    name = models.CharField(max_length=200)
    columns = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="review_template_unique_tenant_name")
        ]

    def __str__(self) -> str:
        return self.name
