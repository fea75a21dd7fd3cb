#!/usr/bin/env python
# Hallucination benchmark: prints figures, it is not a test.
#
# What it measures: how well the hallucination checks (rag.pipeline.verify, after
# rag.pipeline.postprocess) tell real answers from corrupted copies of them.
#   1. Real answers: for every distinct LegalBench-RAG CUAD dev query, the top `--top-k` passages from
#      `retrieve` (the query API's path) in the evaluation tenant, given citation ids "1".."k" in
#      rank order (inline_numbers), and the offline extractive model's answer (queries it answers
#      "I don't know." are skipped).
#   2. Two intact forms of each answer, which the checks must accept:
#      - "quoted": the extractive reply as it is (JSON; `<title> states: "<sentence>" [n]` per quote,
#        each quote also the snippet of its entry in the citations list);
#      - "rewritten": a faithful light rewrite, as a model that paraphrases lightly would write it,
#        in plain text (no citations list): quotation marks dropped, each quote introduced by a
#        frame ("The agreement provides that ...", "Under <title>, ...", "According to <title>, ...",
#        "<title> provides that ..."), first letter lower-cased, and, for half the answers,
#        consecutive quotes joined into one sentence with ", and". Deterministic (seeded), no model.
#   3. Corrupted copies (several per answer, seeded), each type reported on its own:
#      (1) invented citation: one quote's citation (marker and list entry) replaced by a number
#          past the last source ("[7]" with 5 sources), an invented document id ("[doc_123456]") or
#          an invented title with a page ("[Master Supply Agreement, page 4]"); a number that is a
#          source's document id is redrawn (the post-processor reads "[9]" as document 9 too);
#      (2) altered quote: in one quote, a number changed, a modal negated ("shall" -> "shall not")
#          or one content word replaced; in the answer's quote, in its list snippet, or in both;
#      (3) misattributed sentence: one quote re-cited (marker, list entry and the title in its frame)
#          to the lowest-ranked other passage, unless the sentence occurs verbatim in that passage;
#      (4) unsupported claim: a fabricated legal sentence from a fixed list of 20 appended, citing
#          a seeded choice among the sources, unless the source holds half or more of the claim's
#          content words (5-letter prefixes, our own stopwords: independent of the detector's).
#      Only answers whose intact form passed are corrupted, so a detection is the corruption's.
#      The quoted form is the target; the same corruptions of the rewritten form (where an altered
#      sentence has no quote to compare with) are reported beside it for information.
#
# Targets (from the issue): >= 95 % of corrupted answers detected, <= 5 % false alarms on intact ones.
"""Hallucination benchmark: detection rate on corrupted answers, false alarms on intact ones.

    .venv/bin/python bench/hallucination.py [--corpus DIR] [--queries FILE] [--limit N] [--seed N]
                                            [--top-k K] [--out TXT]

Indexes the corpus into the evaluation tenant of `manage.py evaluate` (reused when already there)
and keeps it. See the header comment for the method and the targets.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import setup_django  # noqa: E402

LEGALBENCH = Path("/work/shared/eval/legalbench-cuad")
DEFAULT_OUT = REPO_ROOT / "bench" / "results-hallucination.txt"
SEED = 20241122
TOP_K = 5
TARGET_DETECTED = 0.95
TARGET_FALSE_ALARMS = 0.05
FORMS = ("quoted", "rewritten")
TARGET_FORM = "quoted"
TYPES = ("invented citation", "altered quote", "misattributed sentence", "unsupported claim")
CHECKS = ("invalid_citations", "misquoted", "unsupported")
CLAIMS_PER_ANSWER = 2  # unsupported claims appended to each answer (each copy gets one)
SUPPORTED_SHARE = 0.5  # a claim with this share of its words in the cited source is not fabricated
EXAMPLES = 3  # missed corruptions and false alarms printed per row

# Plausible contract terms, none taken from the corpus.
FABRICATED_CLAIMS = (
    "The licensee may terminate this agreement on 30 days' written notice without cause.",
    "The supplier's aggregate liability under this agreement is capped at $50,000.",
    "All disputes shall be resolved by binding arbitration in Geneva under the ICC rules.",
    "The distributor is granted an exclusive license throughout Canada and Mexico.",
    "Either party may assign this agreement to any affiliate without the other's consent.",
    "The receiving party's confidentiality obligations survive for ten years after termination.",
    "The licensor shall receive a royalty of 12% of net sales each calendar quarter.",
    "This agreement automatically renews for successive five-year terms unless cancelled.",
    "The company must maintain product liability insurance of at least $5,000,000.",
    "Late payments bear interest at 18% per annum, compounded monthly.",
    "The contractor retains ownership of all intellectual property developed for the client.",
    "Neither party may solicit the other's employees for two years after expiration.",
    "This agreement is governed by the laws of the Province of Ontario.",
    "The purchaser may audit the seller's books once per year at its own expense.",
    "A change of control of either party entitles the other to terminate immediately.",
    "The minimum annual purchase commitment is 250,000 units.",
    "The warranty period for delivered goods is 36 months from acceptance.",
    "The consultant shall not compete with the client anywhere in Europe for three years.",
    "Liquidated damages of $1,000 per day apply to any late delivery.",
    "The sponsor holds a right of first refusal on any renewal of the naming rights.",
)
INVENTED_TITLES = (
    "Master Supply Agreement",
    "Software License Agreement",
    "Asset Purchase Agreement",
    "Employment Agreement",
    "Manufacturing Services Agreement",
)
REWRITE_FRAMES = (
    "The agreement provides that {text}",
    "Under {title}, {text}",
    "According to {title}, {text}",
    "{title} provides that {text}",
)
NEGATABLE = re.compile(r"\b(shall|will|may|must|is|are)\b(?!\s+not\b)", re.I)
NUMBER = re.compile(r"(?<![\w.,])\d+(?![\w])")
WORD = re.compile(r"[A-Za-z][a-z]{4,}")
# Replacements for words whose swap changes what a clause says; other words get one of POOL_WORDS.
SWAPS = {
    "exclusive": "non-exclusive", "licensee": "licensor", "licensor": "licensee", "written": "oral",
    "terminate": "renew", "termination": "renewal", "expiration": "renewal", "prior": "subsequent",
    "days": "months", "months": "years", "years": "months", "buyer": "seller", "seller": "buyer",
    "company": "consultant", "consultant": "company", "supplier": "distributor", "distributor": "supplier",
    "customer": "vendor", "effective": "terminated", "perpetual": "temporary", "unlimited": "limited",
    "entire": "partial", "nonexclusive": "exclusive", "delaware": "nevada", "york": "jersey",
}  # fmt: skip
POOL_WORDS = ("royalty", "arbitration", "indemnity", "warranty", "territory", "insurance", "escrow")
OWN_STOPWORDS = frozenset(
    [
        "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was", "one",
        "our", "out", "has", "have", "this", "that", "with", "from", "they", "will", "shall", "may", "must",
        "such", "which", "their", "there", "than", "then", "its", "into", "upon", "under", "each", "other",
        "been", "were", "who", "whom", "what", "when", "where", "whether", "would", "could", "should",
        "also", "only", "per",
    ]
)  # fmt: skip
_OWN_WORD = re.compile(r"[a-z0-9]+")


def progress(iterable=None, **kwargs):
    from tqdm import tqdm

    return tqdm(iterable, file=sys.stderr, dynamic_ncols=True, **kwargs)


# --- Answers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer and the citation it carries."""

    text: str  # the quoted sentence (or, when not `quoted`, the statement)
    token: str  # the citation token of its marker and of its citations-list entry
    title: str  # the document its frame names
    snippet: str | None  # the snippet of its citations-list entry (None: no entry)
    doc_id: str | None = None  # the list entry's doc_id
    quoted: bool = True


