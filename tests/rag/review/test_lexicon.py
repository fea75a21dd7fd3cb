"""The clause model reads words: its features are those scikit-learn's vectorizer trained it on,
computed without scikit-learn, and its probes tell a clause from its neighbours."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from rag.review import model as clause_model_module
from rag.review.lexicon import NGRAMS, TOKEN, Lexicon, terms
from rag.review.model import ClauseModel, Probe, clause_model, from_json

TRAINING = [
    "The Distributor shall not, directly or indirectly, compete with the Company.",
    "This Agreement shall be governed by the laws of the State of New York.",
    "Neither party may assign this Agreement without the prior written consent of the other party.",
    "The Company may terminate this Agreement for convenience upon thirty (30) days notice.",
    "Notice shall be given in writing; notice by e-mail is notice.",
]


def test_features_are_those_the_vectorizer_was_trained_with():
    vectorizer = TfidfVectorizer(token_pattern=TOKEN, ngram_range=NGRAMS, sublinear_tf=True)
    vectorizer.fit(TRAINING)
    lexicon = Lexicon(tuple(vectorizer.get_feature_names_out()), vectorizer.idf_)
    texts = [
        TRAINING[4],  # a repeated word: 1 + log(count)
        "The Company shall not compete; the company shall not solicit. Unseen words: zyzzyva!",
        "a b c",  # no word of two letters: no features
    ]
    expected = vectorizer.transform(texts).toarray()
    for text, row in zip(texts, expected, strict=True):
        indices, values = lexicon.features(text)
        dense = np.zeros(len(lexicon.vocabulary))
        dense[indices] = values
        np.testing.assert_allclose(dense, row, atol=1e-6)


def test_terms_are_words_then_word_pairs_lowercased():
    assert terms("Right of First-Refusal") == [
        "right", "of", "first", "refusal", "right of", "of first", "first refusal"
    ]  # fmt: skip


def test_the_model_file_round_trips_and_refuses_other_features():
    lexicon = Lexicon(("compete", "not compete", "governed"), np.array([1.5, 2.0, 1.2]))
    probe = Probe(np.array([0.8, 1.7, 0.0], dtype=np.float32), -0.4)
    model = ClauseModel(lexicon, {"non_compete": probe}, (0.5, -1.0), 0.3, "test")
    data = model.as_json()
    assert data["probes"]["non_compete"]["weights"] == [[0, 0.8], [1, 1.7]]  # zeros left out
    again = from_json(data)
    text = ["The Distributor shall not compete with the Company."]
    before, after = (m.paragraph_scores(["non_compete"], text) for m in (model, again))
    np.testing.assert_allclose(after, before, atol=1e-5)
    data["features"]["ngrams"] = [1, 3]
    with pytest.raises(ValueError, match="other features"):
        from_json(data)


@pytest.mark.parametrize(
    "key, clause",
    [
        (
            "non_compete",
            "During the Term and for two (2) years thereafter, the Distributor shall not, directly or "
            "indirectly, manufacture, sell or promote any product that competes with the Products.",
        ),
        (
            "anti_assignment",
            "Neither party may assign or transfer this Agreement or any of its rights hereunder without "
            "the prior written consent of the other party, and any attempted assignment is void.",
        ),
        (
            "termination_for_convenience",
            "Either party may terminate this Agreement at any time, for any reason or no reason, upon "
            "ninety (90) days' prior written notice to the other party.",
        ),
    ],
)
def test_the_packaged_probes_tell_a_clause_from_its_neighbours(key, clause):
    neighbours = [
        "This Agreement shall be governed by and construed in accordance with the laws of the State of "
        "Delaware, without regard to its conflict of laws principles.",
        "All notices under this Agreement shall be in writing and delivered by hand or by certified mail "
        "to the addresses set out above.",
        "The Company shall pay the Distributor the fees set out in Exhibit A within thirty days of invoice.",
    ]
    model = clause_model()
    assert model is not None and model is clause_model_module.clause_model()  # loaded once
    scores = model.paragraph_scores([key], [clause, *neighbours])[:, 0]
    assert scores[0] > max(scores[1:]) + 1.0
    assert model.probability(float(scores[0])) >= model.threshold
