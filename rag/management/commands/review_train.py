"""manage.py review_train: train the clause model (rag.review) on a cuad-review question file."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from rag.review import model as clause_model
from rag.review import train


class Command(BaseCommand):
    help = (
        "Train the matter-review clause model on lawyers' labels (a cuad-review question file) and "
        "print its figures held out by matter; writes rag/review/data/clause_model.json."
    )

    def add_arguments(self, parser):
        parser.add_argument("--questions", required=True, help="e.g. ../shared/eval/cuad-review/dev.json")
        parser.add_argument(
            "--corpus-root", required=True, help="e.g. ../shared/eval (holds cuad-full-corpus/)"
        )
        parser.add_argument("--out", default=str(clause_model.MODEL_FILE))
        parser.add_argument("--figures", help="write the held-out figures here as JSON")

    def handle(self, *args, **options):
        questions = Path(options["questions"])
        corpus = train.load(questions, Path(options["corpus_root"]))
        model, figures = train.train(
            corpus,
            trained_on=f"{questions.name} ({sum(map(len, corpus.matters.values()))} documents)",
            progress=self._progress,
        )
        clause_model.save(model, Path(options["out"]))
        if options["figures"]:
            Path(options["figures"]).write_text(json.dumps(figures, indent=1))
        self.stdout.write(json.dumps({k: v for k, v in figures.items() if k != "per_column"}, indent=1))
        for key, counts in figures["per_column"].items():
            self.stdout.write(f"{key:36} tp {counts['tp']:3} fp {counts['fp']:3} fn {counts['fn']:3}")

    def _progress(self, message: str) -> None:
        self.stderr.write(message)
