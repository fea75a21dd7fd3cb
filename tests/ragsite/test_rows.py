"""ragsite.rows: hand-written SQL that must load and insert rows exactly as the ORM does."""

import pytest
from django.db import IntegrityError, transaction

from rag.models import AuditLog, AuditStatus
from ragsite.rows import insert_row, model_from_row
from tenants.models import Tenant

pytestmark = pytest.mark.django_db


def _audit(tenant, **overrides) -> AuditLog:
    values = {
        "tenant": tenant,
        "request_id": "req_rows",
        "query": "What law governs? \u00e9\u00e8 'quoted' \"double\" %s %(x)s",
        "status": AuditStatus.ANSWERED,
        "latency_ms": 12.5,
        "flags": {"cache_hit": True, "nested": {"list": [1, "two", None]}},
        "documents_retrieved": [3, 1, 2],
        "result": {"answer": "It is Delaware law [1].", "citations": [{"citation_id": "1"}]},
        **overrides,
    }
    return AuditLog(**values)


def test_an_inserted_row_reads_back_like_one_the_orm_saved(tenant):
    mine = insert_row(_audit(tenant))
    theirs = _audit(tenant)
    theirs.save()
    assert mine.pk and mine.pk != theirs.pk and not mine._state.adding
    stored, expected = AuditLog.objects.get(pk=mine.pk), AuditLog.objects.get(pk=theirs.pk)
    for field in AuditLog._meta.concrete_fields:
        if field.name not in ("id", "created_at"):
            assert getattr(stored, field.attname) == getattr(expected, field.attname), field.name
    assert stored.created_at == mine.created_at  # auto_now_add filled in, as save() does
    assert stored.options == {} and stored.search_query == ""  # defaults applied


def test_a_refused_row_is_not_half_written(tenant):
    count = AuditLog.objects.count()
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_row(_audit(tenant, tokens_used=-1))  # the PositiveIntegerField's CHECK
    assert AuditLog.objects.count() == count


def test_a_row_loads_with_its_json_parsed(tenant):
    tenant.settings = {"a": [1, 2]}
    tenant.save()
    values = [getattr(tenant, field.attname) for field in Tenant._meta.concrete_fields]
    values[[f.name for f in Tenant._meta.concrete_fields].index("settings")] = '{"a": [1, 2]}'
    loaded = model_from_row(Tenant, values)
    assert loaded == tenant and loaded.settings == {"a": [1, 2]} and not loaded._state.adding
    with pytest.raises(ValueError):
        model_from_row(Tenant, values[:-1])
