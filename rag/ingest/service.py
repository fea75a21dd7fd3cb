"""Ingestion services: accept an upload, then extract → chunk → embed → index it as a background job.

`document_upload` validates synchronously (size 413, empty 400, type 415) and returns at once with
a queued document (`documents_upload`: a batch, all or none); `document_ingest` (run by the Celery
task) does the work and reports progress on the document row. A document's chunks are replaced in
one transaction together with its status and the tenant's index version, so a half-indexed document
is never searchable and a failure leaves the previous state of every other document untouched.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from ragsite.exceptions import (
    ApplicationError,
    EmptyFile,
    IngestTimeout,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
)
from tenants.models import Tenant

from .. import selectors
from ..models import Case, Chunk, DocType, Document, DocumentStatus, IndexVersion, Sensitivity, TitleSource
from ..pipeline.sanitize import injection_findings, prepare_document_scans
from . import attachments, embedding, limits, queue, scans, titles
from .chunking import token_estimate
from .extract import IMAGE_MIMES, TextLimits, detect_kind, extract
from .extract.email import extract_email_message, mime_limits_check
from .extract.email import parse as parse_email
from .normalize import normalize
from .structure import FIXED, chunk_document

logger = logging.getLogger(__name__)

KIND_BY_MIME = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/plain": "txt",
    **{mime: kind for kind, mime in IMAGE_MIMES.items()},  # scans, read by OCR
    "message/rfc822": "eml",
}
# How passages are cut beyond their configured size: never longer than the embedding model reads
# (chunking.py). Part of index_id(): documents indexed under another rule are reindexed.
PASSAGE_RULE = "within-model-window"
# Progress: extraction and chunking up to 10 %, embedding 10-95 %, writing the rest.
_EMBED_FROM, _EMBED_TO = 10, 95


def index_id() -> str:
    """How a document's passages were made: the embedding model (its vectors' space,
    `embedding.model_id()`, stored on each chunk) and `passage_rule()`. Stored on the document; a
    ready document with another value is stale and the worker reindexes it at start-up (vectors of
    unchanged passages are reused)."""
    return f"{embedding.model_id()} | passages {passage_rule()}"


def passage_rule() -> str:
    """PASSAGE_RULE and the RAG_CHUNKING mode: `fixed` adds nothing, so documents indexed before
    the setting existed (all fixed) stay current; `adaptive` ones differ, and switching re-chunks."""
    mode = settings.RAG_CHUNKING
    return PASSAGE_RULE if mode == FIXED else f"{PASSAGE_RULE}, {mode} chunking"


@dataclass(frozen=True)
class UploadResult:
    document: Document
    duplicate: bool
    created: bool = False  # this call stored a new file (a duplicate or a retried failure did not)


@dataclass(frozen=True)
class DocumentFields:
    """Descriptive fields a user may set on upload (all optional)."""

    title: str = ""
    source_type: str = "user_upload"
    doc_type: str = "other"
    jurisdiction: str = ""
    document_date: date | None = None
    sensitivity: str = Sensitivity.INTERNAL
    metadata: dict | None = None


def _safe_filename(filename: str) -> str:
    """The last path component, without control characters, as a display name only."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).strip()
    return name[:255] or "upload"


def _check_size(size: int) -> None:
    if size > settings.RAG_MAX_UPLOAD_MB * 1024 * 1024:
        raise PayloadTooLarge(
            f"The file is {size / 1048576:.1f} MB; the limit is {settings.RAG_MAX_UPLOAD_MB} MB.",
            details={"limit_mb": settings.RAG_MAX_UPLOAD_MB},
        )


def upload_check(*, filename: str, content: bytes) -> tuple[str, str]:
    """(kind, mime_type) of an acceptable upload; otherwise PayloadTooLarge (413, over
    RAG_MAX_UPLOAD_MB), EmptyFile (400), UnsupportedMediaType (415, judged by the bytes),
    OCRLimitExceeded (413, an image over the OCR bounds) or EmailTooComplex (422, an e-mail over
    RAG_EMAIL_MAX_PARTS or RAG_EMAIL_MAX_NESTING)."""
    _check_size(len(content))
    if not content:
        raise EmptyFile(f"{_safe_filename(filename)} is empty.")
    kind, mime_type = detect_kind(content, filename)
    scans.upload_scan_check(kind, content)
    if kind == "eml":  # a bounded scan, not a parse: the worker parses it
        mime_limits_check(content)
    return kind, mime_type