@dataclass(frozen=True)
class Answer:
    query: str
    sources: tuple  # rag.llm.Source, citation ids "1".."k" in rank order
    claims: tuple[Claim, ...]
    extra: dict  # the rest of the JSON reply: follow_ups, confidence, disclaimer
    rewrite_seed: int  # chooses the rewritten form's frames and joins
    opening: str = ""  # the value stated first ("Delaware law governs [2]."), kept in both forms


def from_extractive(query: str, sources: Sequence, reply: dict, *, seed: int) -> Answer | None:
    """The extractive model's reply as claims; None when it said "I don't know."."""
    if not reply["citations"]:
        return None
    titles = {source.citation_id: source.title or "The document" for source in sources}
    claims = tuple(
        Claim(
            text=c["snippet"], token=c["id"], title=titles[c["id"]], snippet=c["snippet"], doc_id=c["doc_id"]
        )
        for c in reply["citations"]
    )
    extra = {key: value for key, value in reply.items() if key not in ("answer", "citations")}
    rewrite_seed = random.Random(f"{seed}:rewrite:{query}").randrange(8)  # noqa: S311 (not security)
    first = f"{claims[0].title} states:"
    opening = reply["answer"].split(first, 1)[0].strip() if first in reply["answer"] else ""
    answer = Answer(query, tuple(sources), claims, extra, rewrite_seed, opening)
    if json.loads(render(answer, "quoted"))["answer"] != reply["answer"]:
        raise RuntimeError("the extractive reply changed format: update from_extractive() and render()")
    return answer


