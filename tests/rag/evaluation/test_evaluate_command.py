"""manage.py evaluate legalbench: a tiny corpus ingested for real into an evaluation tenant, queries
retrieved through the query path, LegalBench-RAG figures reported; tenant reuse; bad inputs."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from rag.evaluation import legalbench, runner
from rag.ingest import embedding
from rag.models import Chunk, Document, DocumentStatus
from tenants.models import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SERVICES = "cuad/AcmeCorp_Globex_ServicesAgreement.txt"
LEASE = "cuad/Initech_Umbrella_Lease.txt"
LICENSE = "cuad/Hooli_PiedPiper_License.txt"

ACME_LAW = "This Agreement shall be governed by the laws of the State of Delaware."
LEASE_RENT = "Tenant shall pay Landlord a monthly base rent of Twelve Thousand Dollars ($12,000.00)"
LICENSE_TERM = "This License shall terminate automatically on December 31, 2027"

CONTRACTS = {
    SERVICES: f"""MASTER SERVICES AGREEMENT

This Master Services Agreement (the "Agreement") is entered into as of March 1, 2021 between Acme Corp,
a Delaware corporation ("Acme"), and Globex Inc, an Oregon corporation ("Globex").

1. Services. Globex shall provide the consulting, integration and support services described in each
statement of work signed by both parties. Each statement of work forms part of this Agreement. Globex
shall perform the services in a professional manner consistent with industry standards and shall assign
qualified personnel to every engagement.

2. Fees and Payment. Acme shall pay the fees set out in each statement of work within thirty (30) days
of receiving a correct invoice. Late payments bear interest at one percent (1%) per month. Globex may
suspend the services after giving ten (10) days' written notice of any undisputed amount left unpaid.

3. Confidentiality. Each party shall keep the other party's confidential information secret, use it only
to perform this Agreement and disclose it only to employees and advisers who need to know it and are
bound by duties of confidentiality at least as strict as these. These duties survive for five (5) years.

4. Intellectual Property. Deliverables created specifically for Acme under a statement of work become
the property of Acme upon full payment. Globex keeps its pre-existing tools, methods and know-how and
grants Acme a non-exclusive licence to use them as part of the deliverables.

5. Governing Law. {ACME_LAW} The courts located in Wilmington, Delaware have exclusive jurisdiction
over any dispute arising out of or relating to this Agreement, and each party submits to them.

6. Warranties. Globex warrants that the services will conform to the statement of work for ninety (90)
days after delivery. Acme's sole remedy for a breach of this warranty is the re-performance of the
non-conforming services or, failing that, a refund of the fees paid for them.

7. Limitation of Liability. Neither party is liable for indirect, incidental or consequential damages.
Each party's total liability under this Agreement is limited to the fees paid in the twelve (12) months
before the claim arose, except for breaches of confidentiality.

8. Term and Termination. This Agreement runs for three (3) years from its effective date. Either party
may terminate it for material breach not cured within thirty (30) days of written notice.

9. Notices. Notices must be in writing and are effective when delivered by hand or by courier to the
addresses given above, or to any other address a party designates by notice.
""",
    LEASE: f"""COMMERCIAL LEASE AGREEMENT

This Commercial Lease Agreement (the "Lease") is made on June 15, 2019 between Umbrella Holdings, a
New York limited partnership ("Landlord"), and Initech LLC, a Texas limited liability company
("Tenant"), for the premises at 4120 Freidrich Lane, Austin, Texas (the "Premises").

1. Term. The term of this Lease is five (5) years, beginning on July 1, 2019 and ending on June 30, 2024,
unless ended earlier under this Lease. Tenant may renew for one further term of five (5) years by giving
written notice at least six (6) months before the term ends.

2. Rent. {LEASE_RENT}, payable in advance on the first day of each calendar month. Base rent increases
by three percent (3%) on each anniversary of the commencement date. Rent not paid within five (5) days
of its due date bears a late charge of five percent (5%) of the overdue amount.