def document_upload(
    *,
    tenant: Tenant,
    case: Case,
    filename: str,
    content: bytes,
    uploaded_by=None,
    fields: DocumentFields | None = None,
    enqueue: bool = True,
    parent: Document | None = None,
) -> UploadResult:
    """Store an uploaded file as a queued document and schedule its ingestion (unless `enqueue`
    is False: the caller then runs `document_ingest` itself, as `manage.py ingest` does).

    The same bytes already in this case return the existing document with `duplicate=True`,
    unless its ingestion failed: uploading it again retries it. An e-mail's attachments are stored
    as documents by the worker that ingests it (`attachments`); `parent` is the e-mail this file
    came with.
    """
    if case.tenant_id != tenant.pk:
        raise InvalidInput("The case does not belong to this tenant.")
    kind, mime_type = upload_check(filename=filename, content=content)
    sha256 = hashlib.sha256(content).hexdigest()
    existing = selectors.document_find_duplicate(tenant=tenant, case=case, sha256=sha256)
    if existing is not None and existing.status == DocumentStatus.FAILED:
        return UploadResult(_requeue(existing, enqueue=enqueue), duplicate=False)
    if existing is not None:
        return UploadResult(existing, duplicate=True)

    fields = fields or DocumentFields()
    display_name = _safe_filename(filename)
    # Without a title from the user, the file name's stands in until the text gives a better one
    # (an e-mail states its own: subject, sender and date).
    stated_title, stated_date = attachments.email_described(content) if kind == "eml" else ("", None)
    confidential = fields.sensitivity == Sensitivity.CONFIDENTIAL
    title, title_source = titles.shown_title(
        text_title=stated_title, filename=display_name, confidential=confidential
    )
    document = Document(
        tenant=tenant,
        case=case,
        parent=parent,
        title=(fields.title or title)[:300],
        title_source=TitleSource.USER if fields.title else title_source,
        text_title=stated_title[:300],
        original_filename=display_name,
        mime_type=mime_type,
        size_bytes=len(content),
        sha256=sha256,
        source_type=fields.source_type,
        doc_type=fields.doc_type,
        jurisdiction=fields.jurisdiction,
        document_date=fields.document_date or stated_date,
        sensitivity=fields.sensitivity,
        metadata=fields.metadata or {},
        uploaded_by=uploaded_by,
        stage="queued",
    )
    document.full_clean(exclude=["file"])
    try:
        with transaction.atomic():
            document.file.save(f"upload.{kind}", ContentFile(content), save=False)
            document.save()
            if enqueue:
                transaction.on_commit(lambda: ingest_enqueue(document))
    except IntegrityError:
        # Another upload of the same bytes won the race; it is the document.
        _delete_stored_files([document.file.name])
        existing = selectors.document_find_duplicate(tenant=tenant, case=case, sha256=sha256)
        if existing is None:
            raise
        return UploadResult(existing, duplicate=True)
    except Exception:
        _delete_stored_files([document.file.name])
        raise
    # Stored by the file field: a rollback of an enclosing transaction deletes it (`documents_upload`).
    return UploadResult(document, duplicate=False, created=True)


def _read(file: File) -> bytes:
    file.seek(0)
    return file.read()


