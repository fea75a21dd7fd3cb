"""Application errors. Services raise these (never DRF exceptions); one handler renders them as
`{"error_type", "message", "request_id", "details"}` with the error's HTTP status."""

from __future__ import annotations


class ApplicationError(Exception):
    """Base of every expected failure; `error_type` defaults to the class name."""

    status_code = 500
    default_message = "The request could not be completed."

    def __init__(self, message: str | None = None, *, details: dict | None = None):
        self.message = message or self.default_message
        self.details = details or {}
        super().__init__(self.message)

    @property
    def error_type(self) -> str:
        return type(self).__name__


class InvalidQuery(ApplicationError):
    status_code = 400
    default_message = "The query is not valid."


class InvalidInput(ApplicationError):
    status_code = 400
    default_message = "The request is not valid."


class NotFound(ApplicationError):
    """Missing and "belongs to another tenant" are the same error, by design."""

    status_code = 404
    default_message = "Not found."


class PermissionDenied(ApplicationError):
    status_code = 403
    default_message = "You do not have permission to do this."


class NoActiveTenant(ApplicationError):
    status_code = 403
    default_message = "Your account is not a member of any tenant."


class TenantChoiceRequired(NoActiveTenant):
    """A session user of several firms who has not chosen one: the app asks rather than picking
    one for them (`/accounts/firms/`, or `POST /api/v1/tenants/switch`)."""

    default_message = (
        "Your account belongs to several firms: choose the one to act for first "
        "(the firm chooser at /accounts/firms/, or POST /api/v1/tenants/switch)."
    )


class Conflict(ApplicationError):
    status_code = 409
    default_message = "The request conflicts with the current state."


class PayloadTooLarge(ApplicationError):
    status_code = 413
    default_message = "The upload is too large."


class QuotaExceeded(ApplicationError):
    """The upload would take the tenant past its documents or bytes limit (RAG_TENANT_MAX_*)."""

    status_code = 413
    default_message = "The upload would exceed this tenant's quota."


class DocumentTooLarge(ApplicationError):
    """A document makes more passages than RAG_MAX_PASSAGES_PER_DOCUMENT (recorded on the document)."""

    status_code = 413
    default_message = "The document is too large to index."


class TooManyIngestJobs(ApplicationError):
    """The tenant already has RAG_TENANT_MAX_CONCURRENT_INGESTS documents queued or processing."""

    status_code = 429
    default_message = "Too many documents are waiting to be indexed; try again when some are done."


class UnsupportedMediaType(ApplicationError):
    status_code = 415
    default_message = "This file type is not supported."


class VectorStoreUnavailable(ApplicationError):
    status_code = 503
    default_message = "The document index is temporarily unavailable. Please try again."


class LLMUnavailable(ApplicationError):
    status_code = 503
    default_message = "The language model is temporarily unavailable. Please try again."


class OllamaUnavailable(LLMUnavailable):
    """The Ollama server is unreachable, lacks the model or answers in error (the service-interface
    spec's own error type; still an `LLMUnavailable`, 503)."""


class GenerationTimeout(ApplicationError):
    status_code = 504
    default_message = "The language model did not answer in time."


class ClientDisconnected(ApplicationError):
    """The client closed a streamed answer's connection before it ended: generation stopped there
    (recorded in the audit row as this error; nobody is left to send it to). 499 as nginx logs it."""

    status_code = 499
    default_message = "The client closed the connection before the answer was complete."


class QueueUnavailable(ApplicationError):
    """A background job could not be handed to the task queue (the broker is down)."""

    status_code = 503
    default_message = "Background processing is temporarily unavailable. Please try again."


class WorkerLost(ApplicationError):
    """The worker running a job died more often than RAG_QUERY_JOB_MAX_ATTEMPTS allows."""

    status_code = 503
    default_message = "The query's worker stopped; submit it again."


class ConfigurationError(ApplicationError):
    """A setting names something that cannot be used (e.g. a reranker model directory that is missing)."""

    status_code = 503
    default_message = "The service is misconfigured. Please contact the administrator."


class EmptyFile(ApplicationError):
    status_code = 400
    default_message = "The file is empty."


class UnprocessableDocument(ApplicationError):
    """The file is of a supported type but its content cannot be ingested."""

    status_code = 422
    default_message = "The document could not be processed."


class CorruptDocument(UnprocessableDocument):
    default_message = "The file is damaged and cannot be read."


class EncryptedDocument(UnprocessableDocument):
    default_message = "The document is password-protected. Upload an unlocked copy."


class NoExtractableText(UnprocessableDocument):
    default_message = "No extractable text: the document may be a scan without a text layer."


class DocumentTooComplex(UnprocessableDocument):
    default_message = "The document is too large or too deeply nested to process safely."


class OCRUnavailable(ApplicationError):
    """Text recognition is needed (a scan) but Tesseract cannot be run (RAG_OCR_TESSERACT_CMD)."""

    status_code = 503
    default_message = "Text recognition (OCR) is not available on this server."


class OCRLimitExceeded(ApplicationError):
    """A scan needs more OCR than allowed: pages (RAG_OCR_MAX_PAGES), pixels per page
    (RAG_OCR_MAX_PIXELS) or seconds per page (RAG_OCR_PAGE_TIMEOUT)."""

    status_code = 413
    default_message = "The scan is too large to read by OCR."


class PromptInjectionDetected(InvalidQuery):
    """The query tries to override the assistant's instructions (`details["patterns"]` names how)."""

    default_message = (
        "The query looks like an attempt to override the assistant's instructions and was refused."
    )


class MailUnavailable(ApplicationError):
    """An e-mail (e.g. a member's invitation) could not be handed to the mail server (EMAIL_URL)."""

    status_code = 503
    default_message = "The e-mail could not be sent. Please try again."


class EmailTooComplex(DocumentTooComplex):
    """An e-mail has more MIME parts (RAG_EMAIL_MAX_PARTS) or deeper multipart nesting
    (RAG_EMAIL_MAX_NESTING) than is parsed."""

    default_message = "The e-mail has too many parts or too deeply nested parts to process safely."


class IngestTimeout(ApplicationError):
    """A document's ingestion ran past RAG_INGEST_TIME_LIMIT (recorded on the document)."""

    status_code = 504
    default_message = "The document took too long to index."
