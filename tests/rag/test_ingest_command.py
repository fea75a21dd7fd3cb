"""manage.py ingest: folders recursively, a summary of ok / duplicate / failed with reasons."""

import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from rag.models import Case, Document, DocumentStatus
from tests.rag.conftest import FIXTURES
from tests.scans import BLANK_SCAN_REASON

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "matter"
    (root / "nested").mkdir(parents=True)
    shutil.copy(FIXTURES / "contract.txt", root / "contract.txt")
    shutil.copy(FIXTURES / "contract.docx", root / "nested" / "contract.docx")
    shutil.copy(FIXTURES / "contract.txt", root / "nested" / "same-bytes.txt")  # a duplicate
    shutil.copy(FIXTURES / "scanned.pdf", root / "scan.pdf")  # no text layer
    (root / "notes.md").write_text("ignored: not a supported extension")
    return root


def test_ingest_folder_recursively_with_summary(tenant, folder):
    out = StringIO()
    call_command(
        "ingest",
        str(folder),
        tenant=tenant.slug,
        case="Bulk matter",
        doc_type="contract",
        jurisdiction="New York",
        jobs=1,
        stdout=out,
        stderr=StringIO(),
    )
    summary = out.getvalue()
    assert "2 ok, 1 duplicate, 1 failed" in summary
    assert "scan.pdf" in summary and BLANK_SCAN_REASON in summary
    assert f"review_signals --tenant {tenant.slug}" in summary  # the pass that follows a bulk import
    case = Case.objects.get(tenant=tenant, name="Bulk matter")
    ready = Document.objects.for_tenant(tenant).filter(case=case, status=DocumentStatus.READY)
    assert ready.count() == 2
    assert set(ready.values_list("doc_type", "jurisdiction")) == {("contract", "New York")}
    # Titled from their headings, not from their file names.
    assert set(ready.values_list("title_source", flat=True)) == {"text"}

    again = StringIO()
    call_command(
        "ingest", str(folder), tenant=tenant.slug, case="Bulk matter", jobs=1, stdout=again, stderr=StringIO()
    )
    # Ready documents are duplicates; the failed one is retried (and fails again, for the same reason).
    assert "0 ok, 3 duplicate, 1 failed" in again.getvalue()
    assert "review_signals" not in again.getvalue()  # nothing new to read


def test_unknown_tenant_or_path_is_a_clear_error(tenant, tmp_path):
    with pytest.raises(CommandError, match="Unknown tenant"):
        call_command("ingest", str(tmp_path), tenant="nobody", case="x")
    with pytest.raises(CommandError, match="No such file"):
        call_command("ingest", str(tmp_path / "missing"), tenant=tenant.slug, case="x")


def test_skip_known_leaves_out_what_another_case_of_the_firm_holds(tenant, folder, tmp_path):
    _ingest(folder / "contract.txt", tenant, "Matter")
    summary = _ingest(folder, tenant, "Archive", skip_known=True)
    # contract.txt and its same-bytes copy are in "Matter"; the DOCX is new; the scan fails.
    assert "1 ok, 0 duplicate, 1 failed, 2 already in other cases" in summary
    archive = Case.objects.get(tenant=tenant, name="Archive")
    assert list(Document.objects.for_tenant(tenant).filter(case=archive, status=DocumentStatus.READY)
                .values_list("original_filename", flat=True)) == ["contract.docx"]  # fmt: skip

    # Without the option the archive takes its own copy, as an upload to a case does.
    assert "1 ok, 0 duplicate, 0 failed; " in _ingest(folder / "contract.txt", tenant, "Archive")


def _ingest(path, tenant, case: str, **options) -> str:
    """manage.py ingest of `path` into `case`; its summary."""
    out = StringIO()
    options.setdefault("jobs", 1)
    call_command("ingest", str(path), tenant=tenant.slug, case=case, stdout=out, stderr=StringIO(), **options)
    return out.getvalue()


def test_a_run_stopped_mid_document_is_resumed_by_running_it_again(tenant, folder):
    _ingest(folder / "contract.txt", tenant, "Matter")
    # A crash while the document was being indexed: its row says processing, its passages are gone.
    stopped = Document.objects.for_tenant(tenant).get(original_filename="contract.txt")
    stopped.chunks.all().delete()
    Document.objects.filter(pk=stopped.pk).update(status=DocumentStatus.PROCESSING, chunk_count=0)

    assert "1 ok, 0 duplicate, 0 failed; " in _ingest(folder / "contract.txt", tenant, "Matter")
    stopped.refresh_from_db()
    assert stopped.status == DocumentStatus.READY and stopped.chunks.count() == stopped.chunk_count > 0


@pytest.mark.django_db(transaction=True)  # the workers are other processes: they read what is committed
def test_worker_processes_ingest_every_file_and_count_a_repeat_once(tenant, folder):
    out = StringIO()
    call_command(
        "ingest", str(folder), tenant=tenant.slug, case="Bulk matter", jobs=2, stdout=out, stderr=StringIO()
    )
    summary = out.getvalue()
    # contract.txt and its same-bytes copy: one ingested, the other a duplicate without a second row.
    assert "2 ok, 1 duplicate, 1 failed" in summary
    assert "scan.pdf" in summary and BLANK_SCAN_REASON in summary
    case = Case.objects.get(tenant=tenant, name="Bulk matter")
    documents = Document.objects.for_tenant(tenant).filter(case=case)
    assert documents.count() == 3
    ready = documents.filter(status=DocumentStatus.READY)
    assert ready.count() == 2
    assert all(document.chunks.count() == document.chunk_count > 0 for document in ready)


def test_jobs_must_be_positive(tenant, folder):
    with pytest.raises(CommandError, match="--jobs"):
        call_command("ingest", str(folder), tenant=tenant.slug, case="x", jobs=0)
