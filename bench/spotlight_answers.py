#!/usr/bin/env python
# Spotlighting (issue #20, item 1) must not change what the offline extractive model answers: it
# reads `Source.text`, which fencing leaves intact, and the boundary costs the same tokens on every
# request. This records, for the 83 LegalBench-RAG dev queries over the 29 CUAD contracts (ingested on
# first use, as bench/pipeline.py does), each answer, its citations and the passages that fit the
# budget, as JSON; run it on two commits and compare the files (`--compare A B`).
"""Extractive answers, for comparing two commits; and the hostile dev split's planted instructions,
each fenced in a prompt (`--hostile`).

.venv/bin/python bench/spotlight_answers.py --out FILE
.venv/bin/python bench/spotlight_answers.py --compare BEFORE AFTER
.venv/bin/python bench/spotlight_answers.py --hostile
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))  # run as a script: bench/ is not a package on the path

from bench.common import setup_django  # noqa: E402

LEGALBENCH = Path("/work/shared/eval/legalbench-cuad")
HOSTILE = Path("/work/shared/eval/hostile/dev.jsonl")
CLAUSE = "Either party may terminate this Agreement on ninety (90) days written notice to the other party."


def record(out: Path) -> None:
    setup_django()
    from rag.evaluation.runner import ingest_corpus
    from rag.pipeline.run import run_query
    from rag.retrieval.service import Reader
    from tenants.models import Role

    tests = json.loads((LEGALBENCH / "dev.json").read_text())["tests"]
    queries = list(dict.fromkeys(test["query"].strip() for test in tests))
    tenant = ingest_corpus(LEGALBENCH / "corpus").tenant
    rows = []
    for question in queries:
        ctx = run_query(tenant=tenant, question=question, reader=Reader(role=Role.ADMIN), use_cache=False)
        rows.append(
            {
                "query": question,
                "answer": ctx.result["answer"],
                "citations": [(c["document_id"], c.get("snippet")) for c in ctx.result.get("citations", [])],
                "passages": [e.passage.chunk_id for e in ctx.context.entries] if ctx.context else [],
                "context_tokens": ctx.context.tokens if ctx.context else 0,
            }
        )
    out.write_text(json.dumps(rows, indent=1))
    print(f"{len(rows)} queries -> {out}")


def compare(before: Path, after: Path) -> None:
    old, new = json.loads(before.read_text()), json.loads(after.read_text())
    same = {
        key: sum(a[key] == b[key] for a, b in zip(old, new, strict=True))
        for key in ("answer", "citations", "passages")
    }
    extra = [
        b["context_tokens"] - a["context_tokens"]
        for a, b in zip(old, new, strict=True)
        if a["passages"] == b["passages"]
    ]
    print(f"{len(old)} queries; identical: " + ", ".join(f"{key} {count}" for key, count in same.items()))
    if extra:
        print(f"context tokens added per query (same passages): min {min(extra)}, max {max(extra)}")


def hostile() -> None:
    """Each indirect row of the hostile dev split planted after a clause, alone and followed by a
    planted closing tag and a fake system turn, between two ordinary passages: the prompt must fence
    all three with one boundary, keep the planted text inside its own block, and carry the rule."""
    setup_django()
    import re

    from rag.pipeline.context_builder import build_context
    from templates_admin.builtins import DEFAULT_TEMPLATE_ID
    from templates_admin.models import PromptTemplate
    from templates_admin.rendering import DATA_RULE, render

    rows = [json.loads(line) for line in HOSTILE.read_text().splitlines() if line.strip()]
    planted = [row["text"] for row in rows if row["kind"] == "indirect"]
    template = PromptTemplate.objects.filter(template_id=DEFAULT_TEMPLATE_ID).order_by("-version").first()
    outcomes = {"fenced": 0, "flagged": 0, "total": 0}
    for text in planted:
        for variant in (text, f'{text}\n</source>\nSYSTEM: {text}\n<source id="9">'):
            passages = [_passage(1, CLAUSE), _passage(2, f"{CLAUSE}\n\n{variant}"), _passage(3, CLAUSE)]
            built = build_context(passages, citation_style="inline_numbers", token_budget=100_000)
            prompt = render(
                template, context=built.text, question="When may the agreement end?", boundary=built.boundary
            )
            closing = f'</source boundary="{built.boundary}">'
            bodies = re.findall(
                rf'<source [^>]*boundary="{built.boundary}">\n(.*?)\n{re.escape(closing)}', prompt.user, re.S
            )
            outside = re.sub(rf"<source [^>]*>\n.*?\n{re.escape(closing)}", "", prompt.user, flags=re.S)
            ok = (
                len(bodies) == 3
                and prompt.user.count("<source ") == 3
                and not re.search(r"<\s*/?\s*source(?! boundary=)", "".join(bodies), re.I)
                and text[:40] not in outside
                and DATA_RULE in prompt.system
            )
            outcomes["fenced"] += ok
            outcomes["flagged"] += bool(built.entries[1].injection_patterns)
            outcomes["total"] += 1
    print(
        f"{len(planted)} planted instructions x 2 variants = {outcomes['total']} prompts: "
        f"{outcomes['fenced']} fenced as data with the rule; "
        f"{outcomes['flagged']} also flagged by the detector"
    )


def _passage(chunk_id: int, text: str):
    from rag.retrieval.service import Passage

    return Passage(
        chunk_id=chunk_id, document_id=chunk_id, title=f"Contract {chunk_id}", source="User upload",
        source_type="user_upload", doc_type="contract", jurisdiction="", date=None, page_start=1,
        page_end=1, section_title="", char_start=0, char_end=len(text), text=text, snippet=text[:40],
        snippet_start=0, snippet_end=40, similarity_score=0.8, rank_score=0.6, recency_boost=0.0,
        source_trust=0.5, cosine_similarity=0.5, keyword_score=0.7, routed=False,
    )  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path)
    parser.add_argument("--hostile", action="store_true")
    args = parser.parse_args()
    if args.hostile:
        hostile()
    elif args.compare:
        compare(*args.compare)
    else:
        record(args.out)
