"""The review tables' REST API: make a table for a case, poll it, fetch its cells, export them as
CSV and XLSX, cancel, re-run and delete it, and the firm's saved column sets. Confidential and
walled documents never reach a reader's table or export; another tenant's ids are 404s."""

from __future__ import annotations

import csv
import io

import pytest
from openpyxl import load_workbook
from rest_framework.test import APIClient

from rag import services as case_services
from rag.models import Sensitivity
from rag.review.tables.models import ReviewCell
from tenants.models import Role
from tests.factories import MembershipFactory

LAW = "This Agreement shall be governed by the laws of the State of {}."
SECRET = "The settlement amount is $4,750,000, payable by Hooli within thirty days."
OPEN = "CONSULTING AGREEMENT between Acme and Initech.\n\n1. Fees. Fees are due monthly.\n\n2. " + LAW.format(
    "New York"
)
CLOSED = (
    "SETTLEMENT AGREEMENT between Hooli and Pied Piper.\n\n1. " + SECRET + "\n\n2. " + LAW.format("Delaware")
)
COLUMNS = [{"key": "governing_law"}, {"key": "insurance"}, {"question": "What law governs this agreement?"}]


@pytest.fixture
def matter(case, ingest_text):
    open_doc = ingest_text(case, OPEN, filename="consulting.txt", title="Consulting Agreement")
    closed = ingest_text(
        case, CLOSED, filename="doc-0193.txt", title="Matter 7", sensitivity=Sensitivity.CONFIDENTIAL
    )
    return case, open_doc, closed


def make_table(client, case_id, columns=COLUMNS, **extra):
    response = client.post(
        f"/api/v1/rag/cases/{case_id}/review-tables", {"columns": columns, **extra}, format="json"
    )
    assert response.status_code == 202, response.content
    return response.json()


