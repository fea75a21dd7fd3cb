"""Review tables end to end, on small contracts ingested for real: every visible document gets a
cell per column, each quote is the document's own text at its offsets, the job shows progress,
stops when cancelled, and a re-run recomputes only the cells of documents that changed. (The
clause model's Yes/No on tiny contracts is not what these tests judge: the shape of the cells is.)"""

from __future__ import annotations

import pytest

from rag import services as rag_services
from rag.ingest import service
from rag.models import Document
from rag.pipeline.run import run_query
from rag.queries.caller import Caller
from rag.queries.selectors import query_history_list
from rag.review.tables import fill, services
from rag.review.tables.models import ReviewCell, ReviewStatus, ReviewTable
from rag.selectors import audit_search
from ragsite.exceptions import InvalidInput, NotFound
from tenants.models import Role

from .contracts import ingest

GOVERNING_LAW = "15. Governing Law. This Agreement shall be governed by the laws of the State of {state}."
NON_COMPETE = (
    "8. Non-Competition. During the Term and for two (2) years thereafter, Distributor shall not, "
    "directly or indirectly, manufacture, sell, distribute or promote any products that compete with "
    "the Products anywhere in the Territory."
)
PAYMENT = "2. Payment. Invoices are payable within thirty (30) days of receipt."


def contract(kind: str, parties: str, state: str, *clauses: str) -> str:
    return "\n\n".join([f"{kind} between {parties}.", PAYMENT, *clauses, GOVERNING_LAW.format(state=state)])


CONTRACTS = {
    "Alpha Distribution Agreement": contract(
        "DISTRIBUTION AGREEMENT", "Alpha Foods Inc and Northwind LLC", "Delaware", NON_COMPETE
    ),
    "Beta Supply Agreement": contract("SUPPLY AGREEMENT", "Beta Metals Corp and Contoso Ltd", "New York"),
    "Gamma License Agreement": contract("LICENSE AGREEMENT", "Gamma Software Inc and Fabrikam Corp", "Texas"),
}
COLUMNS = [{"key": "non_compete"}, {"key": "governing_law"}, {"question": "When are invoices payable?"}]


@pytest.fixture
def matter(tenant):
    case = rag_services.case_create(tenant=tenant, name="Northwind diligence")
    return case, {title: ingest(tenant, case, title, text) for title, text in CONTRACTS.items()}


def admin(tenant) -> Caller:
    return Caller(tenant=tenant, role=Role.ADMIN)


def cells_of(table) -> list[ReviewCell]:
    return list(ReviewCell.objects.filter(table=table).order_by("document_id", "column_index"))


@pytest.mark.django_db
def test_every_document_gets_a_cell_per_column_quoting_its_own_text(tenant, matter):
    case, documents = matter
    table = services.review_table_create(caller=admin(tenant), case_id=case.pk, columns=COLUMNS)
    table.refresh_from_db()
    assert table.status == ReviewStatus.DONE, table.error
    assert (table.done, table.total) == (9, 9)
    cells = cells_of(table)
    assert {(c.document_id, c.column_index) for c in cells} == {
        (d.pk, i) for d in documents.values() for i in range(3)
    }
    texts = {d.pk: Document.objects.get(pk=d.pk).text for d in documents.values()}
    quoted = 0
    for cell in cells:
        assert not cell.error, cell.error
        assert cell.document_indexed_at == documents_by_pk(documents)[cell.document_id].indexed_at
        if cell.column_index == 0:
            assert cell.answer in ("Yes", "No")
        if cell.char_start is not None:
            quoted += 1
            assert texts[cell.document_id][cell.char_start : cell.char_end] == cell.quote
            assert cell.quote and cell.page == 1 and cell.chunk_id
        else:
            assert cell.answer in ("No", "") or cell.needs_review
    law = {c.document_id: c for c in cells if c.column_key == "governing_law"}
    for title, state in (("Alpha Distribution Agreement", "Delaware"), ("Beta Supply Agreement", "New York")):
        assert state in law[documents[title].pk].quote, law[documents[title].pk].answer
        # The cell states the value (rag.answers); the quote is in its own field.
        assert law[documents[title].pk].answer == f"The laws of {state} govern."
    assert quoted >= 6  # governing law and the invoices question are quoted in every contract
    invoices = [c for c in cells if c.column_index == 2]
    assert all("thirty (30) days" in c.quote for c in invoices), [c.answer for c in invoices]


