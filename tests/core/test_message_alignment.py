"""Messages aligned by role between the aligned calls of two runs of one task (issue 32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replay_tui.compare import TaskPair, pair_task
from replay_tui.episodes.model import ChatMessage, ToolCall, Trajectory, TrajectoryStep
from replay_tui.pairing import load_pair

PAIRS = Path(__file__).resolve().parents[1] / "data" / "compare_pairs" / "tau2"


def conversation(tid: str, turns: list[tuple[str, str] | ToolCall]) -> Trajectory:
    """A run as a chat log reader gives it: each assistant turn a step whose prompt is the history."""
    history: list[ChatMessage] = [ChatMessage(role="system", content="policy")]
    steps: list[TrajectoryStep] = []
    for turn in turns:
        if isinstance(turn, ToolCall):
            steps.append(TrajectoryStep(index=len(steps), messages=list(history), action=turn))
            history.append(ChatMessage(role="assistant", tool_calls=[turn]))
            history.append(ChatMessage(role="tool", content="ok"))
            continue
        role, text = turn
        if role == "assistant":
            steps.append(TrajectoryStep(index=len(steps), messages=list(history), content=text, kind="message"))
        history.append(ChatMessage(role=role, content=text))
    return Trajectory(id=tid, format="openai-chat", steps=steps)


def rows_of(task: TaskPair) -> list[tuple[str, str | None, str | None]]:
    a_conv, b_conv = task.conversations
    found = []
    for row in task.timeline:
        if row.call_row is not None:
            a = None if row.a is None else task.a_calls[row.a].name
            b = None if row.b is None else task.b_calls[row.b].name
            found.append((f"call:{row.kind}", a, b))
        else:
            a = None if row.a is None else a_conv.said[row.a].text
            b = None if row.b is None else b_conv.said[row.b].text
            found.append((f"{row.role}:{row.kind}", a, b))
    return found


def test_messages_pair_by_role_between_the_calls_and_never_with_a_call():
    a = conversation(
        "t",
        [
            ("user", "change my flight"),
            ("assistant", "sure, your id?"),
            ("user", "id 7"),
            ToolCall(name="get_user", arguments={"id": 7}),
            ("assistant", "done, anything else?"),
        ],
    )
    b = conversation(
        "t",
        [
            ("user", "change my flight"),
            ToolCall(name="get_user", arguments={"id": 7}),
            ("assistant", "please confirm the change"),
            ("user", "yes confirm"),
            ("assistant", "done"),
        ],
    )
    task = pair_task("t", "t", a, b)
    assert rows_of(task) == [
        ("user:same", "change my flight", "change my flight"),
        ("assistant:a_only", "sure, your id?", None),
        ("user:a_only", "id 7", None),
        ("call:same", "get_user", "get_user"),
        ("assistant:b_only", None, "please confirm the change"),
        ("user:b_only", None, "yes confirm"),
        ("assistant:text", "done, anything else?", "done"),
    ]


def test_the_more_alike_message_of_a_role_pairs_first():
    a = conversation("t", [("user", "book a flight to Paris on May 3"), ("assistant", "ok")])
    b = conversation(
        "t", [("user", "hello"), ("assistant", "hi"), ("user", "book a flight to Paris on May 4"), ("assistant", "ok")]
    )
    rows = rows_of(pair_task("t", "t", a, b))
    assert ("user:text", "book a flight to Paris on May 3", "book a flight to Paris on May 4") in rows
    assert ("user:b_only", None, "hello") in rows


def _first_user_text(path: Path, task_id: str, trial: int) -> str:
    """The first user message of a tau2 simulation, read from the file as tau2 writes it."""
    data = json.loads(path.read_text())
    (simulation,) = [s for s in data["simulations"] if str(s["task_id"]) == task_id and s["trial"] == trial]
    return next(m["content"] for m in simulation["messages"] if m["role"] == "user" and m.get("content"))


@pytest.mark.parametrize("pair", ["pair1", "pair2", "pair3"])
def test_on_real_tau2_pairs_calls_keep_their_rows_and_every_message_appears_once_in_order(pair):
    files = sorted(PAIRS.glob(f"{pair}_*"))
    pairing = load_pair([str(f) for f in files])
    checked = 0
    for key in pairing.paired:
        task = pair_task(key, key, pairing.a.episodes[key].trajectory, pairing.b.episodes[key].trajectory)
        a_conv, b_conv = task.conversations
        timeline = task.timeline
        # the calls' rows are the call alignment's, every one, in order: the first divergence is unchanged
        assert [row.call_row for row in timeline if row.call_row is not None] == list(range(len(task.rows)))
        for row in timeline:
            if row.call_row is not None:
                source = task.rows[row.call_row]
                assert (row.kind, row.a, row.b) == (source.kind, source.a, source.b)
            elif row.a is not None and row.b is not None:
                assert a_conv.said[row.a].role == b_conv.said[row.b].role == row.role
        assert [row.a for row in timeline if row.call_row is None and row.a is not None] == list(
            range(len(a_conv.said))
        )
        assert [row.b for row in timeline if row.call_row is None and row.b is not None] == list(
            range(len(b_conv.said))
        )
        checked += 1
    assert checked == len(pairing.paired) > 0


def test_the_opening_user_messages_of_a_real_pair_are_aligned_with_each_other():
    a_file, b_file = sorted(PAIRS.glob("pair2_*"))
    pairing = load_pair([str(a_file), str(b_file)])
    key = pairing.paired[0]
    task = pair_task(key, key, pairing.a.episodes[key].trajectory, pairing.b.episodes[key].trajectory)
    a_conv, b_conv = task.conversations
    task_id, trial = key.split("#")
    first_a, first_b = _first_user_text(a_file, task_id, int(trial)), _first_user_text(b_file, task_id, int(trial))
    assert first_a != first_b  # the two user simulators wrote it differently: it pairs by role and likeness
    (row,) = [
        r for r in task.timeline if r.a is not None and r.call_row is None and a_conv.said[r.a].text == first_a.strip()
    ]
    assert row.b is not None and b_conv.said[row.b].text == first_b.strip()
