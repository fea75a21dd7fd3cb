"""derive_title(): a contract's heading and parties, on the openings of real CUAD contracts
(excerpts, shortened where marked "..."), and its fallbacks."""

from __future__ import annotations

import pytest

from rag.ingest.titles import derive_title, filename_title, title_parts

FALLBACK = "scan_0042"

OPENINGS = {
    # A capitals heading, a bare "This Agreement", the second party without a defined term.
    "heading, parties by defined term and a final 'and'": (
        "EXHIBIT 10.8\n\nDISTRIBUTOR AGREEMENT         "
        "Tripath Technology, Inc. 3900 Freedom Circle Suite # 200 "
        'Santa Clara, CA 95054\n\nThis Agreement is effective 7/1/98 ("Effective Date") between Tripath '
        'Technology, Inc. ("Tripath"), and\n\nUniquest '
        "Corporation 780 Montague Expressway Suite 406 Santa Jose, "
        "CA 95131\n\nTripath and Distributor intend to establish Distributor as a non-exclusive Distributor",
        "Distributor Agreement — Tripath / Uniquest",
    ),
    "all-capitals party names take the document's own spelling": (
        "STRATEGIC ALLIANCE AGREEMENT    This STRATEGIC "
        'ALLIANCE AGREEMENT (the "Agreement") is entered into '
        'as of March 18, 2010 (the "Effective Date"), '
        'between AURA  SYSTEMS INC., a Delaware Corporation ("Aura") '
        'and ZANOTTI EAST INC., a Massachusetts Corporation ("Zanotti").    WHEREAS, Aura has invented ...',
        "Strategic Alliance Agreement — Aura / Zanotti",
    ),
    "a filing notice in capitals before the heading": (
        "1\n\n      EXHIBIT 10.26\n\n   CONFIDENTIAL MATERIALS OMITTED AND FILED SEPARATELY      WITH THE "
        "SECURITIES AND EXCHANGE COMMISSION.        ASTERISKS DENOTE OMISSIONS.\n\n       SPONSORSHIP "
        'AGREEMENT\n\nThis agreement ("Agreement") is entered into as of the 23rd day of September 1998 '
        '("Effective Date"), by and between Excite, Inc., a Delaware corporation, located at 555 Broadway, '
        'Redwood City, California 94063 ("Excite"), and Vitamin Shoppe Industries Inc., a New York '
        'corporation, located at 4700 Westside Avenue, North Bergen, New Jersey 07047 ("Sponsor").',
        "Sponsorship Agreement — Excite / Vitamin Shoppe Industries",
    ),
    "a company name before the document type": (
        "Exhibit 10.6 ATTACHMENT A ERCHONIA CORPORATION EXCLUSIVE DISTRIBUTOR AGREEMENT\n\nThis agreement "
        '("Agreement") is made by and between Erchonia '
        'Corporation. ("Erchonia") whose address is 650 Atlantis '
        'Rd., Melbourne, Florida, USA, 32904 and InnerScope Hearing Technologies Inc, ("Distributor") whose '
        'address is 2151 Professional Drive ... hereafter referred to collectively as the ("Parties").',
        "Exclusive Distributor Agreement — Erchonia / InnerScope Hearing Technologies",
    ),
    "a numbered amendment; the long name gives way to its defined term": (
        "AMENDMENT NO. 3\n\nDated as of February 19, 2007\n\nReference is hereby made to that certain fully "
        "executed Wireless Content License Agreement Number 12965 dated as of December 16, 2004 (the "
        '"Agreement"), between Fox Mobile Entertainment, '
        'Inc. ("Fox"), as Administrator for Twentieth Century '
        "Fox Film Corporation, and Glu Mobile Inc. "
        '("Licensee").\n\nThe parties agree to modify the Agreement',
        "Amendment No. 3 — Fox / Glu Mobile",
    ),
    "a title-case heading, initials in a name, no defined terms": (
        "QuickLinks -- Click here to rapidly navigate "
        "through this document EXHIBIT 10.1 Sponsorship Agreement "
        "THIS AGREEMENT made this 5th day of December, 2007, between R. C. Boyd Enterprises, LLC, a Texas "
        "limited liability company, whose principal place of business is located at 2003 Navasota Cove, "
        'Westlake, Texas, referred to in this Agreement as "Company" or "Boyd", and Cano Petroleum, Inc., a '
        'Delaware corporation ..., referred to in this agreement as "Sponsor". WHEREAS, Company produces ...',
        "Sponsorship Agreement — R. C. Boyd Enterprises / Cano Petroleum",
    ),
    "'Party A:' labels": (
        "Exhibit 10.10   Road Transportation Agreement   Party A (Shipper): ZTO Express Co., Ltd. Address: "
        "Building 1, No. 1685, Huazhi Road, Shanghai   Party B (Carrier): Tonglu Tongze Logistics Ltd. "
        "Address: 12 Floor, HSBC Tower, Yinchun South Road   Due to the need for logistics business, Party A "
        'and Party B enter into this Road Transportation Agreement (this "Agreement")',
        "Road Transportation Agreement — ZTO Express / Tonglu Tongze Logistics",
    ),
    "parties in the heading, before a table of contents": (
        "Exhibit 10.17 INTELLECTUAL PROPERTY AGREEMENT between THE BABCOCK & WILCOX COMPANY and BABCOCK & "
        "WILCOX ENTERPRISES, INC. dated as of June 26, 2015 TABLE OF CONTENTS ARTICLE I DEFINITIONS 1 "
        "Section 1.1 Definitions 1 Section 1.2 Interpretation 4",
        "Intellectual Property Agreement — Babcock & Wilcox Company / Babcock & Wilcox Enterprises",
    ),
    "legal forms S.A., GmbH and Ltd. dropped": (
        "SUPPLY AGREEMENT This Supply Agreement (the "
        '"Agreement") is made by and between Acme Widgets S.A., '
        "a company organized under the laws of Spain "
        '("Seller"), Globex GmbH, a German company ("Buyer"), and '
        'Initech Holdings Ltd., an English company ("Agent"). WHEREAS ...',
        "Supply Agreement — Acme Widgets / Globex / Initech Holdings",
    ),
    "no party named: the heading alone": (
        "Exhibit 99.1 JOINT FILING AGREEMENT Pursuant and subject to Rule 13d-1(k)(1) promulgated under the "
        "Securities Exchange Act of 1934, as amended, the "
        "undersigned hereby agree to the joint filing of the "
        "Statement on Schedule 13D to which this Joint Filing Agreement is attached",
        "Joint Filing Agreement",
    ),
    "no heading: the fallback": (
        "EXHIBIT 'B' This Exhibit B is entered into as of the 26th day of March 2020 by and between Kubient, "
        'Inc. ("Kubient"), and The Associated Press ("Customer").',
        FALLBACK,
    ),
    "a clause heading is not the document's": (
        "ENTIRE AGREEMENT. This Agreement constitutes the entire agreement between the parties.",
        FALLBACK,
    ),
}


