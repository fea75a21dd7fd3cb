"""The built-in review columns: the clause types of the CUAD taxonomy (The Atticus Project), and
how a question names one.

A column has a `question` in plain words (what a review table asks of each document, and what the
cross-encoder reads when it looks for the clause: CUAD's own description of the category), the
`names` a person uses for it in a question, and the `evidence`: words a clause of the kind cannot
be written without (a window without any of them is never the clause). Presence columns are
answered Yes/No with the clause quoted; value columns (dates, governing law, renewal) with the
value's clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PRESENCE, VALUE = "presence", "value"


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str
    question: str
    names: re.Pattern
    evidence: re.Pattern | None
    noun: str  # how an answer names the clause: "a non-compete clause"
    wording: str = ""  # how such a clause typically reads: what the cross-encoder compares windows to

    @property
    def statement(self) -> str:
        return self.wording or self.question

    def has_evidence(self, text: str) -> bool:
        return self.evidence is None or bool(self.evidence.search(text))


def _column(key, label, question, names, evidence, noun, kind=PRESENCE) -> Column:
    return Column(
        key,
        label,
        kind,
        question,
        re.compile(names, re.I),
        re.compile(evidence, re.I) if evidence else None,
        noun,
        WORDING.get(key, ""),
    )


# How each clause type typically reads (a statement, as in a contract): the cross-encoder scores a
# window against it better than against the question (held-out AUC 0.84 with, lower without).
WORDING = {
    "anti_assignment": "A party may not assign this agreement without the consent of the other party.",
    "audit_rights": "A party has the right to audit and inspect the books and records of the other party.",
    "cap_on_liability": "A party's liability is limited or capped; no liability for consequential damages.",
    "change_of_control": "What happens if a party undergoes a change of control, merger or acquisition?",
    "covenant_not_to_sue": (
        "A party shall not sue or challenge the validity of the other party's intellectual property."
    ),
    "exclusivity": "The party is appointed exclusive and shall deal exclusively with the other party.",
    "insurance": "A party is required to maintain insurance coverage.",
    "ip_ownership_assignment": (
        "Intellectual property created under the agreement is owned by and assigned to a party."
    ),
    "license_grant": "A party grants the other party a license.",
    "liquidated_damages": "A party shall pay liquidated damages or a fixed termination fee.",
    "minimum_commitment": "A party must purchase a minimum quantity or pay a minimum amount.",
    "most_favored_nation": (
        "If more favorable prices or terms are offered to a third party, the same terms must be offered."
    ),
    "no_solicit_customers": "A party shall not solicit the other party's customers.",
    "no_solicit_employees": "A party shall not solicit or hire the other party's employees.",
    "non_compete": "A party shall not compete with the other party or engage in a competing business.",
    "non_disparagement": "A party shall not disparage the other party.",
    "revenue_profit_sharing": (
        "A party shall pay a share of revenue, profits or royalties to the other party."
    ),
    "rofr_rofo_rofn": "A party has a right of first refusal, first offer or first negotiation.",
    "source_code_escrow": "Source code shall be deposited in escrow.",
    "termination_for_convenience": (
        "A party may terminate this agreement for convenience, without cause, upon notice."
    ),
    "third_party_beneficiary": "A third party is a beneficiary of this agreement.",
    "warranty_duration": "The warranty lasts for a period of time after delivery.",
}

_IP = r"(?:intellectual property|\bip\b|inventions?|work product|deliverables|patents?|copyrights?)"

COLUMNS: tuple[Column, ...] = (
    _column(
        "non_compete", "Non-Compete",
        "Is there a restriction on the ability of a party to compete with the counterparty or operate "
        "in a certain geography or business or technology sector?",
        r"\bnon-?compet\w*|\bcompet\w*",
        r"\bcompet\w*|\bengage\w* in\b|\bsimilar (?:business|products?|services?)\b",
        "a non-compete clause",
    ),
    _column(
        "exclusivity", "Exclusivity",
        "Is there an exclusive dealing commitment with the counterparty, such as a commitment to procure "
        "all requirements from one party or a prohibition on selling or licensing to third parties?",
        r"\bexclusiv\w*|\bsole (?:source|supplier|distributor)\b",
        r"\bexclusiv\w*|\bsole\b|\bonly\b|\brequirements\b",
        "an exclusivity provision",
    ),
    _column(
        "no_solicit_customers", "No-Solicit of Customers",
        "Is a party restricted from contracting or soliciting customers or partners of the counterparty?",
        r"\bsolicit\w*[^?]*\b(?:customers?|clients?)\b|\b(?:customers?|clients?)\b[^?]*\bsolicit\w*",
        r"\bsolicit\w*|\bcustomers?\b|\bclients?\b",
        "a customer non-solicitation clause",
    ),
    _column(
        "competitive_restriction_exception", "Competitive Restriction Exception",
        "Are there exceptions or carve-outs to the non-compete, exclusivity or no-solicit restrictions?",
        r"\b(?:exception|carve-?out)s?\b[^?]*\b(?:non-?compet\w*|exclusiv\w*|solicit\w*)",
        r"\bexcept\w*|\bnotwithstanding\b|\bprovided,? however\b|\bshall not (?:apply|prevent|restrict)\b",
        "an exception to a competitive restriction",
    ),
    _column(
        "no_solicit_employees", "No-Solicit of Employees",
        "Is there a restriction on a party soliciting or hiring employees or contractors of the "
        "counterparty?",
        r"\b(?:solicit\w*|hir(?:e|ing)|recruit\w*|poach\w*)\b[^?]*\b(?:employees?|staff|personnel|workers?)\b"
        r"|\b(?:employees?|staff|personnel)\b[^?]*\b(?:solicit\w*|hir(?:e|ing)|recruit\w*|poach\w*)",
        r"\bsolicit\w*|\bhir(?:e|ing)\b|\brecruit\w*|\bemploy\w*",
        "an employee non-solicitation clause",
    ),
    _column(
        "non_disparagement", "Non-Disparagement",
        "Is there a requirement on a party not to disparage the counterparty?",
        r"\bdisparag\w*|\bbad-?mouth\w*|\bnegative statements?\b",
        r"\bdisparag\w*|\bnegative\w*|\bdetrimental\b|\breputation\w*|\bderogatory\b",
        "a non-disparagement clause",
    ),
    _column(
        "termination_for_convenience", "Termination for Convenience",
        "Can a party terminate this contract without cause, solely by giving notice and allowing a "
        "waiting period to expire?",
        r"\bterminat\w*[^?]*\b(?:for convenience|without cause|at will|for any reason|at any time)\b"
        r"|\bconvenience\b|\bwithout (?:cause|reason)\b|\bwalk away\b|\bget out of\b",
        r"\bterminat\w*|\bcancel\w*",
        "a right to terminate for convenience",
    ),
    _column(
        "rofr_rofo_rofn", "Right of First Refusal, Offer or Negotiation",
        "Is there a clause granting one party a right of first refusal, right of first offer or right of "
        "first negotiation to purchase, license, market or distribute?",
        r"\brofr\b|\brofo\b|\brofn\b|\bfirst (?:refusal|offer|negotiation)\b|\bright of first\b",
        r"\bfirst (?:refusal|offer|negotiat\w*)\b|\bright of first\b|\bfirst right\b|\bmatch\w*",
        "a right of first refusal, offer or negotiation",
    ),
    _column(
        "change_of_control", "Change of Control",
        "Does one party have the right to terminate, or is consent or notice required, if the other party "
        "undergoes a change of control, such as a merger, stock sale or sale of substantially all assets?",
        r"\bchange (?:of|in) control\b|\bmerg\w*|\bacqui(?:sition|red|res)\b|\btakeover\b|\bbought\b",
        r"\bcontrol\w*|\bmerge\w*|\bacqui\w*|\bconsolidat\w*|\bsubstantially all\b",
        "a change-of-control provision",
    ),
    _column(
        "anti_assignment", "Anti-Assignment",
        "Is consent or notice required of a party if the contract is assigned to a third party?",
        rf"\bassign\w*(?![^?]*{_IP})|\bdelegat\w*"
        r"|\btransfer (?:of )?(?:the|this|these) (?:agreements?|contracts?)",
        r"\bassign\w*|\btransfer\w*|\bdelegat\w*",
        "a restriction on assignment",
    ),
    _column(
        "revenue_profit_sharing", "Revenue/Profit Sharing",
        "Is one party required to share revenue or profit with the counterparty for any technology, goods "
        "or services?",
        r"\brevenue\b|\bprofits?\b|\broyalt\w*",
        r"\broyalt\w*|\brevenue\w*|\bprofits?\b|\bpercent\w*|%",
        "revenue or profit sharing",
    ),
    _column(
        "price_restriction", "Price Restriction",
        "Is there a restriction on the ability of a party to raise or reduce prices of technology, goods "
        "or services provided?",
        r"\bprice (?:restriction|increase|change|cap)s?\b|\braise (?:the )?prices?\b",
        r"\bpric\w*|\bfees?\b|\brates?\b",
        "a price restriction",
    ),
    _column(
        "minimum_commitment", "Minimum Commitment",
        "Is there a minimum order size or minimum amount or units per time period that one party must buy "
        "from the counterparty?",
        r"\bminimum\b|\bat least\b[^?]*\b(?:buy|purchase|order)",
        r"\bminimum\b|\bat least\b|\bnot less than\b",
        "a minimum commitment",
    ),
    _column(
        "volume_restriction", "Volume Restriction",
        "Is there a fee increase or consent requirement if one party's use of the product or services "
        "exceeds a certain threshold?",
        r"\bvolume\b|\busage (?:cap|limit)s?\b|\bmaximum (?:number|quantity)\b",
        r"\bexceed\w*|\bmaximum\b|\bvolume\b|\bthreshold\b|\bup to\b|\blimit\w*",
        "a volume restriction",
    ),
    _column(
        "ip_ownership_assignment", "IP Ownership Assignment",
        "Does intellectual property created by one party become the property of the counterparty?",
        rf"\b(?:own\w*|assign\w*|belong\w*|title)\b[^?]*{_IP}|{_IP}[^?]*\b(?:own\w*|assign\w*|belong\w*)",
        r"\bown\w*|\bassign\w*|\btitle\b|\bproperty\b",
        "an assignment of intellectual property",
    ),
    _column(
        "joint_ip_ownership", "Joint IP Ownership",
        "Is there any clause providing for joint or shared ownership of intellectual property between the "
        "parties?",
        rf"\bjoint\w*[^?]*{_IP}|\bco-?own\w*|\bshared ownership\b",
        r"\bjoint\w*|\bco-?own\w*|\bshared\b",
        "joint ownership of intellectual property",
    ),
    _column(
        "license_grant", "License Grant",
        "Does the contract contain a license granted by one party to its counterparty?",
        r"\blicen[cs]\w*",
        r"\blicen[cs]\w*",
        "a license grant",
    ),
    _column(
        "non_transferable_license", "Non-Transferable License",
        "Does the contract limit the ability of a party to transfer the license being granted to a third "
        "party?",
        r"\bnon-?transferable\b|\btransfer\w*[^?]*\blicen[cs]\w*",
        r"\bnon-?transferable\b|\btransfer\w*|\bsublicen\w*|\bassign\w*",
        "a non-transferable license",
    ),
    _column(
        "affiliate_license_licensor", "Affiliate IP License - Licensor",
        "Does the contract contain a license grant by affiliates of the licensor or that includes "
        "intellectual property of affiliates of the licensor?",
        r"\baffiliates?\b[^?]*\blicensor\b|\blicensor'?s? affiliates?\b",
        r"\baffiliat\w*",
        "a license of the licensor's affiliates' IP",
    ),
    _column(
        "affiliate_license_licensee", "Affiliate IP License - Licensee",
        "Does the contract contain a license grant to a licensee and the affiliates of such licensee?",
        r"\baffiliates?\b[^?]*\blicensee\b|\blicensee'?s? affiliates?\b",
        r"\baffiliat\w*",
        "a license extending to the licensee's affiliates",
    ),
    _column(
        "unlimited_license", "Unlimited/All-You-Can-Eat License",
        "Is there a clause granting one party an enterprise, all you can eat or unlimited usage license?",
        r"\bunlimited\b|\ball[- ]you[- ]can[- ]eat\b|\benterprise(?:-wide)? licen[cs]e\b",
        r"\bunlimited\b|\benterprise\b|\bany number\b",
        "an unlimited-usage license",
    ),
    _column(
        "irrevocable_perpetual_license", "Irrevocable or Perpetual License",
        "Does the contract contain a license grant that is irrevocable or perpetual?",
        r"\birrevocabl\w*|\bperpetual\b[^?]*\blicen[cs]\w*|\blicen[cs]\w*[^?]*\bperpetual\b",
        r"\birrevocabl\w*|\bperpetu\w*",
        "an irrevocable or perpetual license",
    ),
    _column(
        "source_code_escrow", "Source Code Escrow",
        "Is one party required to deposit its source code into escrow with a third party, which can be "
        "released to the counterparty upon certain events?",
        r"\bescrow\b|\bsource code\b",
        r"\bescrow\w*|\bsource code\b",
        "a source code escrow",
    ),
    _column(
        "post_termination_services", "Post-Termination Services",
        "Is a party subject to obligations after the termination or expiration of the contract, such as "
        "transition services, wind-down or last-buy commitments?",
        r"\bpost-?termination\b|\bafter (?:the )?(?:termination|expiration)\b|\btransition services?\b"
        r"|\bwind-?down\b",
        r"\btermin\w*|\bexpir\w*",
        "post-termination obligations",
    ),
    _column(
        "audit_rights", "Audit Rights",
        "Does a party have the right to audit the books, records or physical locations of the "
        "counterparty to ensure compliance with the contract?",
        r"\baudit\w*|\binspect\w*|\b(?:books|records)\b",
        r"\baudit\w*|\binspect\w*|\bexamin\w*|\bbooks\b|\brecords\b",
        "audit rights",
    ),
    _column(
        "uncapped_liability", "Uncapped Liability",
        "Is a party's liability uncapped upon the breach of its obligations, including for a particular "
        "type of breach such as IP infringement or breach of confidentiality?",
        r"\buncapped\b|\bunlimited liability\b|\bnot capped\b|\bno (?:cap|limit) on liability\b",
        r"\bliab\w*|\bdamages\b",
        "uncapped liability",
    ),
    _column(
        "cap_on_liability", "Cap on Liability",
        "Does the contract include a cap on liability upon the breach of a party's obligation, or a time "
        "limit for bringing claims?",
        r"\bcap\w*\b[^?]*\bliabilit\w*|\bliabilit\w*[^?]*\b(?:cap\w*|limit\w*)"
        r"|\blimit\w* (?:of|on) liabilit\w*"
        r"|\blimit (?:on|of) damages\b|\bdamages\b[^?]*\blimit\w*",
        r"\bliab\w*|\bdamages\b",
        "a cap on liability",
    ),
    _column(
        "liquidated_damages", "Liquidated Damages",
        "Does the contract award either party liquidated damages for breach or a fee upon termination "
        "(a termination fee)?",
        r"\bliquidated\b|\btermination fee\b|\bbreak(?:-?up)? fee\b|\bpenalt\w*|\bfixed amount\b",
        r"\bliquidated\b|\bpenalt\w*|\bfee\b|\bdamages\b",
        "liquidated damages",
    ),
    _column(
        "warranty_duration", "Warranty Duration",
        "What is the duration of any warranty against defects or errors in technology, products or "
        "services provided under the contract?",
        r"\bwarrant(?:y|ies)\b",
        r"\bwarrant\w*",
        "a warranty period",
    ),
    _column(
        "insurance", "Insurance",
        "Is there a requirement for insurance that must be maintained by one party for the benefit of the "
        "counterparty?",
        r"\binsur\w*",
        r"\binsur\w*",
        "an insurance requirement",
    ),
    _column(
        "covenant_not_to_sue", "Covenant Not to Sue",
        "Is a party restricted from contesting the validity of the counterparty's ownership of "
        "intellectual property or otherwise bringing a claim against the counterparty?",
        r"\bnot to sue\b|\bcovenant not\b|\bchalleng\w*|\bcontest\w*|\bbring(?:ing)? (?:a )?claims?\b",
        r"\bsue\b|\bchalleng\w*|\bcontest\w*|\bvalidity\b|\bclaims?\b",
        "a covenant not to sue",
    ),
    _column(
        "third_party_beneficiary", "Third Party Beneficiary",
        "Is there a non-contracting party who is a beneficiary to some or all of the clauses in the "
        "contract and can enforce its rights against a contracting party?",
        r"\bthird[- ]part(?:y|ies)\b[^?]*\bbeneficiar\w*|\bbeneficiar\w*",
        r"\bbeneficiar\w*|\bthird part\w*",
        "a third-party beneficiary",
    ),
    _column(
        "most_favored_nation", "Most Favored Nation",
        "If a third party gets better terms on the licensing or sale of the technology, goods or services, "
        "is the buyer under the contract entitled to those better terms?",
        r"\bmost[- ]favou?red\b|\bmfn\b|\bbest (?:price|terms)\b|\bbetter terms\b",
        r"\bfavou?r\w*|\bmost\b|\bbest\b|\blowest\b|\bno less\b|\bno higher\b|\bbetter\b",
        "a most-favored-nation clause",
    ),
    # Value columns: answered with the value's clause (rag.pipeline answers them document by document).
    _column(
        "parties", "Parties", "Who are the parties to this agreement?",
        r"\bwho are the parties\b|\bparties\b", None, "the parties", VALUE,
    ),
    _column(
        "agreement_date", "Agreement Date", "When was this agreement signed or dated?",
        r"\bagreement date\b|\bwhen was (?:the|this) (?:agreement|contract) (?:signed|dated|made)\b", None,
        "the agreement date", VALUE,
    ),
    _column(
        "effective_date", "Effective Date", "What is the effective date of this agreement?",
        r"\beffective date\b|\bwhen does (?:the|this) (?:agreement|contract) (?:take effect|start|begin)\b",
        None, "the effective date", VALUE,
    ),
    _column(
        "expiration_date", "Expiration Date", "When does the initial term of this agreement expire?",
        r"\bexpir\w*|\bend date\b|\binitial term\b", None, "the expiration date", VALUE,
    ),
    _column(
        "renewal_term", "Renewal Term", "How does this agreement renew, and for how long?",
        r"\brenew\w*", None, "a renewal term", VALUE,
    ),
    _column(
        "notice_to_terminate_renewal", "Notice Period to Terminate Renewal",
        "How much notice is needed to prevent this agreement from renewing?",
        r"\bnon-?renewal\b|\bnotice\b[^?]*\brenew\w*", None, "a notice period to prevent renewal", VALUE,
    ),
    # Not CUAD categories: what a summary of the key terms and a diligence table also carry.
    _column(
        "termination", "Termination", "How can this agreement be terminated, and on what notice?",
        r"\bterminat\w*", None, "a termination right", VALUE,
    ),
    _column(
        "payment_terms", "Payment Terms", "When and how must payments be made under this agreement?",
        r"\bpayment terms?\b|\bwhen (?:is|are) (?:payment|invoices?)\b", None, "payment terms", VALUE,
    ),
    _column(
        "governing_law", "Governing Law", "Which state or country's law governs this agreement?",
        r"\bgoverning law\b|\bchoice of law\b|\blaws? (?:govern|appl)\w*|\bgoverned by\b", None,
        "a governing-law clause", VALUE,
    ),
)  # fmt: skip

BY_KEY = {column.key: column for column in COLUMNS}
# Clauses that forbid or limit something: a permission question about it ("Can a party recruit the
# other side's employees?") is answered "No"/"Not freely" where the clause is found, never "Yes".
RESTRICTIONS = frozenset(
    {
        "anti_assignment", "non_compete", "no_solicit_customers", "no_solicit_employees",
        "non_disparagement", "covenant_not_to_sue", "exclusivity", "non_transferable_license",
    }
)  # fmt: skip
PRESENCE_COLUMNS = tuple(column for column in COLUMNS if column.kind == PRESENCE)

# A question names a clause type more specifically through one of these (a customer or employee
# non-solicit, not any solicitation; an affiliate license, not any license): checked first.
_SPECIFIC_FIRST = (
    "no_solicit_customers", "no_solicit_employees", "competitive_restriction_exception",
    "affiliate_license_licensor", "affiliate_license_licensee", "non_transferable_license",
    "irrevocable_perpetual_license", "unlimited_license", "joint_ip_ownership",
    "ip_ownership_assignment", "uncapped_liability", "change_of_control", "termination_for_convenience",
    "source_code_escrow", "rofr_rofo_rofn", "most_favored_nation", "non_disparagement",
    "covenant_not_to_sue", "third_party_beneficiary", "liquidated_damages", "cap_on_liability",
)  # fmt: skip


def presence_column_named(question: str) -> Column | None:
    """The presence column `question` names, the most specific first; None when it names none."""
    ordered = [BY_KEY[key] for key in _SPECIFIC_FIRST] + [
        column for column in PRESENCE_COLUMNS if column.key not in _SPECIFIC_FIRST
    ]
    return next((column for column in ordered if column.names.search(question)), None)
