"""manage.py review_signals: compute the clause signals (rag.review.signals) of indexed documents
that have none of the current clause model, e.g. after a new model is installed."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from rag.models import ClauseSignal, Document, DocumentStatus
from rag.review import signals
from rag.review.model import clause_model
from tenants.models import Tenant


class Command(BaseCommand):
    help = "Compute missing or outdated clause signals of ready documents (all tenants, or --tenant SLUG)."

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="the tenant's slug (default: every tenant)")

    def handle(self, *args, **options):
        model = clause_model()
        if model is None:
            raise CommandError("No clause model is installed (rag/review/data/clause_model.json).")
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
        for number, document in enumerate(documents.iterator(), 1):
            signals.compute(document, model)
            self.stderr.write(f"signals {number}/{total} documents")
        self.stdout.write(f"{total} documents now have signals of clause model {model.version}.")
