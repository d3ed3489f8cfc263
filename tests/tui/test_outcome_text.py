"""The outcome's words in the views, on built outcomes: the stepper header's headline and detail,
the outcome screen's blocks and where enter jumps for each expected action."""

from __future__ import annotations

from rich.text import Text

from replay_tui.episodes.model import Outcome, OutcomeCheck, ToolCall
from replay_tui.expected import align_expected
from replay_tui.tui.replay.outcome import ExpectedSource, outcome_text
from replay_tui.tui.widgets.outcome_text import append_headline, outcome_detail

BOOK = ToolCall(name="book", arguments={"cabin": "economy"})
CANCEL = ToolCall(name="cancel", arguments={"id": "R1"})
REFUND = ToolCall(name="refund", arguments={"amount": 5244})
FAILED = Outcome(
    reward=0.0,
    success=False,
    status="user_stop",
    target="refund 5244",
    answer="transferred\x1b[31m to a human",
    explanation="The agent [b]transferred[/b] the user.",
    checks=[
        OutcomeCheck(name="db", passed=False, detail="the database differs"),
        OutcomeCheck(name="communicate", passed=True),
        OutcomeCheck(name="accuracy", value=0.5),
    ],
)


def headline(outcome: Outcome) -> str:
    text = Text()
    append_headline(text, outcome)
    return text.plain


def test_the_headline_says_score_kind_and_termination_reason() -> None:
    assert headline(FAILED) == "score 0.00 ✗ failed · user_stop  "
    assert headline(Outcome(success=True)) == "✓ succeeded  "
    assert headline(Outcome(error="boom", status="error")) == "! errored · error  "
    assert headline(Outcome()) == ""  # the log says nothing: nothing is said


def test_the_detail_names_each_failed_check_first_and_keeps_log_text_literal() -> None:
    detail = outcome_detail(FAILED)
    assert detail is not None
    lines = detail.plain.split("\n")
    assert lines[0] == "checks ✗ db: the database differs · · accuracy = 0.50 · ✓ communicate"
    assert lines[1] == "target refund 5244  answer transferred to a human"  # the escape sequence is gone
    assert lines[2] == "explanation The agent [b]transferred[/b] the user."  # markup stays text
    assert "\x1b" not in detail.plain
    assert outcome_detail(Outcome(reward=1.0, success=True)) is None


def test_the_outcome_screen_text_has_every_block() -> None:
    text = outcome_text(FAILED).plain
    assert text.startswith("checks (1 of 3 failed)\n✗ db: the database differs\n✓ communicate\n· accuracy = 0.50")
    for block in ("target\nrefund 5244", "answer\ntransferred to a human", "explanation\nThe agent"):
        assert f"\n\n{block}" in text


def test_each_row_shows_where_enter_goes() -> None:
    """The step of the call, or where the alignment placed a missing action; extra writes last."""
    calls = [
        (2, BOOK),
        (5, ToolCall(name="refund", arguments={"amount": 1})),
        (7, ToolCall(name="cancel_order", arguments={})),
    ]
    alignment = align_expected([CANCEL, BOOK, CANCEL, REFUND], calls)
    assert [hit.status for hit in alignment.hits] == ["missing", "matched", "missing", "different"]
    rows = ExpectedSource(alignment)
    assert [row.step for row in rows.rows] == [hit.step for hit in alignment.hits] + [7]
    cells = [[cell.plain for cell in rows.cells(i)] for i in range(len(rows))]
    assert cells[0][2:] == ["missing", f"→ {alignment.hits[0].step}", "the agent never called cancel"]
    assert cells[1][2:4] == ["matched", "2"]
    assert cells[2][3] == "→ 3"  # after book, matched at step 2
    assert cells[3][2:4] == ["different", "5"] and "arguments.amount" in cells[3][4]
    assert cells[4][:4] == ["+", "cancel_order()", "extra write", "7"]