def render(answer: Answer, form: str) -> str:
    """The model reply `answer` stands for: "quoted" (the extractive JSON) or "rewritten" (plain text)."""
    if form == "quoted":
        parts = [
            f'{claim.title} states: "{claim.text}" [{claim.token}]' if claim.quoted else _statement(claim)
            for claim in answer.claims
        ]
        citations = [
            {
                "id": claim.token,
                **({"doc_id": claim.doc_id} if claim.doc_id else {}),
                "snippet": claim.snippet,
            }
            for claim in answer.claims
            if claim.snippet is not None
        ]
        text = " ".join([answer.opening, *parts] if answer.opening else parts)
        return json.dumps({"answer": text, "citations": citations, **answer.extra})
    if form == "rewritten":
        return " ".join([answer.opening, *_rewritten(answer)] if answer.opening else _rewritten(answer))
    raise ValueError(f"unknown form {form!r}")


def _statement(claim: Claim) -> str:
    return f"In addition, {_lower_first(_unstop(claim.text))} [{claim.token}]."


def _rewritten(answer: Answer) -> list[str]:
    """The rewritten form's sentences (see the header comment)."""
    offset, join = answer.rewrite_seed % len(REWRITE_FRAMES), answer.rewrite_seed >= len(REWRITE_FRAMES)
    clauses = []
    for i, claim in enumerate(answer.claims):
        if not claim.quoted:
            clauses.append(_statement(claim)[:-1])
            continue
        frame = REWRITE_FRAMES[(offset + i) % len(REWRITE_FRAMES)]
        text = _lower_first(_unstop(claim.text))
        clauses.append(frame.format(title=claim.title, text=text) + f" [{claim.token}]")
    if not join:
        return [clause + "." for clause in clauses]
    sentences = []
    for i in range(0, len(clauses), 2):
        pair = clauses[i : i + 2]
        joined = pair[0] + (", and " + _lower_first(pair[1]) if len(pair) == 2 else "")
        sentences.append(joined + ".")
    return sentences


def _unstop(text: str) -> str:
    return text.rstrip(" .;:,")


def _lower_first(text: str) -> str:
    """'This Agreement ...' -> 'this Agreement ...': the first letter lower-cased when the first word
    is a plain one (_PLAIN_STARTS), not a name ("Licensee", "Company") or a heading ("NOTICES")."""
    if len(text) > 1 and text[0].isupper() and text[1].islower() and text.split(" ", 1)[0] in _PLAIN_STARTS:
        return text[0].lower() + text[1:]
    return text


