"""Tenant-scoped research data: cases, documents, their pgvector chunks, the corpus version and the
tenant's ranking weights.

Every model inherits `TenantOwned` (non-null tenant FK; `objects.for_tenant()`); read them through
`rag.selectors`, never with a bare `Model.objects.get()`.
"""

from __future__ import annotations

import math
import uuid
from pathlib import PurePath

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.db.models.functions import Upper
from pgvector.django import HnswIndex, VectorField

from tenants.models import TenantOwned

EMBEDDING_DIMENSION = 384  # all-MiniLM-L6-v2; checked against the loaded model at start-up
RANKING_WEIGHT_MAX = 10.0  # a bound on each ranking weight, so one cannot drown the others by typo


class SourceType(models.TextChoices):
    """Where a document comes from; each maps to the orchestration spec's source-trust score."""

    SUPREME_COURT = "supreme_court", "Supreme Court"
    HIGH_COURT = "high_court", "High Court"
    STATUTE = "statute", "Act / Statute"
    SECONDARY = "secondary", "Secondary source"
    USER_UPLOAD = "user_upload", "User upload"


SOURCE_TRUST = {
    SourceType.SUPREME_COURT: 1.0,
    SourceType.HIGH_COURT: 0.9,
    SourceType.STATUTE: 1.0,
    SourceType.SECONDARY: 0.7,
    SourceType.USER_UPLOAD: 0.5,
}


class DocType(models.TextChoices):
    ACT = "act", "Act"
    JUDGMENT = "judgment", "Judgment"
    CONTRACT = "contract", "Contract"
    REGULATION = "regulation", "Regulation"
    PLEADING = "pleading", "Pleading"
    MEMO = "memo", "Memo"
    CORRESPONDENCE = "correspondence", "Correspondence"
    OTHER = "other", "Other"


class Sensitivity(models.TextChoices):
    """Confidential documents are readable by tenant admins/owners and the listed readers only; for
    everyone else they are never searched, and their titles come from their file names."""

    PUBLIC = "public", "Public"
    INTERNAL = "internal", "Internal"
    CONFIDENTIAL = "confidential", "Confidential"


class TitleSource(models.TextChoices):
    """Where a document's title came from. Only a user's title is final: the others are replaced
    when the document is (re)ingested (rag.ingest.titles)."""

    USER = "user", "Given by a user"
    FILE_NAME = "file_name", "From the file name"
    TEXT = "text", "From the document's heading and parties"


class DocumentStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    PROCESSING = "processing", "Processing"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


class Case(TenantOwned):
    """A matter: the collection of documents a question is asked about (the agentic plan's bucket)."""

    name = models.CharField(max_length=200)
    client = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # An ethical wall: only `wall_members` see a walled case, its documents, answers and exports;
    # to everyone else in the firm (admins included) it does not exist. Set through
    # `rag.services.case_wall_set`; searches leave it out through `SearchFilters.visibility`.
    walled = models.BooleanField(default=False, help_text="Behind an ethical wall: only its members see it.")
    wall_members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")

    class Meta:
        ordering = ["name"]
        # Unique among the cases everyone sees: a walled case's name must not be found out by
        # creating a case of the same name.
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "name"], condition=Q(walled=False), name="case_unique_tenant_name_unwalled"
            )
        ]

    def __str__(self) -> str:
        return self.name


def document_upload_path(document: Document, filename: str) -> str:
    # Stored under a random name: the user's filename is kept in `original_filename` only, so a
    # hostile name ("../../etc/passwd") never reaches the filesystem.
    suffix = PurePath(filename).suffix.lower()[:10]
    return f"documents/{document.tenant_id}/{document.case_id}/{uuid.uuid4().hex}{suffix}"


