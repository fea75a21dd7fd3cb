"""Query expansion with the language contracts use for the clause a question names.

People ask about a clause by its name ("Is there an anti-assignment clause?", "What is the
expiration date?"); contracts never use the name, they state the rule ("Neither party may assign
this Agreement without the prior written consent of the other party", "The term of this Agreement
shall be one (1) year"). Neither the words nor a small embedding model bridge that gap, so a
question naming a clause type is searched together with that clause's typical wording.

The vocabulary covers the common commercial-contract clause types (those of the CUAD taxonomy
of The Atticus Project, plus a few general ones); each entry is a pattern that recognises the
clause's name in a question and the phrasing such clauses are written in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ClauseType:
    name: str
    pattern: re.Pattern
    wording: str  # how such a clause is typically phrased in a contract


def _clause(name: str, pattern: str, wording: str) -> ClauseType:
    return ClauseType(name, re.compile(pattern, re.IGNORECASE), wording)


# What a party creates or owns, as opposed to the contract itself.
_WORK = r"\b(?:work product|inventions?|deliverables|intellectual property|ip|copyrights?|patents?)\b"

CLAUSE_TYPES: tuple[ClauseType, ...] = (
    _clause(
        "expiration",
        # "How long does FCC have to respond?" asks for a time limit, not how long the deal runs.
        r"\bexpir\w*|\bend date\b|\bhow long\b(?![^?]*\b(?:have|has) to\b)|\bfixed term\b|\buntil when\b"
        r"|\bcome to an end\b"
        r"|\bwhen (?:does|will|did) (?:[\w'\u2019./-]+\s+){0,8}?(?:end|lapse|run out)\b"
        r"|\b(?:term|duration) of (?:the|this) (?:agreement|contract)",
        "The term of this Agreement shall commence on the Effective Date and shall continue for a "
        "period of years until expiry, unless terminated earlier.",
    ),
    _clause(
        "renewal",
        r"\brenew\w*",
        "This Agreement shall automatically renew for successive renewal terms unless either party "
        "gives notice of non-renewal.",
    ),
    _clause(
        "notice to terminate renewal",
        r"\bnotice period\b|\bnon-?renewal\b",
        "Either party may give written notice of non-renewal at least days prior to the end of the "
        "then-current term.",
    ),
    _clause(
        "effective date",
        r"\beffective date\b|\bagreement date\b"
        r"|\bwhen (?:was|is) (?:the|this) (?:agreement|contract) (?:signed|dated)",
        "This Agreement is made and entered into and effective as of the date first written above.",
    ),
    _clause(
        "governing law",
        r"\bgoverning law\b|\bchoice of law\b|\blaws? (?:govern|appl)"
        r"|\bwhich (?:state|country|jurisdiction)'?s? laws?\b",
        "This Agreement shall be governed by and construed in accordance with the laws of the State.",
    ),
    _clause(
        "anti-assignment",
        # "Does Wildform assign its work product?" asks who owns the work (ip ownership), not
        # whether the contract may be assigned.
        rf"\bassign\w*(?![^?]*{_WORK})|\bdelegat\w*|\btransfer (?:of )?(?:the|this) (?:agreement|contract)"
        r"|\btransfer\w* (?:its |their |his |her |the )?(?:rights|obligations|interest)\b",
        "Neither party may assign or transfer this Agreement or its rights or obligations without the "
        "prior written consent of the other party.",
    ),
    _clause(
        "change of control",
        r"\bchange (?:of|in) control\b|\bmerger\b|\bacqui(?:sition|red)\b",
        "In the event of a change of control, merger, acquisition or sale of all or substantially all "
        "of the assets of a party, the other party may terminate this Agreement.",
    ),
    _clause(
        "termination for convenience",
        r"\bterminat\w* for convenience\b|\bterminat\w* without cause\b|\bterminat\w* at will\b"
        r"|\bget out of\b|\bwalk away\b|\bterminat\w* early\b|\bearly terminat\w*",
        "Either party may terminate this Agreement for any reason or without cause upon days prior "
        "written notice to the other party.",
    ),
    _clause(
        "post-termination services",
        r"\bpost-?termination\b|\bafter (?:the )?termination\b|\btransition services?\b",
        "Upon termination or expiration of this Agreement, the obligations that survive and the "
        "services to be provided during a wind-down or transition period.",
    ),
    _clause(
        "audit rights",
        r"\baudit\w*|\binspect\w*|\baccess to (?:the |its |their )?(?:books|records)\b",
        "A party shall keep complete and accurate books and records and the other party may audit, "
        "inspect and examine such books and records upon reasonable notice.",
    ),
    _clause(
        "cap on liability",
        r"\bcap on liability\b|\blimit(?:s|ations?)? (?:of|on) liability\b"
        r"|\bliabilit\w* (?:is |are )?capped\b|\bliability (?:cap|limit)|\bmaximum liability\b",
        "In no event shall either party's aggregate liability under this Agreement exceed the amounts "
        "paid; neither party shall be liable for indirect, incidental or consequential damages.",
    ),
    _clause(
        "uncapped liability",
        r"\buncapped\b|\bunlimited liability\b|\bnot capped\b",
        "The limitations of liability shall not apply to breach of confidentiality, indemnification "
        "obligations, gross negligence or willful misconduct.",
    ),
    _clause(
        "liquidated damages",
        r"\bliquidated damages\b|\bpenalt(?:y|ies)\b",
        "The party shall pay liquidated damages in the amount of, as a reasonable estimate of damages "
        "and not as a penalty.",
    ),
    _clause(
        "warranty duration",
        r"\bwarrant(?:y|ies)\b",
        "The party warrants that the products shall be free from defects in materials and workmanship "
        "for a warranty period of months from delivery.",
    ),
    _clause(
        "insurance",
        r"\binsur\w*",
        "Each party shall maintain, at its own expense, insurance coverage including commercial general "
        "liability insurance with limits of not less than per occurrence.",
    ),
    _clause(
        "non-compete",
        r"\bnon-?compet\w*|\bcompet\w*",
        "During the term, the party shall not, directly or indirectly, engage in, own or operate any "
        "business that competes with the business of the other party within the territory.",
    ),
    _clause(
        "exclusivity",
        r"\bexclusiv\w*",
        "The party shall be the exclusive distributor and shall purchase exclusively from; the other "
        "party shall not appoint any other distributor in the territory.",
    ),
    _clause(
        "no-solicit",
        r"\bsolicit\w*|\bpoach\w*",
        "The party shall not, directly or indirectly, solicit, induce or hire any employee or customer "
        "of the other party.",
    ),
    _clause(
        "non-disparagement",
        r"\bdisparag\w*",
        "Neither party shall make any statement that disparages or is derogatory of the other party.",
    ),
    _clause(
        "right of first refusal",
        r"\brofr\b|\brofo\b|\brofn\b|\bfirst refusal\b|\bfirst offer\b|\bfirst negotiation\b",
        "Before selling to a third party, the party shall first offer the other party the right of "
        "first refusal to purchase on the same terms.",
    ),
    _clause(
        "most favored nation",
        r"\bmost favou?red\b|\bmfn\b|\bbest price\b",
        "If the party offers more favorable prices or terms to any third party, it shall offer the same "
        "terms to the other party.",
    ),
    _clause(
        "revenue sharing",
        r"\brevenue\b|\bprofit shar\w*|\broyalt\w*"
        r"|\bprofits? (?:are |is )?split\b|\bsplit (?:of |the )?profits?\b"
        r"|\bshare of (?:the )?(?:profits?|gross margin|net sales)\b",
        "The party shall pay a percentage of net sales, revenue or profits as royalties to the other party.",
    ),
    _clause(
        "price restrictions",
        r"\bprice (?:restriction|increase|change)s?\b",
        "Prices shall not be increased during the term except upon written notice.",
    ),
    _clause(
        "minimum commitment",
        r"\bminimum (?:commitment|purchase|order|quantit)\w*"
        r"|\bminimum (?:\w+ )?(?:effort|obligation|requirement)s?\b",
        "The party shall purchase a minimum quantity or minimum amount of products each year.",
    ),
    _clause(
        "volume restriction",
        r"\bvolume\b|\bmaximum (?:number|quantity)\b",
        "The license is limited to a maximum number of units, users or volume; additional fees apply "
        "above that number.",
    ),
    _clause(
        "ip ownership",
        r"\b(?:ip|intellectual property)\b.*\b(?:own|assign)\w*|\bownership\b"
        rf"|\bassign\w*[^?]*{_WORK}"
        r"|\bown(?:s|ing)?\b.*\b(?:ip|intellectual property|work product|inventions?)\b",
        "All intellectual property rights in the work product shall be owned by and are hereby "
        "assigned to the party.",
    ),
    _clause(
        "license grant",
        r"\blicen[cs]\w*",
        "The licensor hereby grants to the licensee a non-exclusive, non-transferable, royalty-free "
        "license to use.",
    ),
    _clause(
        "affiliate license",
        r"\baffiliate\w*",
        "The license granted extends to the party's affiliates and subsidiaries.",
    ),
    _clause(
        "source code escrow",
        r"\bescrow\b|\bsource code\b",
        "The source code shall be deposited with an escrow agent and released upon bankruptcy or "
        "failure to support.",
    ),
    _clause(
        "covenant not to sue",
        r"\bnot to sue\b|\bchallenge\b.*\bvalidity\b",
        "The party shall not bring any claim, suit or action against the other party or contest or "
        "challenge the validity of its intellectual property.",
    ),
    _clause(
        "third party beneficiary",
        r"\bthird[- ]party beneficiar\w*",
        "Nothing in this Agreement confers any rights or remedies upon any person other than the parties.",
    ),
    _clause(
        "indemnification",
        r"\bindemni\w*|\bhold harmless\b",
        "The party shall indemnify, defend and hold harmless the other party from and against all "
        "claims, losses and damages.",
    ),
    _clause(
        "confidentiality",
        r"\bconfidential\w*|\bnon-?disclosure\b",
        "The receiving party shall keep confidential and not disclose the confidential information of "
        "the disclosing party.",
    ),
    _clause(
        "force majeure",
        r"\bforce majeure\b|\bact of god\b",
        "Neither party shall be liable for delay or failure to perform caused by events beyond its "
        "reasonable control, including acts of God.",
    ),
    _clause(
        "dispute resolution",
        r"\barbitrat\w*|\bdispute\w*|\bvenue\b|\bjurisdiction\b",
        "Any dispute arising out of this Agreement shall be resolved by arbitration or submitted to the "
        "exclusive jurisdiction of the courts.",
    ),
    _clause(
        "payment terms",
        r"\bpayment terms?\b|\binvoic\w*|\bwhen (?:is|are) payments? due\b",
        "The party shall pay each invoice within days of receipt.",
    ),
)

MAX_CLAUSE_TYPES = 2  # a question naming more is not about one clause

# A period as contracts write it: "one (1) year", "thirty (30) days", "an additional year".
_PERIOD = (
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|eighteen|twenty|thirty|sixty|"
    r"ninety|an?)[\s\-()0-9]*(?:(?:calendar|full|consecutive|additional)\s+){0,2}(?:day|week|month|year)s?\b"
)

# Words a contract cannot hold the clause without: one that never uses any of them has no such
# clause (rag.pipeline.answerability). Only clause types with a subject of their own are listed
# ("insurance" needs the word; an expiration date needs none); each pattern is broad on purpose.
EVIDENCE: dict[str, re.Pattern] = {
    name: re.compile(pattern, re.IGNORECASE)
    for name, pattern in {
        # A sentence choosing a law: "governed by … the laws of", "construed in accordance with the
        # laws of", "the laws of X shall apply", "choice of law"; not "organized under the laws of".
        "governing law": (
            r"\bgovern\w*\b[^.;]{0,120}\blaws?\b|\blaws?\b[^.;]{0,120}\b(?:govern\w*|apply|applies|control)\b|"
            r"\b(?:constru\w*|interpret\w*|enforc\w*)\b[^.;]{0,80}\b(?:accordance\s+with|according\s+to|under|"
            r"pursuant\s+to|by)\b[^.;]{0,30}\blaws?\b|\bsubject\s+to\s+the\s+laws?\b|\bchoice\s+of\s+law\b|"
            r"\bapplicable\s+law\b|\bgoverning\s+law\b"
        ),
        "anti-assignment": r"\bassign\w*|\btransfer\w*|\bdelegat\w*|\bsuccessors?\b",
        "change of control": r"\bcontrol\w*|\bmerge\w*|\bacqui\w*|\bconsolidat\w*",
        "audit rights": r"\baudit\w*|\binspect\w*|\bexamin\w*|\bbooks\b|\brecords\b",
        "liquidated damages": r"\bliquidated\b|\bpenalt\w*",
        "insurance": r"\binsur\w*",
        "non-compete": r"\bcompet\w*|\bengage\w* in\b|\bsimilar (?:business|products?|services?)\b",
        "exclusivity": r"\bexclusiv\w*|\bsole\b",
        "no-solicit": r"\bsolicit\w*|\bhir(?:e|ing)\b|\brecruit\w*|\bpoach\w*|\binduce\w*",
        "non-disparagement": r"\bdisparag\w*|\bnegative\w*|\bdetrimental\b|\breputation\w*",
        "right of first refusal": (
            r"\bfirst (?:refusal|offer|negotiation)\b|\bright of first\b|\bfirst right\b|"
            r"\bright of (?:refusal|first)\b|\bmatch\w*"
        ),
        "most favored nation": r"\bfavou?r\w*",
        "source code escrow": r"\bescrow\w*|\bsource code\b",
        "covenant not to sue": r"\bsue\b|\bchalleng\w*|\bcontest\w*|\bvalidity\b",
        "third party beneficiary": r"\bbeneficiar\w*",
        "indemnification": r"\bindemn\w*|\bhold\w* harmless\b|\bdefend\b",
        "confidentiality": r"\bconfiden\w*|\bdisclos\w*|\bproprietary\b|\bsecre\w*",
        # A term that goes on by itself: a renewal or extension tied to a period ("renew for
        # successive one (1) year terms"), an automatic or year-to-year continuation. A renewal
        # left to a later agreement ("may be renewed upon mutual written agreement") or a policy
        # "renewed" is no renewal term.
        "renewal": (
            rf"\b(?:renew\w*|extend\w*|extension|successive|evergreen)\b[^.;]{{0,120}}?\b{_PERIOD}|"
            rf"\b{_PERIOD}[^.;]{{0,60}}\b(?:renew\w*|successive)|\b(?:year|month)[- ]to[- ](?:year|month)\b|"
            r"\bautomatic\w*\s+(?:renew|extend|continu)\w*|"
            r"\bcontinue\w*\s+(?:in\s+(?:full\s+)?force\s+(?:and\s+effect\s+)?)?thereafter\b|"
            r"\b(?:additional|successive|renewal)\s+(?:\w+\s+){0,2}(?:terms?|periods?)\b"
        ),
        "force majeure": (
            r"\bforce majeure\b|\bact of god\b|\bbeyond (?:its|their|the|such) (?:\w+ )?control\b"
        ),
    }.items()
}


def clause_types(question: str) -> list[ClauseType]:
    """The clause types `question` names, in vocabulary order (at most MAX_CLAUSE_TYPES)."""
    return [clause for clause in CLAUSE_TYPES if clause.pattern.search(question)][:MAX_CLAUSE_TYPES]


def expand(question: str, clauses: list[ClauseType] | None = None) -> str:
    """`question` followed by the typical wording of `clauses` (default: the clause types it
    names); unchanged when there are none."""
    found = clause_types(question) if clauses is None else clauses
    return " ".join([question, *(clause.wording for clause in found)])


def absent_clauses(question: str, texts: list[str]) -> list[ClauseType]:
    """The clause types `question` names that none of `texts` can hold: none of them uses any of
    the clause's EVIDENCE words. Clause types without evidence words are never absent."""
    return [
        clause
        for clause in clause_types(question)
        if clause.name in EVIDENCE and texts and not any(EVIDENCE[clause.name].search(text) for text in texts)
    ]


def evidence(question: str) -> list[re.Pattern]:
    """The EVIDENCE words of the clause types `question` names (none for types without them)."""
    return [EVIDENCE[clause.name] for clause in clause_types(question) if clause.name in EVIDENCE]
