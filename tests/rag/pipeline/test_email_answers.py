"""Questions about an e-mail's body: the date it asks for, stated first, in sync and agentic mode."""

import pytest

from rag.pipeline.run import run_query
from tests.rag.ingest.email_messages import attach, eml, message

from .conftest import LEASE, MSA

BODY = (
    "Hi all,\n\nDarren Long sent over the second addendum to the endorsement agreement this morning. "
    "He would like our comments on the addendum by Friday, December 15, 2017, so that it can be signed "
    "before the holidays.\n\nPlease send me your mark-ups by Wednesday.\n\nThanks,\nMaria"
)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("agentic", [False, True])
def test_the_date_an_email_asks_for_is_answered_first(tenant, case, upload, ingest_text, agentic):
    ingest_text(case, MSA, filename="msa.txt", title="MSA")
    ingest_text(case, LEASE, filename="lease.txt", title="Lease")
    msg = message(subject="Fwd: Addendum II - comments requested", plain=BODY)
    attach(msg, "addendum.txt", b"ADDENDUM II. The term is extended to December 31, 2019.", "text/plain")
    email = upload(case, "mail.eml", content=eml(msg), doc_type="contract").document
    result = run_query(
        tenant=tenant, question="By when does Darren want our comments on the addendum?", agentic=agentic
    ).result
    assert result["answer"].startswith("15 December 2017 [1].")
    assert result["citations"][0]["document_id"] == email.pk