class Document(TenantOwned):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=300)
    title_source = models.CharField(max_length=16, choices=TitleSource.choices, default=TitleSource.USER)
    # The title the text states or gives (heading and parties, an e-mail's subject). It is the
    # title only while the document is not confidential: a confidential document is titled by its
    # file name, so nothing of its text reaches colleagues who may not read it (rag.ingest.titles).
    text_title = models.CharField(max_length=300, blank=True)
    original_filename = models.CharField(max_length=255)
    file = models.FileField(upload_to=document_upload_path, max_length=300)
    mime_type = models.CharField(max_length=120)
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)

    source_type = models.CharField(max_length=32, choices=SourceType.choices, default=SourceType.USER_UPLOAD)
    doc_type = models.CharField(max_length=32, choices=DocType.choices, default=DocType.OTHER)
    jurisdiction = models.CharField(max_length=100, blank=True)
    document_date = models.DateField(null=True, blank=True)
    sensitivity = models.CharField(max_length=16, choices=Sensitivity.choices, default=Sensitivity.INTERNAL)
    confidential_readers = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    metadata = models.JSONField(default=dict, blank=True, help_text="Free filter fields: party, year, …")

    status = models.CharField(max_length=16, choices=DocumentStatus.choices, default=DocumentStatus.QUEUED)
    stage = models.CharField(max_length=100, blank=True, help_text='e.g. "embedding 3/12"')
    progress = models.PositiveSmallIntegerField(default=0, validators=[MaxValueValidator(100)])
    error_type = models.CharField(max_length=64, blank=True)
    error_message = models.TextField(blank=True)

    text = models.TextField(blank=True, help_text="Extracted text; chunk offsets index into it.")
    page_count = models.PositiveIntegerField(default=0)
    page_starts = models.JSONField(
        default=list, blank=True, help_text="Char offset into `text` where each page starts, page 1 first."
    )
    chunk_count = models.PositiveIntegerField(default=0)
    embedding_model = models.CharField(max_length=200, blank=True)
    ocr_confidence = models.JSONField(
        default=dict,
        blank=True,
        help_text='Pages read by OCR: {"<page number>": mean word confidence 0-100}; empty for none.',
    )
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="attachments",
        help_text="The e-mail this document was attached to.",
    )

    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    indexed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "case", "sha256"], name="document_unique_content_per_case"
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "status"]),
            models.Index(fields=["tenant", "case"]),
            # The confidential documents an admin may read, on every query (the answer cache's key).
            models.Index(
                fields=["tenant"], condition=Q(sensitivity="confidential"), name="document_confidential"
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @classmethod
    def from_db(cls, db, field_names, values):
        document = super().from_db(db, field_names, values)
        # rag.signals compares it on save: an access change invalidates cached answers.
        document._loaded_sensitivity = document.__dict__.get("sensitivity")
        return document

    @property
    def source_trust(self) -> float:
        return SOURCE_TRUST[self.source_type]


class Chunk(TenantOwned):
    """A passage of a document, embedded for semantic search and indexed for full-text search.

    `text == document.text[char_start:char_end]` always holds. Filter fields are copied from the
    document so search can filter inside the same SQL without a join.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="+")
    index = models.PositiveIntegerField()
    text = models.TextField()
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    page_start = models.PositiveIntegerField(default=1)
    page_end = models.PositiveIntegerField(default=1)
    section_title = models.CharField(max_length=300, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    text_hash = models.CharField(max_length=64, help_text="sha256 of the embedded (normalized) text")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSION)
    embedding_model = models.CharField(max_length=200)
    search_vector = models.GeneratedField(
        expression=SearchVector("text", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    source_type = models.CharField(max_length=32, choices=SourceType.choices)
    doc_type = models.CharField(max_length=32, choices=DocType.choices)
    jurisdiction = models.CharField(max_length=100, blank=True)
    document_date = models.DateField(null=True, blank=True)
    sensitivity = models.CharField(max_length=16, choices=Sensitivity.choices)
    # Shapes of instructions planted for a model found in the text at ingest (indirect prompt
    # injection, `sanitize.injection_findings(scope="document")`); empty for an ordinary passage.
    injection_flags = ArrayField(models.CharField(max_length=64), default=list, blank=True)

    class Meta:
        ordering = ["document_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["document", "index"], name="chunk_unique_document_index"),
            models.CheckConstraint(
                condition=models.Q(char_end__gt=models.F("char_start")), name="chunk_span"
            ),
        ]
        indexes = [
            # m 24 / ef_construction 128: recall@10 0.93 at a million passages where 16 / 64 gave
            # 0.86, in an index of the same size (migration 0019, bench/README.md).
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=24,
                ef_construction=128,
                opclasses=["vector_cosine_ops"],
            ),
            GinIndex(fields=["search_vector"], name="chunk_search_vector_gin"),
            models.Index(fields=["tenant", "case"], name="chunk_tenant_case"),
            models.Index(fields=["tenant", "embedding_model", "text_hash"], name="chunk_embedding_reuse"),
            # Search filters: a selective filter finds its chunks through these, then is searched
            # exactly (rag.retrieval.vector). Jurisdictions compare case-insensitively.
            models.Index(models.F("tenant"), Upper("jurisdiction"), name="chunk_tenant_jurisdiction"),
            models.Index(fields=["tenant", "doc_type"], name="chunk_tenant_doc_type"),
            models.Index(fields=["tenant", "source_type"], name="chunk_tenant_source_type"),
            models.Index(fields=["tenant", "document_date"], name="chunk_tenant_date"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.index}"


class ClauseSignal(TenantOwned):
    """A document's best evidence of one built-in clause type (rag.review), computed once when the
    document is indexed, so a question about every document of a matter reads one row each.

    `score`: the clause model's probe score of the document's best window (a logit; higher is
    likelier the clause); `relevance`: the cross-encoder's 0..1 relevance of that window for the
    clause's question; `char_start`/`char_end`: the window in `Document.text`, inside `chunk`;
    `more`: the next-best evidence paragraphs, quoted after search's answer to a yes/no question.
    `model`: the clause model's version, so signals of an older model are recomputed. `verdict`:
    "present" or "absent" where a language model read the evidence (rag.review.verifier, the
    model named in `verified_by`), "" where only the probe has."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="clause_signals")
    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="+")
    column = models.CharField(max_length=64)
    score = models.FloatField()
    relevance = models.FloatField(null=True, blank=True)
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    # The next-best evidence paragraphs, best first: [[chunk id, char_start, char_end, score], ...].
    more = models.JSONField(default=list, blank=True)
    model = models.CharField(max_length=64)
    verdict = models.CharField(max_length=8, blank=True, default="", db_default="")
    verified_by = models.CharField(max_length=64, blank=True, default="", db_default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "column"], name="clause_signal_unique_document_column"
            ),
        ]
        indexes = [models.Index(fields=["tenant", "column"], name="clause_signal_tenant_column")]

    def __str__(self) -> str:
        return f"{self.document_id}:{self.column}"


