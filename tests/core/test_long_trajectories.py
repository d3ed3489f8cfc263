"""Long trajectories open at once (issue 29): building an episode costs in proportion to its steps.

Every step of a log of another format used to convert and serialise its whole prompt (every
earlier message) when the episode was opened, so the work grew with the square of the steps and a
2,000-step mini-swe-agent run needed over 14 GB. These tests count the work and bound the memory
instead of timing anything.
"""

from __future__ import annotations

import itertools
import json
import operator
import pickle
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

import replay_tui.episodes.model
import replay_tui.sources
from replay_tui.env import replay_steps
from replay_tui.episodes.model import Trajectory
from replay_tui.formats import read_trajectories
from replay_tui.sources import open_sources

OUTPUT = "\n".join(f"src/module_{n}.py:{n}: def function_{n}(self, value): return value" for n in range(60))


def mini_run(path: Path, steps: int) -> Path:
    """A mini-swe-agent run (``trajectory_format`` mini-swe-agent-1.1) of ``steps`` tool calls,
    each answered by a ~4 KB observation: the shape mini's ``DefaultAgent.save`` writes."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer shell."},
        {"role": "user", "content": "<pr_description>\nFix the off-by-one error in the tokenizer.\n</pr_description>"},
    ]
    for n in range(steps):
        call_id = f"call_{n:05d}"
        command = f"grep -rn token src/module_{n % 97}.py"
        messages.append(
            {
                "role": "assistant",
                "content": f"THOUGHT: step {n}, look at the tokenizer again.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
                    }
                ],
                "extra": {"actions": [{"command": command, "tool_call_id": call_id}], "cost": 0.01},
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": f"<returncode>0</returncode>\n{OUTPUT}"})
    document = {
        "info": {"mini_version": "2.4.6", "exit_status": "LimitsExceeded", "submission": ""},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
    }
    path.write_bytes(orjson.dumps(document))
    return path


class Counting:
    """``orjson`` for the modules that build prompts, counting what ``dumps`` builds."""

    def __init__(self) -> None:
        self.calls = 0
        self.bytes = 0

    def dumps(self, value: Any, *args: Any, **kwargs: Any) -> bytes:
        made = orjson.dumps(value, *args, **kwargs)
        self.calls += 1
        self.bytes += len(made)
        return made

    def __getattr__(self, name: str) -> Any:
        return getattr(orjson, name)


def _work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: int, *, every_prompt: bool) -> Counting:
    path = mini_run(tmp_path / f"run_{steps}.traj.json", steps)
    counting = Counting()
    monkeypatch.setattr(replay_tui.sources, "orjson", counting)
    monkeypatch.setattr(replay_tui.episodes.model, "orjson", counting)
    demos = open_sources([path])
    replayed = replay_steps(demos.trajectory(demos.session_ids[0]))
    assert len(replayed) == steps and all(step.call for step in replayed)
    first = replayed[0].recorded  # what the stepper and a policy read of the step shown first
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    if every_prompt:  # every step's prompt in the request shape (what a teacher-forced replay sends)
        sent = [step.source.messages for step in replayed]
        assert [len(messages) for messages in sent] == [2 + 2 * n for n in range(steps)]
        assert sent[-1][-1]["tool_call_id"] == f"call_{steps - 2:05d}"
    return counting


def test_opening_an_episode_serialises_in_proportion_to_its_steps(tmp_path, monkeypatch) -> None:
    small = _work(tmp_path, monkeypatch, 100, every_prompt=False)
    large = _work(tmp_path, monkeypatch, 400, every_prompt=False)
    # opening builds no prompt text: at most the first step's, and each call's arguments once
    assert large.bytes <= 4 * small.bytes + 10_000
    assert large.calls <= 4 * small.calls + 10


def test_every_prompt_of_a_run_converts_each_message_once(tmp_path, monkeypatch) -> None:
    small = _work(tmp_path, monkeypatch, 100, every_prompt=True)
    large = _work(tmp_path, monkeypatch, 400, every_prompt=True)
    assert small.calls <= 4 * 100  # a few per recorded call (its text, its arguments), not per step x call
    assert large.calls <= 4 * small.calls + 10


def test_a_shared_prompt_is_the_prompt_built_alone(tmp_path) -> None:
    from replay_tui.episodes.model import openai_messages

    demos = open_sources([mini_run(tmp_path / "run.traj.json", 30)])
    episode = demos.trajectory(0)
    replayed = replay_steps(episode)
    for step in reversed(replayed):  # the last step first: the earlier ones are slices of it
        alone = openai_messages(episode.steps[step.index].messages)
        assert step.recorded["messages"] == alone
        assert step.llm_prompt == orjson.dumps(alone).decode()
    copy = pickle.loads(pickle.dumps(episode))  # a copy of the episode builds the same prompts
    assert [s.recorded["messages"] for s in replay_steps(copy)] == [s.recorded["messages"] for s in replayed]


LIMIT = 1024 * 1024 * 1024
"""Address space for the child that opens a 2,000-step run (about 9 MB of JSON): the fixed cost of
the interpreter and its libraries, with room to spare; opening it quadratically needed over 14 GB."""

CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from replay_tui.env import replay_steps
from replay_tui.sources import open_sources
demos = open_sources([sys.argv[1]])
steps = replay_steps(demos.trajectory(demos.session_ids[0]))
first, last = steps[0].recorded, steps[-1].recorded
print(len(steps), len(first["messages"]), len(last["messages"]))
"""


