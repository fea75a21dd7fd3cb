"""Which questions are matter-review questions, and which clause type they name."""

import pytest

from rag.review.questions import CLAUSE, LIST, PRESENCE, SUMMARY, matter_question


@pytest.mark.parametrize(
    ("question", "column"),
    [
        ("Which of these agreements contain a non-compete?", "non_compete"),
        ("Which contracts can be terminated for convenience?", "termination_for_convenience"),
        ("Do any of the agreements have a change of control clause?", "change_of_control"),
        ("List the agreements that restrict assignment.", "anti_assignment"),
        ("How many of these contracts require insurance?", "insurance"),
        ("Which of these agreements restrict hiring or soliciting employees?", "no_solicit_employees"),
        ("Which of these agreements restrict soliciting customers?", "no_solicit_customers"),
        ("Which of these agreements assign ownership of intellectual property?", "ip_ownership_assignment"),
    ],
)
def test_list_questions_name_their_clause_type(question, column):
    asked = matter_question(question)
    assert asked is not None and asked.kind == LIST and asked.column.key == column


@pytest.mark.parametrize(
    ("question", "column"),
    [
        ("Does this agreement contain a non-compete?", "non_compete"),
        ("Can this agreement be assigned without consent?", "anti_assignment"),
        ("Is there a cap on liability?", "cap_on_liability"),
    ],
)
def test_presence_questions_name_their_clause_type(question, column):
    asked = matter_question(question)
    assert asked is not None and asked.kind == PRESENCE and asked.column.key == column


@pytest.mark.parametrize(
    "question",
    [
        "What is the monthly fee?",
        "Who are the parties to the distributor agreement?",
        "What did the general counsel write about pricing?",
    ],
)
def test_questions_naming_no_clause_type_are_left_to_search(question):
    assert matter_question(question) is None


def test_other_questions_about_a_clause_are_clause_questions():
    asked = matter_question("What insurance must the racing team carry?")
    assert asked is not None and asked.kind == CLAUSE and asked.column.key == "insurance"


@pytest.mark.parametrize(
    "question",
    [
        "What trademark or data licenses do Excite and Vitamin Shoppe grant each other?",
        "What licenses does King receive?",
    ],
)
def test_asking_what_a_clause_grants_is_no_list(question):
    asked = matter_question(question)
    assert asked is not None and asked.kind != LIST


@pytest.mark.parametrize(
    "question",
    ["Summarize this agreement.", "What are the key terms?", "Give me an overview of the contract"],
)
def test_summary_questions(question):
    assert matter_question(question).kind == SUMMARY


def test_a_clause_type_meant_without_its_name_is_found_by_meaning():
    # "coverage", not "insurance": no name of the column, but its meaning is close enough.
    asked = matter_question("Must either party carry liability coverage?", one_document=True)
    assert asked is not None and asked.kind == PRESENCE and asked.column.key == "insurance"


@pytest.mark.parametrize(
    "question",
    [
        "What is the monthly fee?",
        "Who signed on behalf of the distributor?",
        "When was this agreement signed?",
        "What law governs this agreement?",
        "How long is the initial term?",
        "Who are the parties?",
        "Where must disputes be arbitrated?",
        "Is the agreement renewable?",
    ],
)
def test_questions_meaning_no_clause_type_stay_with_search_even_about_one_document(question):
    assert matter_question(question, one_document=True) is None


def test_meaning_is_only_read_where_the_review_would_answer():
    # About a case, a question that is neither a list nor about one document goes to search
    # without embedding it.
    assert matter_question("Must either party carry liability coverage?") is None
    listed = matter_question("Which of these agreements make a party carry liability coverage?")
    assert listed is not None and listed.kind == LIST and listed.column.key == "insurance"