_PLAIN_STARTS = frozenset(
    [
        "According", "The", "This", "That", "These", "Those", "Each", "Either", "Neither", "Any", "All",
        "No", "In", "If", "For", "Upon", "Unless", "Except", "Subject", "Notwithstanding", "Such", "A",
        "An", "It", "Its", "Following", "After", "Before", "During", "Within", "On", "At", "By", "To",
        "With",
    ]
)  # fmt: skip


# --- Corruptions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Copy:
    """A corrupted copy of an answer."""

    type: str  # one of TYPES
    variant: str  # how it was corrupted ("number", "doc id", ...)
    answer: Answer


@dataclass
class Skips:
    """Corruptions not made, by reason."""

    counts: Counter

    def add(self, reason: str) -> None:
        self.counts[reason] += 1


def _with_claim(answer: Answer, index: int, claim: Claim) -> Answer:
    claims = list(answer.claims)
    claims[index] = claim
    return replace(answer, claims=tuple(claims))


def invented_citations(answer: Answer, rng: random.Random, skips: Skips) -> list[Copy]:
    """One quote's citation replaced by a citation id past the last source, an invented document id
    and an invented title with a page (three copies)."""
    doc_ids = {source.document_id for source in answer.sources}
    tokens = []
    # A bare number is also a document id to the post-processor ("[9]" cites document 9 when a
    # source is part of it): such a number names a source, so another is drawn.
    numbers = [len(answer.sources) + r for r in rng.sample(range(1, 6), 5)]
    if numbers[0] in doc_ids:
        skips.add("invented citation (number past the sources): first draw is a source's document id")
    number = next((n for n in numbers if n not in doc_ids), None)
    if number is not None:
        tokens.append(("number past the sources", str(number)))
    document = next(n for n in iter(lambda: rng.randrange(100_000, 1_000_000), None) if n not in doc_ids)
    titles = {(source.title or "").lower() for source in answer.sources}
    title = rng.choice([t for t in INVENTED_TITLES if t.lower() not in titles])
    tokens += [("doc id", f"doc_{document}"), ("title, page", f"{title}, page {rng.randint(2, 40)}")]
    copies = []
    for variant, token in tokens:
        index = rng.randrange(len(answer.claims))
        claim = replace(answer.claims[index], token=token, doc_id=None)
        copies.append(Copy(TYPES[0], variant, _with_claim(answer, index, claim)))
    return copies


def altered_quotes(answer: Answer, rng: random.Random, skips: Skips) -> list[Copy]:
    """One copy per alteration that applies to some quote (a number, a negation, a word), each in a
    seeded quote and at a seeded place: the answer's quote, the list snippet, or both."""
    copies = []
    for variant, alter in (("number", alter_number), ("negation", negate), ("word", alter_word)):
        candidates = [i for i, claim in enumerate(answer.claims) if alter(claim.text, random.Random(0))]  # noqa: S311
        if not candidates:
            skips.add(f"altered quote ({variant}): no quote to alter")
            continue
        index = rng.choice(candidates)
        claim = answer.claims[index]
        altered = alter(claim.text, rng)
        source = _source(answer, claim.token)
        if occurs(altered, source.text):
            skips.add(f"altered quote ({variant}): the altered text is in the source")
            continue
        place = rng.choice(("answer", "snippet", "both"))
        changed = replace(
            claim,
            text=claim.text if place == "snippet" else altered,
            snippet=claim.snippet if place == "answer" else altered,
        )
        copies.append(Copy(TYPES[1], f"{variant} in {place}", _with_claim(answer, index, changed)))
    return copies