def documents_by_pk(documents) -> dict[int, Document]:
    return {d.pk: Document.objects.get(pk=d.pk) for d in documents.values()}


@pytest.mark.django_db
def test_progress_is_known_at_once_and_moves_cell_by_cell(tenant, matter, monkeypatch):
    case, _ = matter
    table = services.review_table_create(
        caller=admin(tenant), case_id=case.pk, columns=[{"key": "governing_law"}], enqueue=False
    )
    table.refresh_from_db()
    assert (table.status, table.done, table.total) == (ReviewStatus.QUEUED, 0, 3)
    seen, real = [], fill.run_query

    def watched(**kwargs):
        seen.append(ReviewTable.objects.values_list("status", "done").get(pk=table.pk))
        return real(**kwargs)

    monkeypatch.setattr(fill, "run_query", watched)
    assert fill.table_fill(table_id=table.pk, run=table.run) == ReviewStatus.DONE
    assert seen == [("running", 0), ("running", 1), ("running", 2)]
    table.refresh_from_db()
    assert (table.done, table.total) == (3, 3) and table.finished_at is not None


@pytest.mark.django_db
def test_a_cancelled_table_stops_and_a_rerun_finishes_only_what_is_missing(tenant, matter, monkeypatch):
    case, _ = matter
    caller = admin(tenant)
    table = services.review_table_create(
        caller=caller, case_id=case.pk, columns=[{"question": "When are invoices payable?"}], enqueue=False
    )
    asked, real = [], fill.run_query

    def cancel_after_first(**kwargs):
        asked.append(kwargs["filters"]["document_ids"][0])
        if len(asked) == 1:
            services.review_table_cancel(table=table)
        return real(**kwargs)

    monkeypatch.setattr(fill, "run_query", cancel_after_first)
    assert fill.table_fill(table_id=table.pk, run=table.run) == ReviewStatus.CANCELLED
    table.refresh_from_db()
    assert table.status == ReviewStatus.CANCELLED and table.done < table.total
    assert len(asked) == 1 and [c.document_id for c in cells_of(table)] == asked  # the one in flight

    asked.clear()
    monkeypatch.setattr(fill, "run_query", lambda **kwargs: (asked.append(kwargs), real(**kwargs))[1])
    services.review_table_rerun(caller=caller, table=table)
    table.refresh_from_db()
    assert table.status == ReviewStatus.DONE and (table.done, table.total) == (3, 3)
    assert len(asked) == 2 and len(cells_of(table)) == 3


@pytest.mark.django_db
def test_a_rerun_recomputes_only_changed_added_and_removed_documents(
    tenant, matter, monkeypatch, django_capture_on_commit_callbacks
):
    case, documents = matter
    caller = admin(tenant)
    table = services.review_table_create(caller=caller, case_id=case.pk, columns=COLUMNS)
    before = {(c.document_id, c.column_index): c.computed_at for c in cells_of(table)}

    asked, reviewed = [], []
    real_query, real_review = fill.run_query, fill.review
    monkeypatch.setattr(
        fill, "run_query", lambda **kw: (asked.append(kw["filters"]["document_ids"][0]), real_query(**kw))[1]
    )
    monkeypatch.setattr(
        fill, "review", lambda **kw: (reviewed.append(set(kw["filters"].document_ids)), real_review(**kw))[1]
    )
    services.review_table_rerun(caller=caller, table=table)
    assert asked == [] and reviewed == []  # nothing changed: nothing recomputed
    table.refresh_from_db()
    assert table.status == ReviewStatus.DONE and (table.done, table.total) == (9, 9)

    beta, gamma = documents["Beta Supply Agreement"], documents["Gamma License Agreement"]
    with django_capture_on_commit_callbacks(execute=True):  # eager: indexed again now
        service.document_reindex(tenant=tenant, document_id=beta.pk)
    assert Document.objects.get(pk=beta.pk).indexed_at != beta.indexed_at
    service.document_delete(tenant=tenant, document_id=gamma.pk)
    delta = ingest(
        tenant, case, "Delta Services Agreement", contract("SERVICES AGREEMENT", "Delta and Initech", "Ohio")
    )
    services.review_table_rerun(caller=caller, table=table)
    table.refresh_from_db()
    assert table.status == ReviewStatus.DONE and (table.done, table.total) == (9, 9)
    assert sorted(asked) == sorted([beta.pk, delta.pk] * 2)  # two pipeline columns each
    assert reviewed == [{beta.pk, delta.pk}]  # one presence column, only the changed documents
    after = {(c.document_id, c.column_index): c.computed_at for c in cells_of(table)}
    alpha = documents["Alpha Distribution Agreement"].pk
    assert {key[0] for key in after} == {alpha, beta.pk, delta.pk}
    assert all(after[(alpha, i)] == before[(alpha, i)] for i in range(3))  # untouched
    assert all(after[(beta.pk, i)] != before[(beta.pk, i)] for i in range(3))


