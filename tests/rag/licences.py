"""Two look-alike licence agreements for the ambiguity tests: the same shape, other parties,
another governing law (New York, California). Their recitals and grant clauses share many words
with a governing-law question ("this License Agreement", "in accordance with", "the laws of the
State of ..."); each one's own governing-law clause comes late, several passages in."""

from __future__ import annotations

ORION_TITLE = "Orion Vega Patent License Agreement"
ORION_LAW = (
    "This License Agreement shall be governed by and construed in accordance with the laws of the "
    "State of New York, without regard to its conflict of laws principles."
)
HELIX_TITLE = "Helix Tarn Software License Agreement"
HELIX_LAW = (
    "This License Agreement shall be governed by and construed in accordance with the laws of the "
    "State of California, without regard to its conflict of laws principles."
)
QUESTION = "What law governs the license agreement?"


def licence(*, licensor: str, licensee: str, state: str, product: str, law: str, year: int) -> str:
    """A licence agreement between `licensor` and `licensee`, both organised under the laws of
    `state`, for `product`, whose governing-law clause (`law`) is its fifteenth section."""
    return (
        "LICENSE AGREEMENT\n\n"
        f'This License Agreement (the "Agreement") is entered into as of March 1, {year} by and '
        f"between {licensor}, a corporation organized and existing under the laws of the State of "
        f'{state} ("Licensor"), and {licensee}, a corporation organized and existing under the laws '
        f'of the State of {state} ("Licensee").\n\n'
        f"WHEREAS, Licensor owns the {product} and the rights to license it under the laws of the "
        "State and in accordance with this License Agreement;\n\n"
        f"WHEREAS, Licensee wishes to obtain a license to the {product} in accordance with the terms "
        "and conditions of this License Agreement and the laws that apply to it;\n\n"
        "NOW, THEREFORE, in consideration of the mutual covenants of this License Agreement, and "
        "intending to be legally bound under the laws of the State, the parties agree that this "
        "License Agreement shall govern the license as follows:\n\n"
        f"1. Grant of License. Licensor hereby grants to Licensee a non-exclusive license to use "
        f"the {product} in accordance with this License Agreement, and this license shall be "
        "construed under this License Agreement and the laws of the State.\n\n"
        "2. Restrictions. Licensee shall not sublicense, sell, lease or otherwise transfer the "
        f"{product} to any third party, nor reverse engineer, decompile or disassemble it.\n\n"
        "3. Royalties. Licensee shall pay Licensor a royalty of five percent (5%) of the net sales "
        "of every product that embodies the licensed technology, payable within thirty (30) days "
        "after the end of each calendar quarter.\n\n"
        "4. Reports and Records. Licensee shall deliver a written report of its net sales with each "
        "royalty payment and shall keep complete and accurate books and records of those sales for "
        "three (3) years after the payment they support.\n\n"
        "5. Audit. Licensor may, once in each calendar year and on fifteen (15) days written notice, "
        "have an independent accountant inspect those books and records during normal business "
        "hours.\n\n"
        "6. Confidentiality. Each party shall hold the other party's confidential information in "
        "confidence and shall not disclose it to any third party without the prior written consent "
        "of the disclosing party.\n\n"
        "7. Warranties. Licensor warrants that it owns the licensed technology and that it has the "
        "right to grant the license set out above. Except as stated in this section, the licensed "
        "technology is provided as is.\n\n"
        "8. Indemnification. Licensee shall indemnify and hold harmless Licensor from any claim, "
        "loss or damage arising out of Licensee's manufacture, use or sale of products.\n\n"
        "9. Term. This Agreement begins on the Effective Date and continues for five (5) years "
        "unless terminated earlier under Section 10.\n\n"
        "10. Termination. Either party may terminate this Agreement upon sixty (60) days written "
        "notice if the other party materially breaches it and fails to cure the breach within that "
        "period.\n\n"
        "11. Compliance with Laws. Licensee shall use the licensed technology in accordance with "
        "all laws of the State that apply to this License Agreement, and shall obtain every permit "
        "those laws require for its use under this License Agreement.\n\n"
        "12. Export. Licensee shall not export the licensed technology except in accordance with "
        "the export laws of the State and of the United States that govern this License Agreement "
        "and the license it grants.\n\n"
        "13. Interpretation. The headings of this License Agreement are for convenience only, and "
        "this License Agreement shall be construed as if drafted jointly by the parties, in "
        "accordance with its plain meaning and the laws of the State.\n\n"
        "14. Notices. All notices under this Agreement shall be in writing and delivered by hand or "
        "by certified mail to the addresses of the parties set out above.\n\n"
        f"15. Governing Law. {law}\n\n"
        "16. Entire Agreement. This Agreement is the entire agreement of the parties on its subject "
        "and replaces every earlier understanding, written or oral."
    )


ORION = licence(
    licensor="Orion Patents Inc.",
    licensee="Vega Devices Corp.",
    state="Delaware",
    product="Orion patent portfolio",
    law=ORION_LAW,
    year=2018,
)
HELIX = licence(
    licensor="Helix Software LLC",
    licensee="Tarn Analytics Inc.",
    state="Nevada",
    product="Helix analytics software",
    law=HELIX_LAW,
    year=2019,
)


def ingest_licences(case, ingest_text) -> dict:
    """Both licence agreements in `case`, indexed now: {"orion": Document, "helix": Document}."""
    return {
        "orion": ingest_text(case, ORION, filename="orion-vega-license.txt", title=ORION_TITLE),
        "helix": ingest_text(case, HELIX, filename="helix-tarn-license.txt", title=HELIX_TITLE),
    }