def uploads_check(*, files: Sequence[File], fields: DocumentFields | None = None) -> None:
    """Refuse a batch of uploads unless every file is acceptable (`upload_check`).

    No files is InvalidInput (400); more than RAG_MAX_FILES_PER_UPLOAD, PayloadTooLarge (413); a
    title with several files, InvalidInput. Otherwise the first bad file's error is raised with
    `details["files"]` naming every bad file (index, filename) and why.
    """
    if not files:
        raise InvalidInput("Attach at least one file.", details={"files": ["No file was sent."]})
    limit = settings.RAG_MAX_FILES_PER_UPLOAD
    if len(files) > limit:
        raise PayloadTooLarge(
            f"{len(files)} files were sent; at most {limit} are accepted at once.",
            details={"files": len(files), "limit": limit},
        )
    if fields is not None and fields.title and len(files) > 1:
        raise InvalidInput(
            "A title can only be given when uploading a single file.",
            details={"title": ["Only allowed with a single file."]},
        )
    problems: list[tuple[int, File, ApplicationError]] = []
    for index, file in enumerate(files):
        try:
            # The size first, from the upload's metadata: a huge file is refused without reading it.
            _check_size(file.size)
            upload_check(filename=file.name or "", content=_read(file))
        except ApplicationError as exc:
            problems.append((index, file, exc))
    if not problems:
        return
    first = problems[0][2]
    bad = [
        {
            "index": index,
            "filename": _safe_filename(file.name or ""),
            "error_type": exc.error_type,
            "message": exc.message,
            "details": exc.details,
        }
        for index, file, exc in problems
    ]
    raise type(first)(
        f"{len(problems)} of {len(files)} files cannot be accepted, so none was stored: {first.message}",
        details={"files": bad},
    )


def documents_upload(
    *,
    tenant: Tenant,
    case: Case,
    files: Sequence[File],
    uploaded_by=None,
    fields: DocumentFields | None = None,
) -> list[UploadResult]:
    """Store several files as queued documents, all or none (see `uploads_check` for refusals).

    Files are read one at a time (checked, then stored) rather than held in memory together. If
    storing one fails after all passed the checks, the rows roll back and the files already
    stored are deleted. The same bytes twice in one batch give one document, the second a duplicate.
    """
    uploads_check(files=files, fields=fields)
    results: list[UploadResult] = []
    try:
        with transaction.atomic():
            _quotas_check(tenant=tenant, files=files)
            for file in files:
                results.append(
                    document_upload(
                        tenant=tenant,
                        case=case,
                        filename=file.name or "",
                        content=_read(file),
                        uploaded_by=uploaded_by,
                        fields=fields,
                    )
                )
    except Exception:
        _delete_stored_files(attachments.stored_files(results))
        raise
    return results


def _quotas_check(*, tenant: Tenant, files: Sequence[File]) -> None:
    """Refuse the batch if it would pass the tenant's documents, bytes or ingestion-jobs limit
    (`limits`). Holds the tenant's row until the caller's transaction ends, so two uploads of the
    same tenant at once cannot both squeeze under a limit. (An e-mail's attachments are counted
    by the worker that splits them off, `attachments.to_split`.)"""
    Tenant.objects.select_for_update().filter(pk=tenant.pk).first()
    documents, size = len(files), sum(f.size for f in files)
    limits.storage_check(tenant=tenant, new_documents=documents, new_bytes=size)
    limits.ingest_jobs_check(tenant=tenant, new_jobs=documents)


@dataclass(frozen=True)
class IngestOutcome:
    """What `ingest_now` did with one file: "ok", "duplicate" (already ready) or "failed"."""

    status: str
    document: Document | None
    reason: str = ""


def ingest_now(
    *,
    tenant: Tenant,
    case: Case,
    filename: str,
    content: bytes,
    uploaded_by=None,
    fields: DocumentFields | None = None,
) -> IngestOutcome:
    """Upload and ingest one file in this process (bulk command, demo data). Failures are
    outcomes, not exceptions, so a batch carries on; a duplicate that is not ready yet (an
    interrupted earlier run) is ingested again. An e-mail's new attachments are ingested too; the
    outcome is the e-mail's."""
    try:
        result = document_upload(
            tenant=tenant,
            case=case,
            filename=filename,
            content=content,
            uploaded_by=uploaded_by,
            fields=fields,
            enqueue=False,
        )
    except ApplicationError as exc:
        return IngestOutcome("failed", None, exc.message)
    if result.duplicate and result.document.status == DocumentStatus.READY:
        return IngestOutcome("duplicate", result.document)
    document = _ingest_here(tenant, result.document.pk)
    if document.status == DocumentStatus.READY:
        return IngestOutcome("ok", document)
    return IngestOutcome("failed", document, document.error_message)