@pytest.mark.django_db
def test_a_document_not_indexed_yet_gets_cells_that_need_review(tenant, matter):
    case, _ = matter
    pending = Document.objects.create(
        tenant=tenant, case=case, title="Epsilon Draft", original_filename="e.pdf", size_bytes=1, sha256="e"
    )
    table = services.review_table_create(caller=admin(tenant), case_id=case.pk, columns=COLUMNS[:2])
    cells = [c for c in cells_of(table) if c.document_id == pending.pk]
    assert len(cells) == 2 and all(c.needs_review and c.error == fill.NOT_INDEXED for c in cells)


@pytest.mark.django_db
def test_columns_are_validated_and_a_template_supplies_them(tenant, matter):
    case, _ = matter
    caller = admin(tenant)
    for bad in ([], [{"key": "no_such_column"}], [{"question": ""}], [{"key": "insurance", "question": "x"}]):
        with pytest.raises(InvalidInput):
            services.review_table_create(caller=caller, case_id=case.pk, columns=bad, enqueue=False)
    with pytest.raises(InvalidInput):
        services.review_table_create(caller=caller, case_id=case.pk, columns=[{"key": "insurance"}] * 2)
    template = services.review_template_create(caller=caller, name="Diligence", columns=COLUMNS[:2])
    table = services.review_table_create(
        caller=caller, case_id=case.pk, template_id=template.pk, enqueue=False
    )
    assert table.columns == COLUMNS[:2] and table.name == "Diligence"
    with pytest.raises(InvalidInput):
        services.review_table_create(
            caller=caller, case_id=case.pk, template_id=template.pk, columns=COLUMNS, enqueue=False
        )


@pytest.mark.django_db
def test_another_tenants_case_and_template_are_not_found(tenant, other_tenant, matter):
    case, _ = matter
    theirs = services.review_template_create(caller=admin(other_tenant), name="Theirs", columns=COLUMNS[:1])
    with pytest.raises(NotFound):
        services.review_table_create(
            caller=admin(other_tenant), case_id=case.pk, columns=COLUMNS, enqueue=False
        )
    with pytest.raises(NotFound):
        services.review_table_create(
            caller=admin(tenant), case_id=case.pk, template_id=theirs.pk, enqueue=False
        )


@pytest.mark.django_db
def test_a_tables_cells_are_audited_but_kept_out_of_the_starters_question_history(tenant, matter, member):
    case, _ = matter
    caller = Caller(tenant=tenant, role=Role.ADMIN, user_id=member.pk)
    run_query(tenant=tenant, question="Who are the parties?", user_id=member.pk, use_cache=False)
    table = services.review_table_create(
        caller=caller, case_id=case.pk, columns=[{"question": "When are invoices payable?"}]
    )
    table.refresh_from_db()
    assert table.status == ReviewStatus.DONE, table.error
    audited = audit_search(tenant=tenant).filter(user_id=member.pk, query="When are invoices payable?")
    assert audited.count() == 3  # one per document, each in the firm's audit trail
    assert all(row.flags["origin"] == "review_table" for row in audited)
    history = query_history_list(tenant=tenant, caller=caller)
    assert [row.query for row in history] == ["Who are the parties?"]