@pytest.mark.skipif(not hasattr(resource, "RLIMIT_AS"), reason="no RLIMIT_AS on this platform")
def test_a_2000_step_run_opens_within_a_bounded_address_space(tmp_path) -> None:
    path = mini_run(tmp_path / "run.traj.json", 2000)
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(limit=LIMIT), str(path)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["2000", "2", str(2 + 2 * 1999)]


def _read_mini_traced(path: Path, messages: list[dict[str, Any]]) -> tuple[list[Trajectory], int]:
    """A mini 2 run of ``messages`` written to ``path`` and read whole: its episodes and the read's peak
    traced memory (bytes)."""
    document = {"info": {"mini_version": "2.4.6", "exit_status": "LimitsExceeded"}, "messages": messages}
    path.write_bytes(orjson.dumps({**document, "trajectory_format": "mini-swe-agent-1.1"}))
    tracemalloc.start()
    try:
        episodes = [t for t in read_trajectories(path) if isinstance(t, Trajectory)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return episodes, peak


def test_a_run_of_rejected_turns_shares_its_messages(tmp_path) -> None:
    """mini 2 records a turn it rejected (two bash blocks) only in its format error: each such step's
    prompt is a view of the run's one list of messages, not a copy of every earlier message (a copy
    per step made a run of many rejected turns quadratic in memory)."""
    turns = 3000
    block = "```mswea_bash_command\nls\n```"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": f"Please solve this issue: fix it.\n{block}"},
    ]
    for n in range(turns):  # a rejected turn, then one that ran: a model that keeps writing two blocks
        error = {"interrupt_type": "FormatError", "n_actions": 2, "model_response": f"THOUGHT: {n}\n{block}\n{block}"}
        messages.append(
            {"role": "user", "content": "Format error: expected exactly 1 action, found 2.", "extra": error}
        )
        messages.append({"role": "assistant", "content": f"THOUGHT: one block.\n{block}"})
        messages.append({"role": "user", "content": "<returncode>0</returncode>\n<output>\na.txt\n</output>"})
    episodes, peak = _read_mini_traced(tmp_path / "rejected.traj.json", messages)
    rejected = episodes[0].steps[::2]
    assert len(rejected) == turns and all(step.action is None for step in rejected)
    assert [len(step.messages) for step in rejected] == [2 + 3 * n for n in range(turns)]
    assert [m.content for m in rejected[-1].messages] == [m["content"] for m in messages[:-3]]
    # a copy per rejected turn: ~108 MB of lists for 3,000 (8 bytes a message, 13.5 M messages)
    assert peak < 40 * 2**20


