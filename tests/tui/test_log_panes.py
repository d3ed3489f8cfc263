"""What the stepper's panes show for a step of another format (replay_tui.tui.widgets.log_panes)."""

from __future__ import annotations

from replay_tui.episodes.model import ChatMessage, ToolCall, TrajectoryStep
from replay_tui.tui.widgets.log_panes import action_lines, arguments_are_long, message_lines, pretty_json


def texts(lines) -> list[str]:
    return [line.text for line in lines]


def test_pretty_json_indents_objects_and_arrays_only():
    assert pretty_json('{"a": 1, "b": [1, 2]}') == '{\n  "a": 1,\n  "b": [\n    1,\n    2\n  ]\n}'
    assert pretty_json("[]") == "[]"
    assert pretty_json("42") is None and pretty_json("not json {") is None and pretty_json("{broken") is None
    assert pretty_json("") is None and pretty_json(None) is None


def test_short_arguments_stay_inline_long_ones_are_indented():
    assert not arguments_are_long(ToolCall(name="click", arguments={"bid": "12"}))
    assert arguments_are_long(ToolCall(name="bash", arguments={"cmd": "ls\ncat x"}))
    assert arguments_are_long(ToolCall(name="f", arguments={"text": "x" * 80}))
    assert arguments_are_long(ToolCall(name="f", raw_arguments="{" + "y" * 80))


def test_action_lines_show_the_logs_action_long_arguments_content_and_json_result():
    step = TrajectoryStep(
        index=0,
        thinking="plan",
        content="Running it.",
        action=ToolCall(name="bash", arguments={"cmd": "cd /repo\npytest -q"}),
        action_text="bash(cd /repo ...)",
        tool_result='{"ok": true}',
    )
    shown = texts(action_lines(step))
    assert shown[:2] == ["── action ──", "bash(cd /repo ...)"]
    assert "── arguments of bash ──" in shown
    assert "cmd:" in shown and "  pytest -q" in shown  # the multi-line argument as text too
    assert shown.index("── content ──") < shown.index("── tool result ──")
    assert shown[-3:] == ["{", '  "ok": true', "}"]


def test_content_repeating_the_thinking_is_shown_once():
    step = TrajectoryStep(index=0, thinking="Same words.", content="Same words.")
    assert "── content ──" not in texts(action_lines(step))


def test_message_lines_label_roles_calls_and_results_and_find_the_last_message():
    messages = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="assistant", content="", tool_calls=[ToolCall(name="add", arguments={"a": 2}, id="t1")]),
        ChatMessage(role="tool", content='{"sum": 5}', tool_call_id="t1"),
    ]
    lines, last = message_lines(messages)
    shown = texts(lines)
    assert shown[0] == "── system ──" and '→ add({"a":2})' in shown
    assert shown[last] == "── tool · answers t1 ──"
    assert shown[last + 1 :] == ["{", '  "sum": 5', "}"]
    assert lines[0].style == "bold magenta"


def test_message_lines_strip_control_sequences():
    lines, _ = message_lines([ChatMessage(role="user\x1b[2J", content="a\x1b]0;title\x07b")])
    assert texts(lines) == ["── user ──", "ab"]