def alter_number(text: str, rng: random.Random) -> str | None:
    """`text` with one of its numbers changed (None when it has none)."""
    numbers = list(NUMBER.finditer(text))
    if not numbers:
        return None
    match = rng.choice(numbers)
    value = int(match.group())
    new = value + rng.choice((1, 2, 5, 10)) if value < 1900 or value > 2100 else value + rng.choice((1, 2, 3))
    return text[: match.start()] + str(new) + text[match.end() :]


def negate(text: str, rng: random.Random) -> str | None:
    """`text` with one modal or "is"/"are" negated ("shall" -> "shall not"; None when it has none)."""
    found = list(NEGATABLE.finditer(text))
    if not found:
        return None
    match = rng.choice(found)
    return text[: match.end()] + " not" + text[match.end() :]


def alter_word(text: str, rng: random.Random) -> str | None:
    """`text` with one content word (5+ letters) replaced: by its opposite from SWAPS when it has one,
    else by a legal word of POOL_WORDS that `text` does not contain (None when it has no such word)."""
    found = [m for m in WORD.finditer(text) if m.group().lower() not in OWN_STOPWORDS]
    if not found:
        return None
    swappable = [m for m in found if m.group().lower() in SWAPS]
    match = rng.choice(swappable or found)
    word = match.group()
    lower = text.lower()
    new = SWAPS.get(word.lower()) or rng.choice([w for w in POOL_WORDS if w not in lower] or ["escrow"])
    new = new.capitalize() if word[0].isupper() else new
    return text[: match.start()] + new + text[match.end() :]


def misattributed(answer: Answer, rng: random.Random, skips: Skips) -> list[Copy]:
    """Each quote re-cited to the lowest-ranked other passage, unless the sentence occurs there;
    the variant says whether that passage is of the quote's own document (an adjacent or nearby
    part of the same contract) or of another one."""
    copies = []
    for index, claim in enumerate(answer.claims):
        target = [source for source in answer.sources if source.citation_id != claim.token][-1]
        if occurs(claim.text, target.text):
            skips.add("misattributed: the sentence occurs in the other passage")
            continue
        moved = replace(
            claim,
            token=target.citation_id,
            doc_id=str(target.document_id),
            title=target.title or "The document",
        )
        own = _source(answer, claim.token)
        document = "the same document" if target.document_id == own.document_id else "another document"
        copies.append(Copy(TYPES[2], f"to a passage of {document}", _with_claim(answer, index, moved)))
    return copies


def unsupported_claims(answer: Answer, rng: random.Random, skips: Skips) -> list[Copy]:
    """CLAIMS_PER_ANSWER copies, each with one fabricated claim appended, citing a seeded source."""
    copies = []
    for text in rng.sample(FABRICATED_CLAIMS, len(FABRICATED_CLAIMS)):
        if len(copies) == CLAIMS_PER_ANSWER:
            break
        source = rng.choice(answer.sources)
        if overlap_share(text, source.text) >= SUPPORTED_SHARE:
            skips.add("unsupported claim: the cited source has half of its words")
            continue
        claim = Claim(text=text, token=source.citation_id, title="", snippet=None, quoted=False)
        cited = (
            "an uncited source"
            if all(c.token != source.citation_id for c in answer.claims)
            else "a cited one"
        )
        copies.append(Copy(TYPES[3], f"citing {cited}", replace(answer, claims=(*answer.claims, claim))))
    return copies


CORRUPTIONS: tuple[Callable[[Answer, random.Random, Skips], list[Copy]], ...] = (
    invented_citations,
    altered_quotes,
    misattributed,
    unsupported_claims,
)


def corrupt(answer: Answer, *, seed: int, skips: Skips) -> list[Copy]:
    """Every corrupted copy of `answer`; the same seed and answer give the same copies."""
    copies = []
    for corruption in CORRUPTIONS:
        rng = random.Random(f"{seed}:{corruption.__name__}:{answer.query}")  # noqa: S311 (not security)
        copies += corruption(answer, rng, skips)
    return copies


def _source(answer: Answer, token: str):
    return next(source for source in answer.sources if source.citation_id == token)