def _ingest_here(tenant: Tenant, document_id: int) -> Document:
    """Ingest the document in this process, then the attachments it split off (an e-mail)."""
    try:
        document = document_ingest(tenant=tenant, document_id=document_id, enqueue_attachments=False)
    except Exception:
        # Recorded on the document as the Celery task would; the batch goes on.
        logger.exception("ingest crashed", extra={"document_id": document_id})
        document_fail_unexpectedly(tenant=tenant, document_id=document_id)
        return selectors.document_get(tenant=tenant, document_id=document_id)
    queued = selectors.document_attachments(tenant=tenant, document_id=document_id)
    for attachment_id in queued.filter(status=DocumentStatus.QUEUED).values_list("pk", flat=True):
        _ingest_here(tenant, attachment_id)  # as deep as RAG_EMAIL_MAX_DEPTH
    return document


def ingest_enqueue(document: Document) -> None:
    """Schedule the queued document's ingestion (call it on commit: the worker must see the row).

    With a worker, one more turn of the fair queue (`queue`: tenants take turns, so one tenant's
    batch does not hold another's file behind it); eagerly (tests, no broker), the document itself."""
    from rag.tasks import ingest_document
    from ragsite.celery import app

    if app.conf.task_always_eager:
        ingest_document.delay(document.pk, document.tenant_id)
    else:
        queue.turn_send()


def _delete_stored_files(names: Iterable[str]) -> None:
    """Delete stored files by name; one that cannot be deleted is logged and the rest still go."""
    for name in names:
        if not name:
            continue
        try:
            Document.file.field.storage.delete(name)
        except OSError:
            logger.exception("stored file not deleted", extra={"file": name})


def _set_progress(document: Document, *, progress: int, stage: str, status: str | None = None) -> None:
    """Write progress outside any transaction so pollers see it immediately."""
    changes = {"progress": progress, "stage": stage, "updated_at": timezone.now()}
    if status:
        changes["status"] = status
    Document.objects.filter(pk=document.pk).update(**changes)


def bump_index_version(*, tenant: Tenant) -> None:
    """Invalidate everything cached for the tenant's corpus (call inside the changing transaction)."""
    updated = IndexVersion.objects.filter(tenant=tenant).update(version=F("version") + 1)
    if not updated:
        try:
            with transaction.atomic():
                IndexVersion.objects.create(tenant=tenant, version=1)
        except IntegrityError:  # created concurrently
            IndexVersion.objects.filter(tenant=tenant).update(version=F("version") + 1)


def document_ingest(*, tenant: Tenant, document_id: int, enqueue_attachments: bool = True) -> Document:
    """Extract, chunk, embed and index one document; record failure on the document (IngestTimeout
    when the task's soft time limit, RAG_INGEST_TIME_LIMIT, interrupts it). An e-mail indexed for
    the first time stores its attachments as queued documents, scheduled unless
    `enqueue_attachments` is False (the caller ingests them: `ingest_now`). NotFound when the
    document is deleted before or while this runs: there is nothing left to index or to fail."""
    document = selectors.document_get(tenant=tenant, document_id=document_id)
    try:
        return _ingest(document, enqueue_attachments=enqueue_attachments)
    except NotFound:
        raise  # deleted meanwhile, not a failure of the document
    except SoftTimeLimitExceeded:
        limit = settings.RAG_INGEST_TIME_LIMIT
        error = IngestTimeout(
            f"Indexing the document took longer than {limit} seconds (RAG_INGEST_TIME_LIMIT) and was "
            "stopped. Split it into smaller files."
        )
        document_fail(document, error.error_type, error.message)
    except ApplicationError as exc:
        document_fail(document, exc.error_type, exc.message)
    except embedding.EmbeddingModelUnavailable as exc:
        document_fail(document, "EmbeddingModelUnavailable", str(exc))
    document.refresh_from_db()
    return document