3. Security Deposit. On signing, Tenant shall deposit Twenty-Four Thousand Dollars ($24,000.00) with
Landlord as security for its obligations. Landlord shall return the deposit, less any amounts properly
applied, within thirty (30) days after the Lease ends.

4. Use. Tenant shall use the Premises only for general office purposes and software development, and
shall comply with all laws, building rules and insurance requirements applicable to that use.

5. Maintenance and Repairs. Landlord shall maintain the roof, structure and building systems. Tenant
shall keep the interior of the Premises in good repair and shall not alter the Premises without the
prior written consent of Landlord, which Landlord shall not unreasonably withhold.

6. Insurance. Tenant shall carry commercial general liability insurance of at least Two Million Dollars
($2,000,000) per occurrence naming Landlord as an additional insured.

7. Assignment. Tenant shall not assign this Lease or sublet any part of the Premises without Landlord's
prior written consent.

8. Governing Law. This Lease shall be governed by the laws of the State of New York, and any action
under it shall be brought in the state courts of New York County.

9. Default. If Tenant fails to pay rent within ten (10) days after written notice, Landlord may end this
Lease and recover possession of the Premises together with all rent due.
""",
    LICENSE: f"""SOFTWARE LICENSE AGREEMENT

This Software License Agreement (the "License") is made as of January 1, 2023 by and between Hooli, a
California corporation ("Licensor"), and Pied Piper, a California corporation ("Licensee").

1. Grant. Licensor grants Licensee a non-exclusive, non-transferable license to use the Nucleus
compression library (the "Software") in object code form solely within Licensee's own products.

2. Restrictions. Licensee shall not reverse engineer, decompile or disassemble the Software, nor
sublicense, rent or lease it to any third party, nor remove any proprietary notice from it.

3. Royalties. Licensee shall pay Licensor a royalty of two percent (2%) of the net revenue of each product
that includes the Software, reported and paid within forty-five (45) days after each calendar quarter.

4. Audit. Licensor may, once a year and on thirty (30) days' notice, have an independent accountant
inspect Licensee's records to verify the royalties paid.

5. Support. Licensor shall provide error corrections and updates to the Software during the term of this
License at no additional charge.

6. Term. {LICENSE_TERM}, unless the parties extend it in a signed writing. Either party may terminate
this License earlier if the other party materially breaches it and fails to cure the breach within
sixty (60) days after written notice.

7. Effect of Termination. On termination Licensee shall stop distributing products that include the
Software, but end users may keep using copies already distributed.

8. Warranty Disclaimer. The Software is provided "as is" without warranty of any kind, and Licensor
disclaims all implied warranties of merchantability and fitness for a particular purpose.

9. Governing Law. This License is governed by the laws of the State of California, without regard to its
conflict of laws rules.

10. Notices. All notices under this License shall be in writing and sent by courier or registered mail
to the addresses of the parties given above, and are effective on receipt.