def _plain(text: str) -> str:
    quotes = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
    return " ".join(text.translate(quotes).lower().split())


def occurs(sentence: str, passage: str) -> bool:
    """Whether `sentence` is in `passage` verbatim, up to case, blanks, quote marks and a final stop."""
    return _plain(sentence).rstrip(" .") in _plain(passage)


def overlap_share(sentence: str, passage: str) -> float:
    """Share of `sentence`'s words (3+ characters, OWN_STOPWORDS left out) whose first five letters
    start a word of `passage`: a looser match than the detector's stems, so a claim it counts as
    supported is left out of the benchmark."""
    words = [w for w in _OWN_WORD.findall(sentence.lower()) if len(w) > 2 and w not in OWN_STOPWORDS]
    available = {w[:5] for w in _OWN_WORD.findall(passage.lower())}
    return sum(1 for w in words if w[:5] in available) / max(len(words), 1)


# --- Checking ---------------------------------------------------------------------------------


def check(answer: Answer, form: str):
    """The post-processor and the hallucination checks on `answer` in `form` -> Verification."""
    from rag.pipeline.postprocess import process
    from rag.pipeline.verify import verify

    processed = process(render(answer, form), answer.sources, follow_up_count=2)
    return verify(processed, answer.sources)


def fired(verification) -> tuple[str, ...]:
    return tuple(name for name in CHECKS if getattr(verification, name))


@dataclass
class Tally:
    """Checked answers of one kind: how many, how many flagged, by which checks, a few examples."""

    total: int = 0
    flagged: int = 0
    by_check: Counter = field(default_factory=Counter)
    only: Counter = field(default_factory=Counter)  # flagged by this check alone
    missed: list = field(default_factory=list)  # examples not flagged (corruptions) or flagged (intact)

    def add(self, verification, *, example: str, keep_flagged: bool) -> None:
        checks = fired(verification)
        self.total += 1
        self.flagged += bool(verification.hallucination_detected)
        self.by_check.update(checks)
        if len(checks) == 1:
            self.only[checks[0]] += 1
        if bool(checks) == keep_flagged and len(self.missed) < EXAMPLES:
            self.missed.append(example)

    @property
    def rate(self) -> float:
        return self.flagged / self.total if self.total else 0.0


# --- Run --------------------------------------------------------------------------------------


def load_answers(args, corpus) -> tuple[list[Answer], dict]:
    from rag.evaluation import legalbench
    from rag.llm import Source
    from rag.llm.extractive import answer as extractive_answer
    from rag.retrieval.service import Reader, retrieve
    from tenants.models import Role

    queries = list(dict.fromkeys(q.query for q in legalbench.load_queries(args.queries)))
    if args.limit:
        queries = queries[: args.limit]
    answers, idk, seconds = [], 0, Counter()
    for query in progress(queries, desc="answering", unit="query"):
        started = time.perf_counter()
        result = retrieve(
            tenant=corpus.tenant,
            query=query,
            top_k=args.top_k,
            similarity_threshold=0,
            reader=Reader(role=Role.ADMIN),
        )
        sources = [
            Source(
                citation_id=str(rank),
                document_id=p.document_id,
                title=p.title,
                page=p.page_start,
                text=p.text,
                similarity_score=p.similarity_score,
            )
            for rank, p in enumerate(result.passages, start=1)
        ]
        seconds["retrieve"] += time.perf_counter() - started
        started = time.perf_counter()
        reply = extractive_answer(query, sources, follow_up_count=2)
        seconds["answer"] += time.perf_counter() - started
        answer = from_extractive(query, sources, reply, seed=args.seed) if sources else None
        if answer is None:
            idk += 1
        else:
            answers.append(answer)
    return answers, {"queries": len(queries), "idk": idk, "seconds": seconds}


