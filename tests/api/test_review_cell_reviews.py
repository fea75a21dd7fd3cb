"""A lawyer reviews a review table's cells: their answer and note are kept with who and when, win
over the machine's answer in the table and its exports, can be taken back, and go when the cell is
computed again for a changed document. Only members and above review; a cell of a document the
reviewer may not read, or of another firm's table, is not found."""

from __future__ import annotations

import csv
import io

import pytest
from django.utils import timezone

from rag.models import Document
from rag.review.tables.models import ReviewCell
from tenants.models import Role
from tests.api.test_review_tables_api import COLUMNS, make_table, matter, session  # noqa: F401
from tests.factories import MembershipFactory

INSURANCE = 1  # COLUMNS' index of the insurance column


def cell_url(table: dict, document_id: int, column_index: int = INSURANCE) -> str:
    cell = ReviewCell.objects.filter(table_id=table["id"], document_id=document_id, column_index=column_index)
    return f"/api/v1/rag/review-cells/{cell.values_list('pk', flat=True).first() or 2_000_000_000}"


def exported(client, table: dict) -> dict[str, dict[str, str]]:
    """The CSV export's rows by document title, each {header: value}."""
    lines = list(csv.reader(io.StringIO(client.get(f"{table['url']}/export").content.decode())))
    return {line[0]: dict(zip(lines[0], line, strict=True)) for line in lines[1:]}


@pytest.mark.django_db
def test_a_reviewed_answer_wins_in_the_table_and_the_exports_and_can_be_taken_back(
    matter,  # noqa: F811
    admin_client,
    tenant,
):
    case, open_doc, _ = matter
    table = make_table(admin_client, case.pk)
    machine = ReviewCell.objects.get(table_id=table["id"], document=open_doc, column_index=INSURANCE).answer
    lawyer = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    client = session(lawyer)

    reviewed = client.put(
        cell_url(table, open_doc.pk),
        {"answer": "Yes", "note": "Fees clause 1 requires cover."},
        format="json",
    )
    assert reviewed.status_code == 200, reviewed.content
    review = reviewed.json()["review"]
    assert review["answer"] == "Yes" and review["note"] == "Fees clause 1 requires cover."
    assert review["reviewer"] == lawyer.get_username() and review["reviewed_at"]
    assert reviewed.json()["answer"] == machine  # the machine's answer is kept for comparison

    row = next(r for r in admin_client.get(table["url"]).json()["rows"] if r["document_id"] == open_doc.pk)
    assert row["cells"][INSURANCE]["review"]["answer"] == "Yes"
    assert cell_url(table, open_doc.pk).endswith(f"/{row['cells'][INSURANCE]['id']}")  # the cell's id
    assert row["cells"][0]["review"] is None  # other cells untouched
    line = exported(admin_client, table)["Consulting Agreement"]
    assert line["Insurance"] == "Yes" and line["Insurance: needs review"] == "no"
    assert line["Insurance: reviewed"] == (
        f"by {lawyer.get_username()} on {timezone.now():%Y-%m-%d}; the review table said: {machine}; "
        "note: Fees clause 1 requires cover."
    )

    taken_back = client.delete(cell_url(table, open_doc.pk))
    assert taken_back.status_code == 200 and taken_back.json()["review"] is None
    line = exported(admin_client, table)["Consulting Agreement"]
    assert line["Insurance"] == machine and line["Insurance: reviewed"] == ""


@pytest.mark.django_db
def test_a_review_goes_when_its_document_changes_and_stays_when_it_does_not(matter, admin_client):  # noqa: F811
    case, open_doc, closed = matter
    table = make_table(admin_client, case.pk)
    for document in (open_doc, closed):
        response = admin_client.put(cell_url(table, document.pk), {"answer": "No"}, format="json")
        assert response.status_code == 200
        assert response.json()["review"]["reviewer"].startswith("API key ")
    Document.objects.filter(pk=open_doc.pk).update(indexed_at=timezone.now())  # reindexed
    assert admin_client.post(f"{table['url']}/rerun").status_code == 202
    cells = {
        cell.document_id: cell
        for cell in ReviewCell.objects.filter(table_id=table["id"], column_index=INSURANCE)
    }
    assert not cells[open_doc.pk].reviewed  # it judged text that is gone
    assert cells[closed.pk].reviewed and cells[closed.pk].reviewed_answer == "No"


@pytest.mark.django_db
def test_who_may_review_what(matter, admin_client, viewer_client, member_client, other_admin_client, tenant):  # noqa: F811
    case, open_doc, closed = matter
    table = make_table(admin_client, case.pk)
    answer = {"answer": "No"}
    assert viewer_client.put(cell_url(table, open_doc.pk), answer, format="json").status_code == 403
    # A confidential document the member may not read: the same 404 as a cell that does not exist
    # (column 9 has none).
    hidden = member_client.put(cell_url(table, closed.pk), answer, format="json")
    missing = member_client.put(cell_url(table, open_doc.pk, column_index=9), answer, format="json")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["message"] == missing.json()["message"] == "Review cell not found."
    assert member_client.delete(cell_url(table, closed.pk)).status_code == 404
    assert other_admin_client.put(cell_url(table, open_doc.pk), answer, format="json").status_code == 404
    assert not ReviewCell.objects.filter(table_id=table["id"], reviewed_at__isnull=False).exists()
    granted = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    closed.confidential_readers.add(granted)
    assert session(granted).put(cell_url(table, closed.pk), answer, format="json").status_code == 200


@pytest.mark.django_db
def test_a_review_without_an_answer_or_too_long_is_a_clear_400(matter, admin_client):  # noqa: F811
    case, open_doc, _ = matter
    table = make_table(admin_client, case.pk)
    for body, field in (
        ({"answer": "  "}, "answer"),
        ({"note": "x"}, "answer"),
        ({"answer": "No", "note": "x" * 4001}, "note"),
    ):
        response = admin_client.put(cell_url(table, open_doc.pk), body, format="json")
        assert response.status_code == 400, body
        assert response.json()["error_type"] in ("ValidationError", "InvalidInput")
        assert field in response.json()["details"]
    assert not ReviewCell.objects.filter(table_id=table["id"], reviewed_at__isnull=False).exists()