def session(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_a_table_is_made_polled_fetched_and_its_cells_quote_the_documents(matter, admin_client):
    case, open_doc, closed = matter
    made = make_table(admin_client, case.pk, name="Diligence")
    assert made["progress"]["total"] == 6 and made["status"] == "done"  # eager here: done at once
    assert [c["key"] for c in made["columns"]] == ["governing_law", "insurance", "q2"]
    polled = admin_client.get(made["url"] + "/status").json()
    assert polled["status"] == "done" and polled["progress"] == {"done": 6, "total": 6}
    listed = admin_client.get(f"/api/v1/rag/cases/{case.pk}/review-tables").json()
    assert [row["id"] for row in listed] == [made["id"]]

    table = admin_client.get(made["url"]).json()
    assert {row["document_id"] for row in table["rows"]} == {open_doc.pk, closed.pk}
    assert table["redactions_applied"] is False
    texts = {open_doc.pk: OPEN, closed.pk: CLOSED}
    for row in table["rows"]:
        assert len(row["cells"]) == 3 and all(cell is not None for cell in row["cells"])
        law = row["cells"][0]
        assert law["quote"] and texts[row["document_id"]][law["char_start"] : law["char_end"]] == law["quote"]
        assert (
            law["passage_url"]
            == f"/documents/{row['document_id']}/?start={law['char_start']}&end={law['char_end']}"
        )
        assert row["cells"][1]["answer"] in ("Yes", "No")
        for cell in row["cells"]:
            assert set(cell) >= {"answer", "quote", "confidence", "needs_review", "page", "chunk_id"}
    laws = {row["document_id"]: row["cells"][0]["quote"] for row in table["rows"]}
    assert "New York" in laws[open_doc.pk] and "Delaware" in laws[closed.pk]


def _numbers(row: list[str]) -> list[str]:
    def number(value: str) -> str:
        try:
            return str(float(value))
        except ValueError:
            return value

    return [number(value) for value in row]


@pytest.mark.django_db
def test_the_exports_hold_every_cell_as_csv_and_xlsx(matter, admin_client):
    case, open_doc, _ = matter
    made = make_table(admin_client, case.pk)
    response = admin_client.get(f"{made['url']}/export")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == f'attachment; filename="review-table-{made["id"]}.csv"'
    lines = list(csv.reader(io.StringIO(response.content.decode())))
    assert lines[0][:3] == ["Document", "Document id", "Governing Law"]
    assert lines[0][3:8] == [
        f"Governing Law: {part}" for part in ("quote", "page", "confidence", "needs review", "reviewed")
    ]
    assert len(lines[0]) == 2 + 3 * 6 and len(lines) == 3
    consulting = next(line for line in lines if line[0] == "Consulting Agreement")
    assert consulting[1] == str(open_doc.pk) and "New York" in consulting[3] and consulting[4] == "1"

    workbook = admin_client.get(f"{made['url']}/export", {"as": "xlsx"})
    assert workbook.status_code == 200
    assert workbook["Content-Type"] == "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    book = load_workbook(io.BytesIO(workbook.content))
    sheet = [
        [("" if v is None else str(v)) for v in row]
        for row in book["Review table"].iter_rows(values_only=True)
    ]
    # A spreadsheet keeps numbers as numbers: 1.0 in the CSV reads back as 1.
    assert sheet[0] == lines[0] and sorted(map(_numbers, sheet[1:])) == sorted(map(_numbers, lines[1:]))
    assert [row[0] for row in book["Columns"].iter_rows(values_only=True)][1:] == [
        "Governing Law",
        "Insurance",
        "What law governs this agreement?",
    ]
    bad = admin_client.get(f"{made['url']}/export", {"as": "pdf"})
    assert bad.status_code == 400 and bad.json()["error_type"] == "ValidationError"


@pytest.mark.django_db
def test_a_formula_in_a_typed_question_is_not_run_by_a_spreadsheet(matter, admin_client):
    case, _, _ = matter
    made = make_table(admin_client, case.pk, columns=[{"question": '=HYPERLINK("http://x")'}])
    header = next(csv.reader(io.StringIO(admin_client.get(f"{made['url']}/export").content.decode())))
    assert header[2] == '\'=HYPERLINK("http://x")'


@pytest.mark.django_db
def test_confidential_cells_are_left_out_for_a_reader_who_may_not_read_them(
    matter, admin_client, viewer_client, tenant
):
    case, open_doc, closed = matter
    made = make_table(admin_client, case.pk)
    assert ReviewCell.objects.filter(table_id=made["id"], document_id=closed.pk).count() == 3  # admin's run
    member = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    for client in (viewer_client, session(member)):
        table = client.get(made["url"])
        assert table.status_code == 200
        body = table.json()
        assert [row["document_id"] for row in body["rows"]] == [open_doc.pk]
        assert body["redactions_applied"] is True
        for fmt in ("csv", "xlsx"):
            export = client.get(f"{made['url']}/export", {"as": fmt})
            assert export.status_code == 200
            text = export.content.decode("latin-1") if fmt == "xlsx" else export.content.decode()
            assert "Matter 7" not in text and "Delaware" not in text and "4,750,000" not in text
        csv_rows = list(csv.reader(io.StringIO(client.get(f"{made['url']}/export").content.decode())))
        assert [line[0] for line in csv_rows[1:]] == ["Consulting Agreement"]
    # Granted: the same stored table now shows them the document.
    closed.confidential_readers.add(member)
    shown = session(member).get(made["url"]).json()
    assert {row["document_id"] for row in shown["rows"]} == {open_doc.pk, closed.pk}


@pytest.mark.django_db
def test_a_table_made_by_a_reader_never_checks_what_they_may_not_read(matter, tenant):
    case, open_doc, _closed = matter
    member = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    made = make_table(session(member), case.pk)
    assert made["progress"]["total"] == 3  # one document of two: the other is not counted
    assert set(ReviewCell.objects.filter(table_id=made["id"]).values_list("document_id", flat=True)) == {
        open_doc.pk
    }


@pytest.mark.django_db
def test_a_walled_case_and_its_tables_are_not_found_for_those_off_the_wall(matter, tenant, admin_client):
    case, _, _ = matter
    insider = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    outsider = MembershipFactory(tenant=tenant, role=Role.ADMIN).user
    made = make_table(session(insider), case.pk)
    case_services.case_wall_set(tenant=tenant, case_id=case.pk, walled=True, members=[insider])
    missing = 2_000_000_000
    for client in (session(outsider), admin_client):
        for suffix in ("", "/status", "/export", "/export?as=xlsx"):
            walled = client.get(f"/api/v1/rag/review-tables/{made['id']}{suffix}")
            absent = client.get(f"/api/v1/rag/review-tables/{missing}{suffix}")
            assert walled.status_code == absent.status_code == 404
            assert walled.json()["message"] == absent.json()["message"]
        for verb in ("cancel", "rerun"):
            assert client.post(f"/api/v1/rag/review-tables/{made['id']}/{verb}").status_code == 404
        assert client.delete(f"/api/v1/rag/review-tables/{made['id']}").status_code == 404
        listed = client.get(f"/api/v1/rag/cases/{case.pk}/review-tables")
        assert listed.status_code == 404
        create = client.post(
            f"/api/v1/rag/cases/{case.pk}/review-tables", {"columns": COLUMNS}, format="json"
        )
        assert create.status_code == 404
    assert session(insider).get(made["url"]).status_code == 200  # control


@pytest.mark.django_db
def test_another_tenants_table_and_template_are_not_found(matter, admin_client, other_admin_client):
    case, _, _ = matter
    made = make_table(admin_client, case.pk)
    template = admin_client.post(
        "/api/v1/rag/review-templates", {"name": "Ours", "columns": COLUMNS}, format="json"
    ).json()
    for url in (made["url"], f"{made['url']}/status", f"{made['url']}/export"):
        assert other_admin_client.get(url).status_code == 404
    assert other_admin_client.post(f"{made['url']}/rerun").status_code == 404
    assert other_admin_client.delete(f"/api/v1/rag/review-templates/{template['id']}").status_code == 404
    assert other_admin_client.get("/api/v1/rag/review-templates").json() == []
    theirs = other_admin_client.post(
        f"/api/v1/rag/cases/{case.pk}/review-tables", {"template_id": template["id"]}, format="json"
    )
    assert theirs.status_code == 404
    assert admin_client.get(made["url"]).status_code == 200


@pytest.mark.django_db
def test_roles_cancel_rerun_and_delete(matter, admin_client, member_client, viewer_client):
    case, _, _ = matter
    assert (
        viewer_client.post(
            f"/api/v1/rag/cases/{case.pk}/review-tables", {"columns": COLUMNS}, format="json"
        ).status_code
        == 403
    )
    made = make_table(member_client, case.pk, columns=COLUMNS[:2])
    assert viewer_client.get(made["url"]).status_code == 200
    assert viewer_client.post(f"{made['url']}/rerun").status_code == 403
    cancelled = member_client.post(f"{made['url']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "done"  # finished: unchanged
    rerun = member_client.post(f"{made['url']}/rerun")
    assert rerun.status_code == 202 and rerun.json()["status"] in ("queued", "done")
    assert member_client.get(made["url"] + "/status").json()["progress"] == {
        "done": 2,
        "total": 2,
    }  # the member key reads 1 of 2
    assert viewer_client.delete(made["url"]).status_code == 403
    assert member_client.delete(made["url"]).status_code == 204
    assert member_client.get(made["url"]).status_code == 404


@pytest.mark.django_db
def test_bad_columns_are_400s_naming_the_entry(matter, member_client):
    case, _, _ = matter
    url = f"/api/v1/rag/cases/{case.pk}/review-tables"
    for body, field in (
        ({"columns": []}, "columns"),
        ({"columns": [{"key": "nope"}]}, "columns[0]"),
        ({"columns": [{"key": "insurance"}, {"question": 7}]}, "columns[1]"),
        ({}, "columns"),
        ({"columns": COLUMNS, "template_id": 1}, "columns"),
    ):
        response = member_client.post(url, body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json()["details"], response.json()
    assert member_client.post(url, {"template_id": 2_000_000_000}, format="json").status_code == 404


@pytest.mark.django_db
def test_firm_templates_are_made_by_admins_and_used_by_members(matter, admin_client, member_client):
    case, _, _ = matter
    body = {"name": "Diligence set", "columns": COLUMNS[:2]}
    assert member_client.post("/api/v1/rag/review-templates", body, format="json").status_code == 403
    made = admin_client.post("/api/v1/rag/review-templates", body, format="json")
    assert made.status_code == 201, made.content
    template = made.json()
    assert admin_client.post("/api/v1/rag/review-templates", body, format="json").status_code == 409
    assert [t["name"] for t in member_client.get("/api/v1/rag/review-templates").json()] == ["Diligence set"]
    response = member_client.post(
        f"/api/v1/rag/cases/{case.pk}/review-tables", {"template_id": template["id"]}, format="json"
    )
    assert response.status_code == 202 and response.json()["name"] == "Diligence set"
    assert [c["key"] for c in response.json()["columns"]] == ["governing_law", "insurance"]
    assert member_client.delete(f"/api/v1/rag/review-templates/{template['id']}").status_code == 403
    assert admin_client.delete(f"/api/v1/rag/review-templates/{template['id']}").status_code == 204
    assert member_client.get("/api/v1/rag/review-templates").json() == []


@pytest.mark.django_db
def test_the_built_in_columns_are_listed(viewer_client):
    columns = viewer_client.get("/api/v1/rag/review-columns").json()
    keys = {c["key"]: c for c in columns}
    assert keys["non_compete"]["kind"] == "presence" and keys["governing_law"]["kind"] == "value"
    assert len(columns) == 42  # CUAD's clause types and values, termination and payment terms