class IndexVersion(TenantOwned):
    """A tenant's corpus version: bumped in the same transaction as every change to its chunks, so
    caches keyed on it are invalidated without scanning keys."""

    version = models.PositiveBigIntegerField(default=0, validators=[MinValueValidator(0)])
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant"], name="index_version_one_per_tenant")]


_WEIGHT_VALIDATORS = [MinValueValidator(0.0), MaxValueValidator(RANKING_WEIGHT_MAX)]


class RankingWeights(TenantOwned):
    """A tenant's own ranking weights (at most one row per tenant); without a row the tenant ranks
    with the RAG_*_WEIGHT settings. Write through `rag.services.ranking_weights_set` only: it bumps
    `version`, which caches of ranked results key on."""

    similarity_weight = models.FloatField(validators=_WEIGHT_VALIDATORS)
    recency_weight = models.FloatField(validators=_WEIGHT_VALIDATORS)
    trust_weight = models.FloatField(validators=_WEIGHT_VALIDATORS)
    version = models.PositiveBigIntegerField(default=0, editable=False)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    WEIGHT_FIELDS = ("similarity_weight", "recency_weight", "trust_weight")

    class Meta:
        verbose_name = "ranking weights"
        verbose_name_plural = "ranking weights"
        constraints = [models.UniqueConstraint(fields=["tenant"], name="ranking_weights_one_per_tenant")]

    def __str__(self) -> str:
        return f"Ranking weights of tenant {self.tenant_id} (v{self.version})"

    def clean(self) -> None:
        values = {name: getattr(self, name) for name in self.WEIGHT_FIELDS}
        # Values that failed clean_fields() (not numbers) are already reported there.
        numbers = {
            name: value
            for name, value in values.items()
            if isinstance(value, int | float) and not isinstance(value, bool)
        }
        # NaN passes the min/max validators (every comparison with NaN is false).
        errors = {name: "Enter a finite number." for name, value in numbers.items() if math.isnan(value)}
        if errors:
            raise ValidationError(errors)
        if len(numbers) == len(values) and all(value == 0 for value in numbers.values()):
            raise ValidationError("At least one ranking weight must be greater than 0.")


class AuditStatus(models.TextChoices):
    ANSWERED = "answered", "Answered"
    NOT_FOUND = "not_found", "Information not found"
    DRY_RUN = "dry_run", "Dry run"
    FAILED = "failed", "Failed"