def _example(
    answer: Answer, form: str, verification, *, original: Answer | None = None, note: str = ""
) -> str:
    """One line about a checked answer: the checks that fired, the query, the corrupted claims (or the
    answer) and the first unsupported sentence."""
    checks = ", ".join(fired(verification)) or "nothing"
    if original is None:
        shown = json.loads(render(answer, form))["answer"] if form == "quoted" else render(answer, form)
    else:
        shown = " | ".join(f"[{c.token}] {c.text}" for c in answer.claims if c not in original.claims)
    line = f"{note}[{checks}] {answer.query[:60]!r}: {shown[:240]!r}"
    if verification.unsupported:
        line += f" unsupported: {verification.unsupported[0][:160]!r}"
    return line


def run(args) -> dict:
    from rag.evaluation import runner

    started = time.perf_counter()
    corpus = runner.ingest_corpus(args.corpus, progress=progress)
    ingest_s = time.perf_counter() - started
    answers, info = load_answers(args, corpus)
    intact = {form: Tally() for form in FORMS}
    corrupted = {form: defaultdict(Tally) for form in FORMS}  # (type, variant) -> Tally
    skips = Skips(Counter())
    excluded = Counter()
    check_s, checks = 0.0, 0
    for answer in progress(answers, desc="checking", unit="answer"):
        copies = corrupt(answer, seed=args.seed, skips=skips)
        for form in FORMS:
            t0 = time.perf_counter()
            verification = check(answer, form)
            check_s, checks = check_s + time.perf_counter() - t0, checks + 1
            intact[form].add(verification, example=_example(answer, form, verification), keep_flagged=True)
            if verification.hallucination_detected:
                excluded[form] += 1
                continue
            for copy in copies:
                if render(copy.answer, form) == render(answer, form):
                    skips.add(f"{copy.type} ({copy.variant}): no change in the {form} form")
                    continue
                t0 = time.perf_counter()
                result = check(copy.answer, form)
                check_s, checks = check_s + time.perf_counter() - t0, checks + 1
                example = _example(copy.answer, form, result, original=answer, note=f"{copy.variant}: ")
                corrupted[form][(copy.type, copy.variant)].add(result, example=example, keep_flagged=False)
    return {
        "started": time.strftime("%Y-%m-%d %H:%M"),
        "corpus": corpus,
        "ingest_s": ingest_s,
        "info": info,
        "answers": answers,
        "intact": intact,
        "corrupted": corrupted,
        "skips": skips.counts,
        "excluded": excluded,
        "check_ms": 1000 * check_s / max(checks, 1),
        "checks": checks,
        "wall_s": time.perf_counter() - started,
    }


# --- Report -----------------------------------------------------------------------------------


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f} %" if whole else "   n/a"


def _row(tally: Tally) -> str:
    return f"{tally.total:6d} {tally.flagged:8d} {_pct(tally.flagged, tally.total)}"


def _checks(tally: Tally) -> str:
    return "  ".join(f"{name} {tally.by_check[name]:4d} (only {tally.only[name]:3d})" for name in CHECKS)


def _merge(tallies) -> Tally:
    total = Tally()
    for tally in tallies:
        total.total += tally.total
        total.flagged += tally.flagged
        total.by_check.update(tally.by_check)
        total.only.update(tally.only)
    return total