11. Entire Agreement. This License is the entire agreement of the parties about the Software and
replaces all earlier proposals and understandings. It may be amended only in a writing signed by both
parties.
""",
}

QUERIES = {
    "acme-law": (
        "Consider the Master Services Agreement between Acme Corp and Globex Inc; "
        "Which state's law governs this agreement?",
        SERVICES,
        ACME_LAW,
    ),
    "lease-rent": (
        "Consider the Commercial Lease Agreement between Initech LLC and Umbrella Holdings; "
        "What is the monthly base rent?",
        LEASE,
        LEASE_RENT,
    ),
    "license-term": (
        "Consider the Software License Agreement between Hooli and Pied Piper; "
        "When does the license terminate?",
        LICENSE,
        LICENSE_TERM,
    ),
}


@pytest.fixture
def corpus(tmp_path) -> Path:
    root = tmp_path / "corpus"
    for name, text in CONTRACTS.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def write_queries(path: Path, corpus: Path, ids) -> Path:
    """A LegalBench-RAG query file whose gold spans are found in the corpus files."""
    tests = []
    for query_id in ids:
        query, file_path, answer = QUERIES[query_id]
        text = (corpus / file_path).read_text(encoding="utf-8")
        start = text.find(answer)
        assert start > 0 and text.find(answer, start + 1) == -1  # found once, in the middle
        span = [start, start + len(answer)]
        tests.append(
            {
                "query": query,
                "snippets": [{"file_path": file_path, "span": span, "answer": answer}],
                "tags": ["cuad"],
                "query_id": query_id,
                "cuad_category": "",
            }
        )
    path.write_text(json.dumps({"tests": tests}), encoding="utf-8")
    return path


@pytest.fixture
def queries(tmp_path, corpus) -> Path:
    return write_queries(tmp_path / "queries.json", corpus, QUERIES)


def evaluate(corpus: Path, queries: Path, out: Path, *, k: str = "1,2,4", **options) -> dict:
    stdout = StringIO()
    call_command(
        "evaluate",
        "legalbench",
        corpus=str(corpus),
        queries=str(queries),
        k=k,
        json_out=str(out),
        stdout=stdout,
        stderr=StringIO(),
        **options,
    )
    report = json.loads(out.read_text(encoding="utf-8"))
    report["stdout"] = stdout.getvalue()
    return report


def tenant_documents(slug: str):
    return Document.objects.for_tenant(Tenant.objects.get(slug=slug))


def test_report(settings, tmp_path, corpus, queries):
    assert all(2000 <= len(text) <= 4000 for text in CONTRACTS.values())
    report = evaluate(corpus, queries, tmp_path / "report.json")

    assert report["queries"] == 3
    assert list(report["k"]) == ["1", "2", "4"]
    for values in report["k"].values():
        assert set(values) == {"precision", "recall"}
        assert all(0 <= value <= 100 for value in values.values())
    # Recall over the best k passages can only grow with k; every gold sentence is in the top 4.
    recalls = [report["k"][k]["recall"] for k in ("1", "2", "4")]
    assert recalls == sorted(recalls)
    assert recalls[-1] == pytest.approx(100.0)
    # A gold sentence is a small part of a ~1000-character passage.
    assert 0 < report["k"]["1"]["precision"] < 50

    reported = report["settings"]
    assert reported["chunk_size"] == settings.RAG_CHUNK_SIZE
    assert reported["chunk_overlap"] == settings.RAG_CHUNK_OVERLAP
    assert reported["embedding_model"] == embedding.model_id()
    assert reported["mode"] == "hybrid"
    assert reported["min_similarity"] == 0.0
    assert reported["documents"] == 3
    assert reported["routing_accuracy"] == 100.0  # each query names its contract
    assert reported["tenant"].startswith("eval-corpus-")

    documents = tenant_documents(reported["tenant"])
    assert documents.count() == 3
    assert set(documents.values_list("status", flat=True)) == {DocumentStatus.READY}
    assert all(d.chunks.count() >= 3 for d in documents)  # several passages per contract
    assert not Document.objects.exclude(tenant__slug=reported["tenant"]).exists()

    assert "LegalBench-RAG, 3 queries, 3 documents, mode hybrid" in report["stdout"]
    assert f"{report['k']['4']['recall']:.2f}" in report["stdout"]
    assert "routing: first routed document is the gold one for 100.0%" in report["stdout"]


def test_governing_law_question_is_routed_to_the_named_agreement(tmp_path, corpus):
    # All three contracts have a governing-law clause; only the Acme/Globex one answers the question.
    queries = write_queries(tmp_path / "acme.json", corpus, ["acme-law"])
    report = evaluate(corpus, queries, tmp_path / "report.json")
    assert report["queries"] == 1
    assert report["settings"]["routing_accuracy"] == 100.0
    assert report["k"]["4"]["recall"] == pytest.approx(100.0)
    assert report["k"]["4"]["precision"] > 0

    # The same through the runner: the first routed document and a top-4 span are the gold file's.
    indexed = runner.ingest_corpus(corpus)
    assert sorted(indexed.paths.values()) == sorted(CONTRACTS)
    (run,) = runner.run_queries(
        indexed, legalbench.load_queries(queries), k=4, mode="hybrid", similarity_threshold=0.0
    )
    assert run.routed[0] == SERVICES
    gold = run.query.gold[0]
    assert any(s.file_path == SERVICES and s.start <= gold.start and gold.end <= s.end for s in run.retrieved)
    # Every span is exact offsets into its original file: the file's text there is a stored chunk
    # (taken back to the start of the sentence it opens inside, when its answer is that sentence).
    chunks = set(Chunk.objects.for_tenant(indexed.tenant).values_list("text", flat=True))
    assert len(run.retrieved) == 4
    for span in run.retrieved:
        text = (corpus / span.file_path).read_text(encoding="utf-8")
        assert span.end <= len(text)
        assert any(text[span.start : span.end].endswith(chunk) for chunk in chunks)


def test_second_run_reuses_the_evaluation_tenant(tmp_path, corpus, queries):
    first = evaluate(corpus, queries, tmp_path / "first.json")
    slug = first["settings"]["tenant"]
    tenants = Tenant.objects.count()
    documents = sorted(tenant_documents(slug).values_list("pk", flat=True))
    assert len(documents) == 3

    second = evaluate(corpus, queries, tmp_path / "second.json")
    assert second["settings"]["tenant"] == slug
    assert second["settings"]["documents"] == 3
    assert Tenant.objects.count() == tenants
    assert sorted(tenant_documents(slug).values_list("pk", flat=True)) == documents
    assert second["k"] == first["k"]  # same index, same answers


def test_other_index_settings_use_another_tenant(settings, tmp_path, corpus, queries):
    first = evaluate(corpus, queries, tmp_path / "first.json", k="4")
    settings.RAG_CHUNK_SIZE = 500
    second = evaluate(corpus, queries, tmp_path / "second.json", k="4")

    assert second["settings"]["chunk_size"] == 500
    assert second["settings"]["tenant"] != first["settings"]["tenant"]
    assert second["settings"]["tenant"].startswith("eval-corpus-")
    assert second["settings"]["documents"] == 3
    small = tenant_documents(second["settings"]["tenant"])
    large = tenant_documents(first["settings"]["tenant"])
    assert small.count() == large.count() == 3
    # Smaller chunks: more of them per contract.
    small_chunks = sum(d.chunks.count() for d in small)
    large_chunks = sum(d.chunks.count() for d in large)
    assert small_chunks > large_chunks


def test_mode_and_files_not_indexed(tmp_path, corpus):
    # Only .txt/.pdf/.docx files are read; a blank text file is reported and left out.
    (corpus / "cuad" / "README.md").write_text("not a contract", encoding="utf-8")
    (corpus / "cuad" / "blank.txt").write_text("   \n", encoding="utf-8")
    queries = write_queries(tmp_path / "q.json", corpus, ["lease-rent"])
    stderr = StringIO()
    call_command(
        "evaluate",
        "legalbench",
        corpus=str(corpus),
        queries=str(queries),
        k="2",
        mode="keyword",
        json_out=str(tmp_path / "report.json"),
        stdout=StringIO(),
        stderr=stderr,
    )
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["settings"]["mode"] == "keyword"
    assert report["settings"]["documents"] == 3
    assert "not indexed" in stderr.getvalue() and "blank.txt" in stderr.getvalue()
    assert "README.md" not in stderr.getvalue()
    assert report["k"]["2"]["recall"] == pytest.approx(100.0)


def test_corpus_directory_name_that_is_not_a_slug(tmp_path, corpus):
    # "CUAD v1.0" has a space and a dot, which a tenant slug cannot hold.
    renamed = corpus.rename(tmp_path / "CUAD v1.0")
    queries = write_queries(tmp_path / "q.json", renamed, ["license-term"])
    report = evaluate(renamed, queries, tmp_path / "report.json", k="4")
    assert report["settings"]["tenant"].startswith("eval-cuad-v10-")
    assert report["settings"]["documents"] == 3
    assert report["k"]["4"]["recall"] == pytest.approx(100.0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"corpus": "missing-dir"}, "No such corpus directory"),
        ({"queries": "missing.json"}, "No such query file"),
        ({"queries": "malformed.json"}, "Not a LegalBench-RAG query file"),
        ({"queries": "no-tests.json"}, "Not a LegalBench-RAG query file"),
        ({"queries": "no-gold.json"}, "Not a LegalBench-RAG query file"),
        ({"queries": "bad-span.json"}, "Not a LegalBench-RAG query file"),
        ({"k": "0"}, "between 1 and 100"),
        ({"k": "1,101"}, "between 1 and 100"),
        ({"k": ""}, "between 1 and 100"),
        ({"k": "a,b"}, "comma-separated positive integers"),
        ({"k": "1.5"}, "comma-separated positive integers"),
    ],
)
def test_bad_inputs(tmp_path, corpus, queries, change, message):
    (tmp_path / "malformed.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "no-tests.json").write_text('{"queries": []}', encoding="utf-8")
    (tmp_path / "no-gold.json").write_text('{"tests": [{"query": "q", "snippets": []}]}', encoding="utf-8")
    (tmp_path / "bad-span.json").write_text(
        '{"tests": [{"query": "q", "snippets": [{"file_path": "cuad/x.txt", "span": [5]}]}]}',
        encoding="utf-8",
    )
    options = {"corpus": str(corpus), "queries": str(queries), "k": "1,2,4"}
    options.update({key: str(tmp_path / value) if key != "k" else value for key, value in change.items()})
    with pytest.raises(CommandError, match=message):
        call_command("evaluate", "legalbench", **options, stdout=StringIO(), stderr=StringIO())
    assert not Tenant.objects.filter(slug__startswith="eval-").exists()  # nothing was indexed


def test_unknown_benchmark_or_mode_is_refused(corpus, queries):
    with pytest.raises(CommandError):
        call_command("evaluate", "trec", corpus=str(corpus), queries=str(queries))
    with pytest.raises(CommandError):
        call_command(
            "evaluate", "legalbench", "--corpus", str(corpus), "--queries", str(queries), "--mode", "x"
        )


def test_agentic_mode_filters_by_the_named_agreement_and_retrieves_its_clause(tmp_path, corpus):
    queries = write_queries(tmp_path / "acme.json", corpus, ["acme-law"])
    indexed = runner.ingest_corpus(corpus)
    (run,) = runner.run_queries(
        indexed, legalbench.load_queries(queries), k=4, mode="agentic", similarity_threshold=0.0
    )
    assert run.routed == [SERVICES]  # the named agreement became the doc_id filter
    gold = run.query.gold[0]
    assert run.retrieved and all(span.file_path == SERVICES for span in run.retrieved)
    assert any(s.start <= gold.start and gold.end <= s.end for s in run.retrieved)
    report = evaluate(corpus, queries, tmp_path / "report.json", mode="agentic")
    assert report["settings"]["mode"] == "agentic" and report["k"]["4"]["recall"] == pytest.approx(100.0)


@pytest.fixture
def fresh_database(settings):
    """The name of a database that does not exist yet on the embedded server (a fresh clone's);
    dropped after the test."""
    import uuid

    import psycopg
    from psycopg import sql

    if settings.DATABASE_URL:
        pytest.skip("needs the embedded server, which creates a missing database on first use")
    name = f"lexrag_fresh_{uuid.uuid4().hex[:12]}"
    yield name
    host = settings.DATABASES["default"]["HOST"]
    with psycopg.connect(host=host, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def test_a_fresh_clones_database_is_migrated_before_evaluating(tmp_path, corpus, fresh_database):
    import os
    import subprocess
    import sys

    from tests.conftest import PROJECT_ROOT

    queries = write_queries(tmp_path / "queries.json", corpus, ["acme-law"])
    out = tmp_path / "report.json"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ragsite.settings.test",
        "EMBEDDED_PG_DATABASE": fresh_database,
    }
    command = [sys.executable, "manage.py", "evaluate", "legalbench", "--corpus", str(corpus)]
    command += ["--queries", str(queries), "--k", "1", "--json", str(out)]
    result = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "migrations" in result.stdout  # it says what it did first
    assert json.loads(out.read_text(encoding="utf-8"))["queries"] == 1