def test_a_model_rejected_turn_after_turn_costs_in_proportion_to_its_turns(tmp_path) -> None:
    """A mini 2 model that keeps writing two blocks leaves only format errors, one after another:
    each rejected turn's observation is the format error before it (what answered the previous
    turn), not every earlier one joined again (quadratic: 3,000 turns built ~250 MB of text)."""
    turns = 3000
    block = "```mswea_bash_command\nls\n```"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": f"Please solve this issue: fix it.\n{block}"},
    ]
    for n in range(turns):
        error = {"interrupt_type": "FormatError", "n_actions": 2, "model_response": f"THOUGHT: {n}\n{block}\n{block}"}
        content = f"Format error {n}: expected exactly 1 action, found 2."
        messages.append({"role": "user", "content": content, "extra": error})
    episodes, peak = _read_mini_traced(tmp_path / "stuck.traj.json", messages)
    steps = episodes[0].steps
    assert len(steps) == turns and all(step.action is None for step in steps)
    assert steps[0].observation == messages[1]["content"]  # the task: all the first turn saw
    assert [step.observation for step in steps[1:]] == [
        f"Format error {n}: expected exactly 1 action, found 2." for n in range(turns - 1)
    ]
    assert [step.tool_result for step in steps[:2]] == [messages[2]["content"], messages[3]["content"]]
    assert [len(step.messages) for step in steps] == [2 + n for n in range(turns)]
    assert peak < 40 * 2**20


def test_a_search_finds_a_prompt_message_once_at_the_first_step_sent_it(tmp_path) -> None:
    from replay_tui.search import search

    demos = open_sources([mini_run(tmp_path / "run.traj.json", 300)])
    hits = [hit for found in search(demos, "off-by-one") for hit in found.hits]
    assert [(hit.field, hit.step) for hit in hits] == [("task", "task"), ("observation", "0"), ("messages", "0")]
    later = [hit for found in search(demos, "step 7, look") for hit in found.hits]
    assert [(hit.field, hit.step) for hit in later] == [("action", "7"), ("messages", "8")]  # sent with step 8


FORMATS = Path(__file__).parents[1] / "data" / "formats"
SAMPLES = sorted(
    path for folder in FORMATS.iterdir() if folder.is_dir() for path in folder.iterdir() if path.name != "PROVENANCE.md"
)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lazy_prompts_are_the_eager_ones_on_every_sample(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every step's messages (a view of the conversation's shared messages) are, after the whole log
    is read, what a copy made when the step was read held; every step's prompt in the request shape,
    asked last step first and then in order through the episode's shared conversation, is the one
    converted alone from those messages; and a prefix told from two views' ranges is one by identity."""
    from replay_tui.episodes.model import MessageView, added_messages, openai_messages
    from replay_tui.formats.webshop_demos import is_seed
    from replay_tui.sources import log_decisions

    made: list[tuple[MessageView[Any], list[Any]]] = []
    init = MessageView.__init__

    def copying(self: MessageView[Any], pool: Any, ranges: Any = None) -> None:
        init(self, pool, ranges)
        made.append((self, list(self)))  # the eager build: a copy, as readers made before views

    monkeypatch.setattr(MessageView, "__init__", copying)
    try:
        demos = open_sources(path, allow_pickle=True)
    except Exception as exc:  # a sample another test shows to be refused
        pytest.skip(f"not opened: {exc}")
    for session_id in demos.session_ids:
        if demos.problem_for(session_id) is not None:
            continue
        source = demos.trajectory(session_id)
        if is_seed(source):
            continue
        entries = [decision for _, decision in log_decisions(source)]
        eager = {id(entry): openai_messages(list(entry.step.messages)) for entry in entries}
        for entry in [*reversed(entries), *entries]:
            assert entry.messages == eager[id(entry)], f"{session_id} step {entry.step.label}"
        for before, after in itertools.pairwise(source.steps):
            if added_messages(after.messages, before.messages) is not None:
                assert len(before.messages) <= len(after.messages)
                assert all(map(operator.is_, before.messages, after.messages))
    for view, copy in made:
        assert len(view) == len(copy) and all(map(operator.is_, view, copy))
