"""Prompt building: placeholders filled, the REQUIREMENTS block, strictness, overrides, braces in
values, and placeholder validation. Pure: templates here are plain objects, no database."""

import re
from dataclasses import dataclass, replace

import pytest

from ragsite.exceptions import ConfigurationError, InvalidQuery
from templates_admin import rendering
from templates_admin.rendering import (
    CITATION_STYLE_RULES,
    CITATION_STYLES,
    STRICTNESS_LEVELS,
    STRICTNESS_RULES,
    render,
    requirements_block,
    scan_placeholders,
    template_errors,
)

LEFTOVER = re.compile(r"\{(" + "|".join(rendering.ALLOWED_PLACEHOLDERS) + r")\}")


@dataclass(frozen=True)
class Template:
    template_id: str = "plain"
    version: int = 3
    response_style: str = "balanced"
    system_prompt: str = "You are a legal assistant. Style: {response_style}."
    user_prompt: str = "Context: {context}\n\nQuestion: {question}\n\n{instructions}"
    instructions_block: str = "Be brief."
    citation_style: str = "inline_numbers"
    strictness: str = "normal"
    follow_up_count: int = 2


def test_placeholders_are_filled_in_order():
    prompt = render(Template(), context="[1] Lease, p. 2: rent is due monthly.", question="When is rent due?")
    assert prompt.user.startswith(
        "Context: [1] Lease, p. 2: rent is due monthly.\n\nQuestion: When is rent due?"
    )
    assert prompt.user.index("Be brief.") < prompt.user.index("REQUIREMENTS:")
    assert "Be brief.\n\nREQUIREMENTS:\n" in prompt.user
    assert prompt.system.startswith("You are a legal assistant. Style: balanced.")
    assert prompt.system.endswith("\n\n" + STRICTNESS_RULES["normal"])
    assert (prompt.template_id, prompt.template_version) == ("plain", 3)
    assert (prompt.citation_style, prompt.strictness, prompt.follow_up_count) == (
        "inline_numbers",
        "normal",
        2,
    )


def test_requirements_block_has_the_six_spec_lines():
    block = requirements_block(citation_style="bracketed_ids", follow_up_count=3)
    lines = block.splitlines()
    assert lines[:7] == [
        "REQUIREMENTS:",
        f"1. Cite every factual claim using {CITATION_STYLE_RULES['bracketed_ids']}",
        "2. List all sources used at the end",
        "3. Generate 3 concise follow-up questions",
        "4. Provide confidence estimate (0-1 scale)",
        "5. Add disclaimer for uncertain information",
        "6. ONLY use information from provided context",
    ]
    assert '"follow_ups": ["..."]' in block and '"snippet": "<exact words quoted from that source>"' in block
    assert '"answer" is "I don\'t know."' in block


def test_requirements_ask_a_model_for_the_direct_answer_first():
    # Issue #35: a remote model opens with "Yes."/"No." or the value, shows date arithmetic, and says
    # a redacted value is redacted, as the offline provider does.
    block = requirements_block(citation_style="inline_numbers", follow_up_count=2)
    assert '"answer" opens with the direct answer, then the support' in block
    assert "shows the arithmetic" in block and "redacted or blank" in block


def test_follow_up_count_zero_and_one():
    assert "3. Do not generate follow-up questions" in requirements_block(
        citation_style="inline_numbers", follow_up_count=0
    )
    assert "3. Generate 1 concise follow-up question\n" in requirements_block(
        citation_style="inline_numbers", follow_up_count=1
    )


@pytest.mark.parametrize(
    ("style", "example"),
    [("inline_numbers", "[1]"), ("bracketed_ids", "[doc_42]"), ("end_list", "Sources:")],
)
def test_citation_style_rules_show_the_token(style, example):
    assert example in CITATION_STYLE_RULES[style]
    assert example in requirements_block(citation_style=style, follow_up_count=2)


def test_strict_rule_is_the_spec_text():
    assert "You MUST ONLY use provided sources. Cite EVERY claim." in STRICTNESS_RULES["strict"]
    assert STRICTNESS_RULES["lenient"].startswith("Allow some interpretation")


def test_call_overrides_win_over_the_template():
    prompt = render(
        Template(),
        context="c",
        question="q",
        citation_style="end_list",
        strictness="strict",
        follow_up_count=0,
    )
    assert (prompt.citation_style, prompt.strictness, prompt.follow_up_count) == ("end_list", "strict", 0)
    assert CITATION_STYLE_RULES["end_list"] in prompt.user
    assert "3. Do not generate follow-up questions" in prompt.user
    assert "You MUST ONLY use provided sources. Cite EVERY claim." in prompt.system