@pytest.mark.parametrize(("text", "expected"), OPENINGS.values(), ids=OPENINGS.keys())
def test_derive_title_on_real_openings(text, expected):
    assert derive_title(text, FALLBACK) == expected


def test_more_than_three_parties_end_with_et_al():
    text = (
        "COOPERATION AGREEMENT This Cooperation Agreement "
        'is made by and among Alpha Capital LLC ("Alpha"), '
        'Beta Partners LP ("Beta"), Gamma Fund Ltd. ("Gamma") and Delta Holdings, Inc. ("Delta").'
    )
    assert title_parts(text).parties == ("Alpha", "Beta", "et al.")


def test_a_role_or_an_ordinary_word_is_not_a_party():
    text = (
        'FRANCHISE AGREEMENT If you sign this Agreement, you become a franchisee (the "Franchisee"). '
        'Notwithstanding the above, the Company (the "Company") may ...'
    )
    assert title_parts(text) == title_parts("FRANCHISE AGREEMENT")
    assert derive_title(text, FALLBACK) == "Franchise Agreement"


def test_only_the_opening_is_read():
    late = "x " * 5000 + "SPONSORSHIP AGREEMENT between Acme, Inc. and Globex, Inc."
    assert derive_title(late, FALLBACK) == FALLBACK
    assert derive_title("", FALLBACK) == FALLBACK


def test_the_title_fits_the_model_field():
    long_name = " ".join(["Verylongname"] * 6)
    text = f'LICENSE AGREEMENT between {long_name} Inc. ("A") and {long_name} Ltd. ("B")'
    assert len(derive_title(text * 3, FALLBACK)) <= 300


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        ("msa v3.pdf", "msa v3"),
        ("contract.final.docx", "contract.final"),
        ("README", "README"),
        (".pdf", ".pdf"),
    ],
)
def test_filename_title(filename, expected):
    assert filename_title(filename) == expected