def _ingest(document: Document, *, enqueue_attachments: bool) -> Document:
    _set_progress(document, progress=1, stage="extracting text", status=DocumentStatus.PROCESSING)
    content = _stored_content(document)
    kind = KIND_BY_MIME[document.mime_type]
    text_limits = _text_limits()
    found: list = []  # an e-mail's attachments to store as documents
    attachment_type = DocType.OTHER
    if kind == "eml":  # parsed here, in the worker, once bounded (EmailTooComplex)
        # An e-mail is correspondence; the type chosen for its upload ("Contract") is what it
        # carries: its attachments are typed so, and a doc_type filter finds the contract.
        if document.doc_type not in (DocType.CORRESPONDENCE, DocType.OTHER):
            attachment_type = document.doc_type
        document.doc_type = DocType.CORRESPONDENCE
        message = parse_email(content)
        # Which attachments it lists as indexed depends on how deep it is nested.
        extracted = extract_email_message(message, depth=attachments.email_depth(document))
        text_limits.check_chars(len(extracted.text))
        found = attachments.to_split(document, message)
    else:
        ocr = scans.ocr_options(
            lambda progress, stage: _set_progress(document, progress=progress, stage=stage)
        )
        extracted = extract(content, kind, ocr=ocr, limits=text_limits)
    _set_title_from_text(document, extracted.text, stated=extracted.title)

    _set_progress(document, progress=5, stage="splitting into passages")
    max_passages = document.tenant.limit("max_passages_per_document")
    spans = chunk_document(
        extracted.text,
        mode=settings.RAG_CHUNKING,
        size=settings.RAG_CHUNK_SIZE,
        overlap=settings.RAG_CHUNK_OVERLAP,
        pages=extracted.pages,
        sections=extracted.sections,
        readable=_embedded_length,
        # Chunking stops one past the limit: enough to know the document is over it.
        max_chunks=max_passages + 1 if max_passages else None,
    )
    # Before embedding: an oversized document must not hold the worker (DocumentTooLarge).
    limits.passages_check(tenant=document.tenant, passages=len(spans))
    embed_inputs = [normalize(span.text).text for span in spans]
    hashes = [hashlib.sha256(text.encode()).hexdigest() for text in embed_inputs]
    vectors = _embed_with_reuse(document, embed_inputs, hashes)

    _set_progress(document, progress=_EMBED_TO, stage="saving passages")
    model_id = embedding.model_id()
    prepare_document_scans([span.text for span in spans])
    chunks = [
        Chunk(
            tenant_id=document.tenant_id,
            document=document,
            case_id=document.case_id,
            index=i,
            text=span.text,
            char_start=span.start,
            char_end=span.end,
            page_start=span.page_start,
            page_end=span.page_end,
            section_title=span.section_title[:300],
            token_count=token_estimate(span.text),
            text_hash=text_hash,
            embedding=vectors[text_hash],
            embedding_model=model_id,
            source_type=document.source_type,
            doc_type=document.doc_type,
            jurisdiction=document.jurisdiction,
            document_date=document.document_date,
            sensitivity=document.sensitivity,
            injection_flags=injection_findings(span.text, scope="document"),
        )
        for i, (span, text_hash) in enumerate(zip(spans, hashes, strict=True))
    ]
    split: list[UploadResult] = []
    try:
        locked = _index_commit(
            document, extracted, chunks, found, enqueue_attachments, split, attachment_type
        )
    except Exception:
        _delete_stored_files(attachments.stored_files(split))  # nothing half-written
        raise
    logger.info("document indexed", extra={"document_id": locked.pk, "chunks": len(chunks)})
    return locked


def _stored_content(document: Document) -> bytes:
    """The uploaded file's bytes; NotFound if the document was deleted (its file goes with it)."""
    try:
        with document.file.open("rb") as stored:
            return stored.read()
    except FileNotFoundError:
        if not Document.objects.filter(pk=document.pk).exists():
            raise NotFound("Document not found.") from None
        raise


def _lock(document: Document) -> Document:
    """The document's row, locked until the transaction ends; NotFound if it was deleted meanwhile
    (a document may be deleted at any point of its ingestion)."""
    try:
        return Document.objects.select_for_update().get(pk=document.pk)
    except Document.DoesNotExist:
        raise NotFound("Document not found.") from None


