"""Plain answers (a decision without a tool call) judged by matching.judge_answer, through judge_step."""

from __future__ import annotations

import pytest

from replay_tui.matching import AnswerSpec, MatchSettings, answer_number, choice_letters, judge_answer, judge_step


@pytest.mark.parametrize(
    ("text", "letters"),
    [
        ("ANSWER: C", "C"),
        ("I think so.\nANSWER: b.", "B"),
        ("ANSWER: A\nthen again\nANSWER: D", "D"),
        ("answer: c, a", "AC"),
        ("ANSWER: A and C", "AC"),
        ("ANSWER: AC", "AC"),
        ("The final ANSWER: B because", None),  # a word after the letter: inspect's scorer finds none either
        ("C", None),
    ],
)
def test_choice_letters_as_inspects_multiple_choice_reads_them(text: str, letters: str | None) -> None:
    assert choice_letters(text) == letters


def test_numbers_at_the_end_of_an_answer() -> None:
    assert answer_number("The answer is 10").canonical == 10.0
    assert answer_number("$1,234.50 in total **1,234.5**").canonical == 1234.5
    assert answer_number("no idea") is None


def test_exact_counts_every_difference_but_spacing() -> None:
    assert judge_answer("ANSWER: C", "ANSWER:  C\n").verdict == "match"
    verdict = judge_answer("ANSWER: C", "ANSWER: c")
    assert verdict.verdict == "mismatch" and verdict.reason == "answer differs: expected 'ANSWER: C', got 'ANSWER: c'"
    assert judge_answer("Paris", "paris", "lower").verdict == "equivalent"


def test_typed_reads_the_answer_as_the_task_declares() -> None:
    same = judge_answer("ANSWER: C", "Let me think. ANSWER: c", "typed", "choice")
    assert (same.verdict, same.reason) == ("equivalent", "same answer read as choice C")
    other = judge_answer("ANSWER: C", "ANSWER: B", "typed", "choice")
    assert (other.verdict, other.reason) == ("mismatch", "answer differs as a choice: expected choice C, got choice B")
    none = judge_answer("ANSWER: C", "I would pick the third", "typed", "choice")
    assert none.verdict == "mismatch" and none.reason.startswith("no choice in the answer")
    assert judge_answer("10", "The answer is 10.0", "typed", "number").verdict == "equivalent"
    assert judge_answer("10", "The answer is 11", "typed", "number").verdict == "mismatch"
    assert judge_answer("Paris.", "  paris", "typed").verdict == "equivalent"  # text: case and edge punctuation
    assert judge_answer("Paris", "Lyon", "tolerant").verdict == "mismatch"


def test_judge_step_routes_an_answer_by_its_spec_under_the_answer_states_policy() -> None:
    settings = MatchSettings.parse(["answer=typed"])
    verdict = judge_step(settings, "ANSWER: A", "ANSWER: a", "answer", call=True, schema=AnswerSpec("choice"))
    assert verdict.verdict == "equivalent" and verdict.policy == "typed"
    exact = judge_step(MatchSettings(), "ANSWER: A", "ANSWER: a", "answer", call=True, schema=AnswerSpec("choice"))
    assert exact.verdict == "mismatch"
    # an answer is never read as a tool call text, even one that looks like a call
    assert judge_step(MatchSettings(), "f(1)", "f(1)", "answer", call=True, schema=AnswerSpec()).verdict == "match"