@pytest.mark.parametrize(
    ("override", "value"),
    [
        ("citation_style", "footnotes"),
        ("strictness", "paranoid"),
        ("follow_up_count", 6),
        ("follow_up_count", -1),
        ("follow_up_count", True),
        ("follow_up_count", "2"),
    ],
)
def test_invalid_overrides_are_invalid_queries(override, value):
    with pytest.raises(InvalidQuery) as error:
        render(Template(), context="c", question="q", **{override: value})
    assert error.value.details[override].startswith("One of ")


def test_an_invalid_template_is_a_configuration_error():
    with pytest.raises(ConfigurationError) as error:
        render(Template(user_prompt="{question} {context} {secret}"), context="c", question="q")
    assert "{secret}" in " ".join(error.value.details["user_prompt"])
    with pytest.raises(ConfigurationError):
        render(Template(citation_style="footnotes"), context="c", question="q")


def test_braces_in_context_and_question_are_inserted_verbatim():
    nasty = "{instructions} {0} {} {context.__class__} {{ }} { {question!r:>10} }"
    prompt = render(Template(), context=f"Clause {nasty}", question=f"What about {nasty}?")
    assert f"Context: Clause {nasty}\n\nQuestion: What about {nasty}?" in prompt.user
    assert prompt.user.count("REQUIREMENTS:") == 1


def test_literal_braces_in_the_template():
    template = Template(user_prompt='Return {{"a": 1}}.\n{context}\n{question}')
    assert render(template, context="c", question="q").user.startswith('Return {"a": 1}.\nc\nq')


def test_instructions_are_appended_when_the_placeholder_is_absent():
    prompt = render(Template(user_prompt="Q: {question}\nSources: {context}"), context="c", question="q")
    assert prompt.user.startswith("Q: q\nSources: c\n\nBe brief.\n\nREQUIREMENTS:\n1. Cite")
    assert prompt.user.count("REQUIREMENTS:") == 1


def test_without_instructions_block_the_requirements_stand_alone():
    prompt = render(Template(instructions_block="  "), context="c", question="q")
    assert prompt.user.endswith(requirements_block(citation_style="inline_numbers", follow_up_count=2))
    assert "Question: q\n\nREQUIREMENTS:" in prompt.user


def test_the_other_placeholders():
    template = Template(
        system_prompt="Cite with {citation_style}; strictness {strictness}.",
        user_prompt="{context} {question} follow-ups: {follow_up_count}",
    )
    prompt = render(template, context="c", question="q", strictness="lenient", follow_up_count=4)
    assert prompt.system.startswith(
        f"Cite with {CITATION_STYLE_RULES['inline_numbers']}; strictness lenient."
    )
    assert "follow-ups: 4" in prompt.user


def test_render_does_not_mutate_the_template():
    template = Template()
    render(template, context="c", question="q", strictness="strict")
    assert template == replace(template)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("{context} {question} {foo}", "{foo}"),
        ("{context} {question} {}", "{}"),
        ("{context} {question} {0}", "{0}"),
        ("{context.__class__} {question}", "{context.__class__}"),
        ("{context[0]} {question}", "{context[0]}"),
        ("{context!r} {question}", "{context!r}"),
        ("{context:>10} {question}", "{context:>10}"),
    ],
)
def test_invalid_placeholders_are_named(text, named):
    problems = scan_placeholders(text).problems
    assert problems and named in problems[0]
    assert named in " ".join(template_errors(system_prompt="ok", user_prompt=text)["user_prompt"])


@pytest.mark.parametrize("text", ["{context} {question", "{context} question}", "{context} {question} }"])
def test_malformed_braces_are_rejected(text):
    problems = scan_placeholders(text).problems
    assert problems and "Malformed braces" in problems[0]


def test_user_prompt_needs_context_and_question():
    errors = template_errors(system_prompt="", user_prompt="Just {instructions}")
    assert errors["user_prompt"] == [
        "The user prompt must contain {context}.",
        "The user prompt must contain {question}.",
    ]
    assert template_errors(system_prompt="{context}", user_prompt="{question}")["user_prompt"] == [
        "The user prompt must contain {context}."
    ]


def test_system_prompt_placeholders_are_checked_too():
    errors = template_errors(system_prompt="{persona}", user_prompt="{context}{question}")
    assert list(errors) == ["system_prompt"] and "{persona}" in errors["system_prompt"][0]


@pytest.mark.parametrize("style", CITATION_STYLES)
@pytest.mark.parametrize("strictness", STRICTNESS_LEVELS)
def test_every_style_and_strictness_leaves_no_placeholder(style, strictness):
    prompt = render(Template(), context="c", question="q", citation_style=style, strictness=strictness)
    assert not LEFTOVER.search(prompt.system + prompt.user)
    assert STRICTNESS_RULES[strictness] in prompt.system