def _index_commit(
    document, extracted, chunks, found, enqueue_attachments, split, attachment_type
) -> Document:
    """Replace the document's chunks, mark it ready and store the attachments `found` (appending
    each UploadResult to `split` as it is made, typed `attachment_type`), all in one transaction."""
    with transaction.atomic():
        locked = _lock(document)
        Chunk.objects.filter(document=locked).delete()
        Chunk.objects.bulk_create(chunks, batch_size=500)
        locked.text = extracted.text
        locked.doc_type = document.doc_type
        locked.page_count = len(extracted.pages)
        locked.page_starts = [page.start for page in extracted.pages]
        locked.ocr_confidence = {str(page): value for page, value in extracted.ocr_confidence.items()}
        locked.chunk_count = len(chunks)
        locked.embedding_model = index_id()
        locked.status = DocumentStatus.READY
        locked.progress = 100
        locked.stage = ""
        locked.error_type = locked.error_message = ""
        locked.indexed_at = timezone.now()
        locked.save()
        bump_index_version(tenant=locked.tenant)
        if found:

            def upload(**kwargs) -> UploadResult:
                split.append(document_upload(enqueue=enqueue_attachments, **kwargs))
                return split[-1]

            own = DocumentFields(  # the e-mail's, but the title and date are the attachment's
                source_type=locked.source_type,
                doc_type=attachment_type,
                jurisdiction=locked.jurisdiction,
                sensitivity=locked.sensitivity,
                metadata=locked.metadata,
            )
            attachments.attachments_upload(email=locked, found=found, upload=upload, fields=own)
    return locked


def _text_limits() -> TextLimits:
    """How much text one document may yield (RAG_MAX_DOCUMENT_CHARS, _PAGES, RAG_MAX_PDF_CONTENT_MB)."""
    return TextLimits(
        max_chars=settings.RAG_MAX_DOCUMENT_CHARS,
        max_pages=settings.RAG_MAX_DOCUMENT_PAGES,
        max_content_bytes=settings.RAG_MAX_PDF_CONTENT_MB * 1024 * 1024,
    )


def _embedded_length(passage: str) -> int:
    """How many leading characters of `passage` its vector reads (what is embedded is its
    normalized text, mapped back here), so the chunker keeps every passage within the model's
    window."""
    normalized = normalize(passage)
    read = embedding.readable_length(normalized.text)
    if read >= len(normalized.text):
        return len(passage)
    return normalized.to_source(0, read)[1]


def _set_title_from_text(document: Document, text: str, *, stated: str = "") -> None:
    """Title a document its user did not title from the title its file states (an e-mail's
    subject), else its heading and parties ("Sponsorship Agreement — Jaguars / ARC Group"), else
    its file name, as soon as its text is extracted. A user's title is never replaced, even one set
    while this runs."""
    if document.title_source == TitleSource.USER:
        return
    text_title = stated[:300] or titles.derive_title(text, "")
    # Confidential: the file name's title, as the title is shown to the whole firm (shown_title).
    title, source = titles.shown_title(
        text_title=text_title,
        filename=document.original_filename,
        confidential=document.sensitivity == Sensitivity.CONFIDENTIAL,
    )
    if (title, source, text_title) == (document.title, document.title_source, document.text_title):
        return
    with transaction.atomic():
        changed = (
            Document.objects.filter(pk=document.pk)
            .exclude(title_source=TitleSource.USER)
            .update(title=title, title_source=source, text_title=text_title, updated_at=timezone.now())
        )
        # Its passages (a reindex) are searchable, cited and routed to under the old title.
        if changed and document.chunk_count:
            bump_index_version(tenant=document.tenant)
    if changed:
        document.title, document.title_source, document.text_title = title, source, text_title


def _embed_with_reuse(document: Document, texts: list[str], hashes: list[str]) -> dict:
    """{hash: vector}; texts this tenant already embedded with the same model are not embedded again."""
    known = selectors.chunk_embeddings_by_hash(
        tenant=document.tenant, embedding_model=embedding.model_id(), text_hashes=set(hashes)
    )
    pending = {h: t for h, t in zip(hashes, texts, strict=True) if h not in known}
    order = list(pending)
    # Larger calls let embed() group passages of similar length; 8 batches keeps progress lively.
    step = max(settings.EMBEDDING_BATCH_SIZE * 8, 1)
    for done in range(0, len(order), step):
        batch = order[done : done + step]
        for text_hash, vector in zip(batch, embedding.embed([pending[h] for h in batch]), strict=True):
            known[text_hash] = vector
        finished = done + len(batch)
        progress = _EMBED_FROM + (_EMBED_TO - _EMBED_FROM) * finished // len(order)
        _set_progress(document, progress=progress, stage=f"embedding {finished}/{len(order)}")
    return known


