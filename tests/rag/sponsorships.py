"""Two look-alike sponsorship contracts for the answer-window tests (retrieval and pipeline).

The Cano/Boyd contract's preamble names its parties and shares "the laws of the State of ..." with
a governing-law question; its governing-law and assignment clauses come later, in another chunk.
It has no insurance clause. The Apache/Lonestar contract has the same shape, other parties, another
governing law, and an insurance clause.
"""

from __future__ import annotations

CANO_TITLE = "Cano Boyd Sponsorship"
CANO_PREAMBLE = (
    'This Sponsorship Agreement (the "Agreement") is entered into as of May 1, 2008 by and between '
    "Cano Petroleum, Inc., a corporation organized under the laws of the State of Delaware "
    '("Cano"), and R. C. Boyd Enterprises, LLC, a limited liability company organized under the '
    'laws of the State of Texas ("Boyd").'
)
CANO_GOVERNING_LAW = (
    "This Agreement shall be governed by and construed in accordance with the laws of the State of "
    "Oklahoma, without regard to its conflict of laws principles."
)
CANO_ASSIGNMENT = (
    "Neither party may assign this Agreement or any of its rights under it without the prior "
    "written consent of the other party."
)
CANO_FEES = (
    "Cano shall pay Boyd a sponsorship fee of two hundred fifty thousand dollars ($250,000) per "
    "season, payable in four equal quarterly installments."
)
CANO_NOTICES = (
    "All notices under this Agreement shall be in writing and delivered by hand or by certified "
    "mail to the addresses of the parties set out above."
)
CANO = (
    "SPONSORSHIP AGREEMENT\n\n"
    f"{CANO_PREAMBLE}\n\n"
    "1. Sponsorship. Boyd shall display the Cano name and logo on its racing vehicles at each event "
    "of the racing season and shall make its drivers available for two promotional appearances a "
    "year.\n\n"
    f"2. Fees. {CANO_FEES}\n\n"
    "3. Term. This Agreement begins on the Effective Date and continues for two (2) racing seasons "
    "unless terminated earlier under Section 4.\n\n"
    "4. Termination. Either party may terminate this Agreement upon thirty (30) days written notice "
    "if the other party materially breaches it and fails to cure the breach within that period.\n\n"
    f"5. Assignment. {CANO_ASSIGNMENT}\n\n"
    f"6. Governing Law. {CANO_GOVERNING_LAW}\n\n"
    f"7. Notices. {CANO_NOTICES}"
)

APACHE_TITLE = "Apache Lonestar Sponsorship"
APACHE_INSURANCE = (
    "Lonestar shall carry commercial general liability insurance of at least five million dollars "
    "($5,000,000) per occurrence under this Agreement."
)
APACHE = (
    "SPONSORSHIP AGREEMENT\n\n"
    "This Sponsorship Agreement is entered into as of June 1, 2009 by and between Apache Drilling "
    'Corp., a corporation organized under the laws of the State of Kansas ("Apache"), and Lonestar '
    'Motorsports LLC ("Lonestar").\n\n'
    "1. Sponsorship. Lonestar shall display the Apache name on its racing vehicles at each event.\n\n"
    f"2. Insurance. {APACHE_INSURANCE}\n\n"
    "3. Governing Law. This Agreement shall be governed by the laws of the State of Kansas."
)


def ingest_sponsorships(case, ingest_text) -> dict:
    """Both contracts, fully indexed in `case`: {"cano": Document, "apache": Document}."""
    return {
        "cano": ingest_text(case, CANO, filename="cano-boyd-sponsorship.txt", title=CANO_TITLE),
        "apache": ingest_text(case, APACHE, filename="apache-lonestar-sponsorship.txt", title=APACHE_TITLE),
    }
