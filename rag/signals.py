"""Who may read a document changes what answers may contain: bump the tenant's index version (the
answer cache's key) when a document's sensitivity or its confidential readers change, so no
cached answer outlives the access it was built under. Signals, because the admin, the API and
the shell all edit these fields.

A document its user did not title is titled by its file name while it is confidential (its title
is shown to the whole firm; the text's title is kept in `text_title` for when it no longer is).

An e-mail's attachments say what the e-mail says: an e-mail made confidential makes its
attachments confidential too (never the reverse: making it internal again leaves them as they
are), and readers added to or removed from an e-mail are added to or removed from its attachments,
nested e-mails' included."""

from __future__ import annotations

from django.db.models.signals import m2m_changed, post_save
from django.dispatch import receiver

from .ingest import titles
from .ingest.service import bump_index_version
from .models import Chunk, Document, Sensitivity, TitleSource


@receiver(post_save, sender=Document)
def document_access_changed(sender, instance: Document, created: bool, **kwargs) -> None:
    loaded = getattr(instance, "_loaded_sensitivity", None)
    if not created and loaded is not None and loaded != instance.sensitivity:
        # Chunks carry a copy of the field for filtering inside the search SQL.
        Chunk.objects.filter(tenant_id=instance.tenant_id, document=instance).update(
            sensitivity=instance.sensitivity
        )
        _retitle(instance)
        bump_index_version(tenant=instance.tenant)
        if instance.sensitivity == Sensitivity.CONFIDENTIAL:
            for attachment in _attachments(instance).exclude(sensitivity=Sensitivity.CONFIDENTIAL):
                attachment.sensitivity = Sensitivity.CONFIDENTIAL
                attachment.save(update_fields=["sensitivity", "updated_at"])
    instance._loaded_sensitivity = instance.sensitivity


@receiver(m2m_changed, sender=Document.confidential_readers.through)
def confidential_readers_changed(sender, instance, action: str, reverse: bool, **kwargs) -> None:
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if not reverse:
        bump_index_version(tenant=instance.tenant)
        for attachment in _attachments(instance):  # each one's own signal goes on down
            readers = attachment.confidential_readers
            if action == "post_clear":
                readers.clear()
            elif action == "post_add":
                readers.add(*(kwargs.get("pk_set") or ()))
            else:
                readers.remove(*(kwargs.get("pk_set") or ()))
        return
    # Changed from the user's side: every tenant with a document of theirs in the change.
    pk_set = kwargs.get("pk_set") or set()
    tenants = Document.objects.filter(pk__in=pk_set).values_list("tenant_id", flat=True).distinct()
    for tenant_id in tenants:
        bump_index_version(tenant=Document(tenant_id=tenant_id).tenant)


def _retitle(document: Document) -> None:
    """A document its user did not title is titled by its file name while confidential and by what
    its text gives otherwise (titles.shown_title): the title is shown to the whole firm."""
    if document.title_source == TitleSource.USER:
        return
    title, source = titles.shown_title(
        text_title=document.text_title,
        filename=document.original_filename,
        confidential=document.sensitivity == Sensitivity.CONFIDENTIAL,
    )
    if (title, source) != (document.title, document.title_source):
        Document.objects.filter(pk=document.pk).exclude(title_source=TitleSource.USER).update(
            title=title, title_source=source
        )
        document.title, document.title_source = title, source


def _attachments(document: Document):
    """The documents attached to `document` (an e-mail), in its tenant."""
    return Document.objects.filter(tenant_id=document.tenant_id, parent=document)