def report(figures: dict, args) -> list[str]:
    info, answers = figures["info"], figures["answers"]
    sources = sum(len(a.sources) for a in answers)
    quotes = Counter(len(a.claims) for a in answers)
    lines = [
        f"Hallucination benchmark ({figures['started']}): tenant {figures['corpus'].tenant.slug} · "
        f"{len(figures['corpus'].paths)} documents · top-k {args.top_k} · seed {args.seed}",
        "",
        f"1. Answers: {info['queries']} distinct queries of {args.queries.name}, {len(answers)} answered by "
        f"the extractive model ({info['idk']} 'I don't know' skipped)",
        f"   {sources / max(len(answers), 1):.1f} sources and "
        + ", ".join(f"{n} answers with {q} quote{'s' * (q > 1)}" for q, n in sorted(quotes.items())),
        f"   retrieval {info['seconds']['retrieve']:.1f} s, answering {info['seconds']['answer']:.1f} s; "
        f"{figures['checks']} checks (process + verify) at {figures['check_ms']:.2f} ms each",
        "",
        "2. Intact answers (false alarms: hallucination_detected on an intact answer)",
    ]
    for form in FORMS:
        tally = figures["intact"][form]
        lines.append(
            f"   {form:10s} {tally.flagged:3d} / {tally.total:3d} false alarms = "
            f"{_pct(tally.flagged, tally.total)}   {_checks(tally)}"
        )
        lines += [f"      flagged: {example}" for example in tally.missed]
    for number, form in ((3, "quoted"), (4, "rewritten")):
        title = "the target" if form == TARGET_FORM else "for information: no quotes to compare with"
        excluded = figures["excluded"][form]
        lines += [
            "",
            f"{number}. Corrupted copies of the {form} answers ({title}); "
            f"{len(answers) - excluded} clean answers corrupted ({excluded} flagged when intact, left out)",
            f"   {'type / variant':44s} {'copies':>6s} {'detected':>8s} {'rate':>7s}"
            "   caught by (a copy may trip several)",
        ]
        rows = figures["corrupted"][form]
        for kind in TYPES:
            variants = sorted(variant for t, variant in rows if t == kind)
            total = _merge(rows[(kind, v)] for v in variants)
            lines.append(f"   {kind:44s} {_row(total)}   {_checks(total)}")
            for variant in variants:
                tally = rows[(kind, variant)]
                lines.append(f"     {variant:42s} {_row(tally)}")
            missed = [example for v in variants for example in rows[(kind, v)].missed][:EXAMPLES]
            lines += [f"       missed: {example}" for example in missed]
        overall = _merge(rows.values())
        lines.append(f"   {'all corruptions':44s} {_row(overall)}   {_checks(overall)}")
    lines += ["", "5. Corruptions not made (they would not be hallucinations, or did not apply)"]
    lines += [f"   {count:4d}  {reason}" for reason, count in sorted(figures["skips"].items())]
    target = _merge(figures["corrupted"][TARGET_FORM].values())
    alarms = [figures["intact"][form] for form in FORMS]
    worst = max(alarms, key=lambda t: t.rate)
    detected_ok = target.rate >= TARGET_DETECTED
    alarms_ok = worst.rate <= TARGET_FALSE_ALARMS
    lines += [
        "",
        "6. Targets",
        f"   {'PASS' if detected_ok else 'FAIL'} {100 * target.rate:.1f} % of {target.total} corrupted "
        f"(quoted) answers detected (target ≥ {100 * TARGET_DETECTED:.0f} %)",
        f"   {'PASS' if alarms_ok else 'FAIL'} false alarms "
        + ", ".join(f"{form} {100 * figures['intact'][form].rate:.1f} %" for form in FORMS)
        + f" of {len(answers)} intact answers (target ≤ {100 * TARGET_FALSE_ALARMS:.0f} %)",
        "",
        f"Wall time {figures['wall_s']:.0f} s (indexing check {figures['ingest_s']:.0f} s).",
    ]
    return lines


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=LEGALBENCH / "corpus")
    parser.add_argument("--queries", type=Path, default=LEGALBENCH / "dev.json")
    parser.add_argument("--limit", type=int, default=0, help="first N distinct queries (0 = all)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--top-k", type=int, default=TOP_K)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="also write the report here")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir() or not args.queries.is_file():
        parser.error("--corpus must be a directory and --queries a LegalBench-RAG query file")
    if args.top_k < 2:
        parser.error("--top-k must be at least 2 (a sentence is misattributed to another passage)")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    setup_django()
    figures = run(args)
    text = "\n".join(report(figures, args))
    print(text)
    args.out.write_text(text + "\n")
    print(f"\nreport written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