class AuditLog(TenantOwned):
    """One row per query, written by the pipeline's last stage; never updated (rag.pipeline.audit).

    Holds who asked what, which documents were retrieved and which the answer cited, the flags,
    latency and cost. PostgreSQL refuses UPDATEs of these rows (migration 0005's trigger), so an
    audit trail cannot be rewritten through the app.
    """

    request_id = models.CharField(max_length=64, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    conversation_id = models.CharField(max_length=100, blank=True)
    query = models.TextField()
    search_query = models.TextField(blank=True, help_text="The question as searched, if rewritten.")
    template_id = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=16, choices=AuditStatus.choices)
    error_type = models.CharField(max_length=64, blank=True)
    documents_retrieved = models.JSONField(default=list, help_text="Document ids of the retrieved passages.")
    documents_used = models.JSONField(default=list, help_text="Document ids the answer cites.")
    flags = models.JSONField(default=dict)
    confidence = models.FloatField(null=True, blank=True)
    latency_ms = models.FloatField()
    tokens_used = models.PositiveIntegerField(default=0)
    cost_estimate = models.FloatField(default=0.0)
    model_provider = models.CharField(max_length=32, blank=True)
    model = models.CharField(max_length=200, blank=True)
    cache_hit = models.BooleanField(default=False)
    api_key_prefix = models.CharField(
        max_length=8, blank=True, help_text="The API key that asked (its prefix), when not a user."
    )
    options = models.JSONField(default=dict, help_text="The request's options, for a re-run.")
    result = models.JSONField(null=True, blank=True, help_text="The response given (none on failure).")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["tenant", "api_key_prefix", "-created_at"], name="audit_tenant_key_created"),
            models.Index(fields=["tenant", "-created_at"], name="audit_tenant_created"),
            models.Index(fields=["tenant", "user", "-created_at"], name="audit_tenant_user_created"),
            models.Index(fields=["tenant", "conversation_id"], name="audit_tenant_conversation"),
        ]

    def __str__(self) -> str:
        return f"{self.request_id} ({self.status})"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ValidationError("Audit log rows are append-only.")
        super().save(*args, **kwargs)


class JobStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


def new_job_id() -> str:
    return f"job_{uuid.uuid4().hex}"


class QueryJob(TenantOwned):
    """A query run in the background (`mode: async`) or under an Idempotency-Key: the request as
    asked, who asked it with which role (the reader its answer is redacted for), and its outcome.

    Visible to its tenant only, and there to the caller who submitted it and the tenant's admins.
    """

    job_id = models.CharField(max_length=40, unique=True, default=new_job_id, editable=False)
    request_id = models.CharField(max_length=64)
    mode = models.CharField(max_length=16, default="async")
    question = models.TextField()
    options = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    api_key_prefix = models.CharField(max_length=8, blank=True)
    role = models.CharField(max_length=16, help_text="The submitter's role when the job was submitted.")
    idempotency_key = models.CharField(
        max_length=300, blank=True, help_text="The caller and its Idempotency-Key header, if one was sent."
    )
    request_hash = models.CharField(max_length=64, blank=True, help_text="sha256 of the request body.")
    attempts = models.PositiveSmallIntegerField(default=0)
    result = models.JSONField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True, help_text="{error_type, message, details} on failure.")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="query_job_unique_idempotency_key",
            )
        ]
        indexes = [models.Index(fields=["tenant", "-created_at"], name="query_job_tenant_created")]

    def __str__(self) -> str:
        return f"{self.job_id} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (JobStatus.SUCCEEDED, JobStatus.FAILED)


class ExportFormat(models.TextChoices):
    DOCX = "docx", "Word memo"
    TEXT = "text", "Text with citations"


class AnswerExport(TenantOwned):
    """One export of answers out of the app (a DOCX memo, or text copied with its citations): who
    took which answers, when, in which form. Answers leave the firm's control here, so it is kept
    like the audit log."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    api_key_prefix = models.CharField(max_length=8, blank=True)
    format = models.CharField(max_length=8, choices=ExportFormat.choices)
    request_ids = models.JSONField(default=list, help_text="The exported answers' request ids, in order.")
    conversation_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["tenant", "-created_at"], name="answer_export_tenant_created")]

    def __str__(self) -> str:
        return f"{self.get_format_display()} of {len(self.request_ids)} answer(s)"


# Review tables (rag.review.tables): their own module, registered with this app.
from rag.review.tables.models import ReviewCell, ReviewTable, ReviewTemplate  # noqa: E402, F401