def document_fail(document: Document, error_type: str, message: str) -> None:
    """Mark the document failed with `error_type` and a message for its owner, its chunks removed.
    NotFound if it was deleted meanwhile."""
    with transaction.atomic():
        locked = _lock(document)
        logger.warning("ingest failed", extra={"document_id": document.pk, "error_type": error_type})
        had_chunks = Chunk.objects.filter(document=locked).delete()[0] > 0
        locked.status = DocumentStatus.FAILED
        locked.error_type, locked.error_message = error_type, message
        locked.stage, locked.progress, locked.chunk_count = "", 0, 0
        locked.save()
        if had_chunks:
            bump_index_version(tenant=locked.tenant)


def document_fail_unexpectedly(*, tenant: Tenant, document_id: int) -> None:
    """Mark a document failed after an unexpected error or exhausted retries (called by the task).
    A document deleted meanwhile has nothing to mark."""
    with contextlib.suppress(NotFound):
        document_fail(
            selectors.document_get(tenant=tenant, document_id=document_id),
            "InternalError",
            "Ingestion failed unexpectedly. Try reindexing; if it persists, contact support.",
        )


def document_reindex(*, tenant: Tenant, document_id: int) -> Document:
    """Queue a document for a fresh extract → chunk → embed (its current chunks stay searchable
    until the new ones replace them). TooManyIngestJobs (429) if the tenant's queue is full."""
    document = selectors.document_get(tenant=tenant, document_id=document_id)
    limits.ingest_jobs_check(tenant=tenant, new_jobs=0 if document.status in limits.PENDING else 1)
    return _requeue(document, enqueue=True)


def _requeue(document: Document, *, enqueue: bool) -> Document:
    _set_progress(document, progress=0, stage="queued", status=DocumentStatus.QUEUED)
    if enqueue:
        transaction.on_commit(lambda: ingest_enqueue(document))
    document.refresh_from_db()
    return document


def case_reindex(*, tenant: Tenant, case_id: int) -> int:
    """Queue every document of a case; returns how many."""
    case = selectors.case_get(tenant=tenant, case_id=case_id)
    documents = selectors.document_list(tenant=tenant, case_id=case.pk)
    limits.ingest_jobs_check(tenant=tenant, new_jobs=documents.exclude(status__in=limits.PENDING).count())
    ids = list(documents.values_list("pk", flat=True))
    for document_id in ids:
        _requeue(selectors.document_get(tenant=tenant, document_id=document_id), enqueue=True)
    return len(ids)


def tenant_reindex(*, tenant: Tenant, stale_only: bool = False) -> int:
    """Queue every document of the tenant (or only the stale ones: indexed with another model or
    passage rule, see `index_id`)."""
    if stale_only:
        documents = selectors.document_list_stale(tenant=tenant, embedding_model=index_id())
    else:
        documents = selectors.document_list(tenant=tenant)
    ids = list(documents.values_list("pk", flat=True))
    for document_id in ids:  # maintenance by the worker: not held to the tenant's jobs limit
        _requeue(selectors.document_get(tenant=tenant, document_id=document_id), enqueue=True)
    return len(ids)


def corpus_remove(*, tenant: Tenant, obj: Case | Document, file_names: Iterable[str]) -> None:
    """Delete `obj` (a document, or a case with all its documents) and, by cascade, its chunks;
    bump the tenant's index version in the same transaction so no cached answer outlives them; and
    delete the stored `file_names` once the transaction commits (a rollback keeps them)."""
    names = list(file_names)
    with transaction.atomic():
        obj.delete()
        bump_index_version(tenant=tenant)
        transaction.on_commit(lambda: _delete_stored_files(names), robust=True)


def document_delete(*, tenant: Tenant, document_id: int) -> None:
    """Delete a document, its chunks and its stored file. An e-mail's attachments stay, as
    documents of their own (`Document.parent` is SET_NULL): each is a document someone may cite."""
    document = selectors.document_get(tenant=tenant, document_id=document_id)
    corpus_remove(tenant=tenant, obj=document, file_names=[document.file.name])
