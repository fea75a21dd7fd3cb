"""manage.py review_signals: compute the clause signals (rag.review.signals) of indexed documents
that have none of the current clause model, e.g. after a new model is installed; with --verify,
also have the language model read the unsure verdicts not yet read (rag.review.verifier,
RAG_REVIEW_VERIFIER), e.g. after turning the verifier on or after a failed verification."""

from __future__ import annotations

import contextlib

from django.core.management.base import BaseCommand, CommandError

from rag.models import ClauseSignal, Document, DocumentStatus
from rag.review import signals, verifier
from rag.review.model import clause_model
from tenants.models import Tenant


class Command(BaseCommand):
    help = "Compute missing or outdated clause signals of ready documents (all tenants, or --tenant SLUG)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="the tenant's slug (default: every tenant)")
        parser.add_argument(
            "--verify",
            action="store_true",
            help="also have the language model (RAG_REVIEW_VERIFIER) read the unsure verdicts",
        )

    def handle(self, *args, **options):
        model = clause_model()
        if model is None:
            raise CommandError("No clause model is installed (rag/review/data/clause_model.json).")
        if options["verify"] and not verifier.enabled():
            raise CommandError("--verify needs RAG_REVIEW_VERIFIER set to anthropic or ollama.")
        tenants = Tenant.objects.all()
        if options["tenant"]:
            tenants = tenants.filter(slug=options["tenant"])
            if not tenants.exists():
                raise CommandError(f"No tenant {options['tenant']!r}.")
        current = ClauseSignal.objects.filter(model=model.version).values("document_id")
        documents = (
            Document.objects.filter(tenant__in=tenants, status=DocumentStatus.READY)
            .exclude(pk__in=current)
            .select_related("tenant")
            .order_by("pk")
        )
        total = documents.count()
        # With --verify, verified below in this process (with progress), not queued for the worker.
        with verifier.not_queued() if options["verify"] else contextlib.nullcontext():
            for number, document in enumerate(documents.iterator(), 1):
                signals.compute(document, model)
                self.stderr.write(f"signals {number}/{total} documents")
        self.stdout.write(f"{total} documents now have signals of clause model {model.version}.")
        if options["verify"]:
            self._verify(tenants, model)

    def _verify(self, tenants, model):
        unsure = (
            ClauseSignal.objects.filter(tenant__in=tenants, model=model.version, verdict="")
            .values("document_id")
            .distinct()
        )
        documents = Document.objects.filter(pk__in=unsure, status=DocumentStatus.READY)
        total, stored = documents.count(), 0
        for number, document in enumerate(documents.order_by("pk").iterator(), 1):
            stored += verifier.verify_quietly(document)
            self.stderr.write(f"verified {number}/{total} documents")
        self.stdout.write(f"The language model read {stored} unsure clause verdicts of {total} documents.")
