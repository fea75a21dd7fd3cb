#!/usr/bin/env python
"""References by kind ("the sponsorship agreement"): does routing name the one document of that
kind, or name the question ambiguous when several are?

.venv/bin/python bench/kind_references.py [--tenant demo-law-firm]

Questions are made from the titles of the firm's own cases (run `make natural` and
`make natural NATURAL_ARGS="--bench cuad-review"` first, or any firm with cases): for each case of
three or more documents, each word of a title before its "—" (a kind: "sponsorship", "supply"),
some of their other forms ("licence", "distribution", "supplier") and five question templates,
one counting ("Can either party assign the two … agreements?"). The expected outcome is read from
the titles as written: the kind in two or more titles → ambiguous; in one → routed to that one.
Printed per form (as titled, another form, counted) and expectation, as "right / asked". In
process, routing and `with_ambiguity` only (no answers).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import setup_django

TEMPLATES = (
    "What law governs the {k} agreement?",
    "When does the {k} agreement expire?",
    "What is the term of the {k} contract?",
    "Which courts have jurisdiction under the {k} deal?",
    "Can either party assign the two {k} agreements?",
)
# Another form of a kind word, and the word as titles write it.
OTHER_FORMS = {
    "distribution": "distributor",
    "distributors": "distributor",
    "licence": "license",
    "licensing": "license",
    "service": "services",
    "co-promotion": "promotion",
    "promotional": "promotion",
    "sponsor": "sponsorship",
    "supplier": "supply",
}
NOT_KINDS = {"agreement", "and", "of", "to", "no", "amendment"}


def outcome(tenant, question, filters, version):
    """("ambiguous", titles) or ("routed", titles), as search would take the question."""
    from rag.retrieval import service
    from rag.retrieval.routing import route

    routing = service.with_ambiguity(
        tenant, route(tenant=tenant, query=question, index_version=version, filters=filters), filters
    )
    if routing.ambiguous:
        return "ambiguous", [d.title for d in routing.ambiguous]
    return "routed", [d.title for d in routing.documents]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenant", default="demo-law-firm")
    args = parser.parse_args()
    setup_django()
    from rag import selectors
    from rag.models import Case, Document
    from rag.retrieval.filters import SearchFilters
    from rag.retrieval.routing import tokens
    from tenants.models import Tenant

    tenant = Tenant.objects.get(slug=args.tenant)
    version = selectors.index_version_get(tenant=tenant)
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for case in Case.objects.filter(tenant=tenant).order_by("pk"):
        titles = list(Document.objects.filter(tenant=tenant, case=case).values_list("title", flat=True))
        if len(titles) < 3:
            continue
        kinds = {w for t in titles for w in tokens(t.split("—")[0]) if w not in NOT_KINDS and not w.isdigit()}
        kinds |= {form for form, word in OTHER_FORMS.items() if word in kinds}
        filters = SearchFilters(case_ids=(case.pk,))
        for kind in sorted(kinds):
            written = OTHER_FORMS.get(kind, kind).removesuffix("s") if kind != "services" else "service"
            fit = [t for t in titles if re.search(rf"\b{re.escape(written)}", t.split("—")[0], re.I)]
            if not fit:
                continue
            expected = "several" if len(fit) >= 2 else "one"
            for template in TEMPLATES:
                form = (
                    "counted" if "two" in template else ("other form" if kind in OTHER_FORMS else "as titled")
                )
                got, named = outcome(tenant, template.format(k=kind), filters, version)
                right = got == "ambiguous" if expected == "several" else named == fit
                tally[(expected, form)][0] += right
                tally[(expected, form)][1] += 1
    print(f"{'kind in':10} {'form':12} right / asked")
    for (expected, form), (right, asked) in sorted(tally.items()):
        print(f"{expected:10} {form:12} {right} / {asked}")


if __name__ == "__main__":
    main()
