"""What a question asks for, read from its interrogative and the noun it asks about."""

import json

import pytest

from rag.answers.asked import (
    AMOUNT,
    DATE,
    DURATION,
    EFFECTIVE,
    ENDS,
    JURISDICTION,
    PARTIES,
    PERCENT,
    SIGNED,
    asked_value,
    asks_permission,
    negated_qualifier,
    restricted_opening,
)


@pytest.mark.parametrize(
    ("question", "kind", "event"),
    [
        ("What law governs this agreement?", JURISDICTION, ""),
        ("Which state's law applies to this contract?", JURISDICTION, ""),
        ("When was this agreement signed?", DATE, SIGNED),
        ("What is the date of this agreement?", DATE, SIGNED),
        ("When does this agreement take effect?", DATE, EFFECTIVE),
        ("When does the term end?", DATE, ENDS),
        ("What is the expiration date of the lease?", DATE, ENDS),
        ("Until when does FCC have to supply under its agreement?", DATE, ENDS),
        ("How much notice is needed to prevent renewal?", DURATION, ""),
        ("What's the notice period for non-renewal?", DURATION, ""),
        ("How long is the initial term?", DURATION, ""),
        ("How much is Freecook paying for the license?", AMOUNT, ""),
        ("What is the monthly fee?", AMOUNT, ""),
        ("What royalty rate does ArTara pay?", PERCENT, ""),
    ],
)
def test_the_typed_value_a_question_asks_for(question, kind, event):
    asked = asked_value(question)
    assert (asked.kind, asked.event) == (kind, event)


@pytest.mark.parametrize(
    "question",
    [
        "Does this agreement contain a non-compete?",
        "Can Detto assign the reseller agreement without PivX's consent?",
        "Summarize the distributor's obligations.",
        "",
    ],
)
def test_a_question_without_a_typed_value(question):
    assert asked_value(question) is None


@pytest.mark.parametrize(
    ("question", "permission"),
    [
        ("Can this agreement be assigned without consent?", True),
        ("May the distributor assign this agreement?", True),
        ("Is the reseller free to sell competing products?", True),
        ("Is assignment allowed, for example on a change of control?", True),
        ("Is assignment permitted, for example to lenders?", True),
        ("Are assignment and subcontracting restricted?", False),
        ("Is there an anti-assignment clause?", False),
        ("Does this agreement contain a non-compete?", False),
    ],
)
def test_permission_questions(question, permission):
    assert asks_permission(question) is permission


def test_a_restriction_answers_a_permission_question_no_or_not_freely():
    noun = "a restriction on assignment"
    assert restricted_opening("Can it be assigned without consent?", noun) == (
        "No: the agreement has a restriction on assignment."
    )
    assert restricted_opening("May the distributor assign it?", noun).startswith("Not freely:")


@pytest.mark.parametrize(
    ("question", "clause", "negated"),
    [
        (
            "Is the license exclusive?",
            "Fox grants Licensee a limited, non-exclusive right and license.",
            "non-exclusive",
        ),
        ("Is the license transferable?", "a non-transferable, non-sublicensable license", "non-transferable"),
        ("Is the license revocable?", "an irrevocable, perpetual license", "irrevocable"),
        # the qualifier said plainly too, a clause about something else, or no yes/no question
        ("Is the license exclusive?", "an exclusive license in the Territory, non-exclusive elsewhere", None),
        ("Is the license exclusive?", "Licensor grants an exclusive license in the Territory.", None),
        ("Is a party required to carry insurance?", "The Licensee is not required to name insureds.", None),
        ("What license rights are granted?", "a non-exclusive license", None),
        # a permission question's verb read as its qualifier, a line break after the hyphen
        (
            "Can King sublicense the trademarks?",
            "a non-exclusive, non- sublicensable license",
            "non-sublicensable",
        ),
        ("Can the license be revoked?", "an irrevocable, perpetual license", "irrevocable"),
        ("May the rights be transferred?", "a personal, non-transferable right", "non-transferable"),
        # the clause saying plainly it may be done, or another verb's qualifier
        (
            "Can the rights be transferred?",
            "non-transferable, save that Licensee may transfer them to an affiliate",
            None,
        ),
        (
            "Can King sublicense the marks?",
            "King may sublicense the marks; the license is non-transferable.",
            None,
        ),
    ],
)
def test_a_yes_no_questions_qualifier_negated_by_its_clause(question, clause, negated):
    assert negated_qualifier(question, clause) == negated


def test_a_found_clause_that_negates_the_asked_qualifier_opens_no():
    from rag.llm import GenerationRequest, Source
    from rag.llm.extractive import ExtractiveProvider

    grant = Source(
        citation_id="1",
        document_id=4,
        title="Wireless Content License",
        page=1,
        text="1. Grant of Rights: Fox grants to Licensee a limited, non-exclusive right and license to "
        "distribute the Wireless Products in the Territory.",
    )
    asked = {"system": "s", "prompt": "p", "sources": (grant,), "affirmed": "a license grant"}
    reply = json.loads(
        ExtractiveProvider().generate(GenerationRequest(question="Is the license exclusive?", **asked)).text
    )
    assert reply["answer"].startswith("No: it is non-exclusive. Wireless Content License states:")
    reply = json.loads(
        ExtractiveProvider().generate(GenerationRequest(question="Is a license granted?", **asked)).text
    )
    assert reply["answer"].startswith("Yes. Wireless Content License states:")


def test_a_question_about_who_the_parties_are_asks_for_the_parties():
    for question in (
        "Who are the parties to this agreement?",
        "Between whom is the supply contract?",
        "Which companies signed the Hydraspin agreement?",
        "Who is this agreement between?",
    ):
        assert asked_value(question).kind == PARTIES, question
    for question in (
        "Are the parties allowed to assign this agreement?",
        "Who owns the IP developed under the contract?",
        "Can someone who isn't a party enforce this contract?",
        "Which parties are bound by the non-compete?",
    ):
        found = asked_value(question)
        assert found is None or found.kind != PARTIES, question
