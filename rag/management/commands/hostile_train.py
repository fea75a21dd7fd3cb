"""manage.py hostile_train: train the learned injection detector and print its cross-validation."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from rag.ingest import embedding
from rag.pipeline.sanitize import injection_findings
from rag.security import injection_model, injection_train, planted_model, planted_train

_REPO = Path(settings.BASE_DIR)
_SHARED = next(
    (
        root / "shared" / "eval"
        for root in (_REPO.parent, _REPO.parent.parent)
        if (root / "shared" / "eval").is_dir()
    ),
    _REPO.parent / "shared" / "eval",
)


class Command(BaseCommand):
    help = (
        "Train the learned prompt-injection detector (rag/security/injection_model.py) on the hostile dev "
        "split against ordinary questions and contract passages, print rules vs rules+model held out "
        "(by attack family, by question source, random 5-fold) and write the model JSON. With --planted, "
        "the planted-instruction detector for documents (rag/security/planted_model.py) instead."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dev", default=str(_SHARED / "hostile" / "dev.jsonl"))
        parser.add_argument("--shared", default=str(_SHARED), help="holds natural/, cuad-review/, ...")
        parser.add_argument("--questions", default=str(_REPO / "tests" / "security" / "legal_questions.json"))
        parser.add_argument("--out", help="where to write the model (default: the packaged file)")
        parser.add_argument(
            "--planted", action="store_true", help="train the planted-instruction detector for documents"
        )
        parser.add_argument(
            "--shapes",
            default=str(_REPO / "tests" / "security" / "planted_shapes.json"),
            help="with --planted",
        )
        parser.add_argument("--no-save", action="store_true", help="cross-validate only")
        parser.add_argument("--c", type=float, default=injection_train.PROBE_C, help="inverse regularisation")
        parser.add_argument("--figures", help="write the cross-validation counts here as JSON")
        parser.add_argument("--cache", help="keep the window embeddings in this .npz (and reuse them)")

    def handle(self, *args, **options):
        if options["planted"]:
            return self._planted(options)
        items = injection_train.load(
            Path(options["dev"]), Path(options["shared"]), Path(options["questions"])
        )
        cache = Path(options["cache"]) if options["cache"] else None
        vectors = injection_train.embed_all(items, embedding.embed, cache, progress=self._progress)
        self._progress("rules ...")
        rules = {
            i: {form: bool(injection_findings(text, learned=False)) for form, text in item.text.items()}
            for i, item in enumerate(items)
        }
        for item_rules in rules.values():
            for form in injection_train.FORMS:
                item_rules.setdefault(form, item_rules["full"])
        result = injection_train.cross_validate(
            items, vectors, rules, c=options["c"], progress=self._progress
        )
        self.stdout.write(render(result["schemes"]))
        if options["figures"]:
            Path(options["figures"]).write_text(json.dumps(result["schemes"], indent=1))
        if not options["no_save"]:
            self._save(injection_train.train_final, items, vectors, options, injection_model.MODEL_FILE)

    def _planted(self, options) -> None:
        examples = planted_train.load(
            Path(options["dev"]),
            Path(options["shapes"]),
            Path(options["shared"]) / "cuad-full-corpus" / "cuad",
        )
        vectors = planted_train.embed_all(examples, embedding.embed, progress=self._progress)
        result = planted_train.cross_validate(examples, vectors, c=options["c"], progress=self._progress)
        self.stdout.write(planted_train.render(result))
        if options["figures"]:
            Path(options["figures"]).write_text(json.dumps(result, indent=1))
        if not options["no_save"]:
            self._save(planted_train.train_final, examples, vectors, options, planted_model.MODEL_FILE)

    def _save(self, train_final, data, vectors, options, default: Path) -> None:
        """Train the packaged model on all of `data` and write it (to --out, else `default`)."""
        model = train_final(data, vectors, embedding_model=embedding.model_id(), c=options["c"])
        out = Path(options["out"] or default)
        injection_model.save(model, out)
        self.stdout.write(f"\nwrote {out} (threshold {model.threshold:.3f}; {model.trained_on})")

    def _progress(self, message: str) -> None:
        self.stderr.write(message)


def render(schemes: dict) -> str:
    """A Markdown table per scheme: held-out counts summed over its folds, for each detector."""
    lines = []
    for scheme, rows in schemes.items():
        lines += [
            f"\n### {scheme} (held out, summed over {len(rows)} folds; thresholds "
            + ", ".join(f"{row['threshold']:.2f}" for row in rows)
            + ")\n",
            "| detector | direct | full | first 500 | last 500 | all three | questions flagged"
            " | passages flagged |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for how, label in (("rules", "rules alone"), ("model", "model alone"), ("both", "rules OR model")):
            total = {key: sum(row[how][key] for row in rows) for key in rows[0][how]}
            cells = [
                f"{100 * total[key] / max(total['direct'], 1):.1f} % ({total[key]})"
                for key in ("full", "first", "last", "all")
            ]
            lines.append(
                f"| {label} | {total['direct']} | "
                + " | ".join(cells)
                + f" | {total['question']} / {total['questions']}"
                + f" | {total['passage']} / {total['passages']} |"
            )
        for row in rows:
            both = row["both"]
            lines.append(
                f"| &nbsp; {row['fold']}: rules OR model | {both['direct']} | | | "
                f"| {both['all']} (rules {row['rules']['all']}) "
                f"| {both['question']} / {both['questions']} | {both['passage']} / {both['passages']} |"
            )
    return "\n".join(lines)
