"""Episode files of every format behind one EpisodeSet: the seed's demo files and any reader's logs.

A log of another format joins the set through :class:`TrajectoryFile`, which indexes it with its
reader; every episode, a seed file's too, is read as its
:class:`~replay_tui.episodes.model.Trajectory` (:func:`trajectory_of`, :func:`read_trajectory`):
the views show it, and a replay reads its steps (:func:`replay_tui.env.replay_steps`) as this
module reads a log's decisions (:func:`log_decisions`, :func:`decision_fields`):

- a step with a recorded tool call is a decision whose expected action is the call's canonical
  text (``name({"a": 1})``, judged by :func:`replay_tui.matching.judge_call`), whose state is the
  tool's name (so ``--match TOOL=POLICY`` sets per-tool policies and reports give accuracy by
  tool), and which carries the prompt as chat messages (built when the step is replayed:
  :class:`StepPrompts`) and the tool schemas (recorded, else inferred from the recorded calls) for
  teacher-forced re-prediction;
- WebShop session logs keep WebShop actions (``search[...]``, ``click[...]``) and pages as states,
  so every WebShop feature works on them;
- a step whose decision is a plain answer (a QA or multiple-choice reply, no tool call in the
  episode) is a decision whose expected action is the answer, state ``answer``, judged by
  :func:`replay_tui.matching.judge_answer` and re-asked with its prompt and no tools;
- any other step without a call (a final answer, a message to the user) is shown but not replayed.

Session ids of such episodes are their positions in the set (the log's own id is
``EpisodeRef.episode_id`` and ``Trajectory.id``): ids from different formats need not be
integers, nor unique across files.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from replay_tui.episodes.collection import EpisodeRef, EpisodeSet, Grown, resolve_demo_paths
from replay_tui.episodes.model import (
    ChatMessage,
    OpenAIConversation,
    Outcome,
    Trajectory,
    TrajectoryStep,
    added_messages,
    infer_tools,
    openai_messages,
    seed_success,
    webshop_outcome,
)
from replay_tui.episodes.problems import DemoFileError, EpisodeLoadError, LoadProblem
from replay_tui.episodes.reading import FastReading
from replay_tui.formats import EpisodeSummary, FormatError, IndexingReader, Reader, allowing_pickles, detect, reader_for
from replay_tui.formats.growing import FollowedFile, FollowingReader, Gone
from replay_tui.formats.webshop_demos import READER, SEED_STEP_FIELDS, DemoFile, completed_by_backup, is_seed
from replay_tui.gcpause import gc_paused, gc_tick
from replay_tui.matching import ANSWER_STATE

SEED_FORMAT = READER.name
WEBSHOP_FORMATS = frozenset({SEED_FORMAT, "webshop-human"})
"""Formats whose actions are WebShop env actions, judged (and replayed) as the seed's are."""
LOG_SUFFIXES = (".json", ".jsonl", ".eval", ".traj", ".yaml", ".yml", ".gz")
"""Files a directory given as ``--demos`` contributes (besides BrowserGym experiment folders)."""


def is_call_judged(fmt: str) -> bool:
    """True when steps of ``fmt`` are judged as tool calls (name + typed arguments)."""
    return fmt not in WEBSHOP_FORMATS


def tools_by_name(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tool specs (``{"name", "description", "parameters"}``) by name, from OpenAI ``tools`` entries or bare specs."""
    found = {}
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        spec = function if isinstance(function, dict) else tool
        name = spec.get("name") if isinstance(spec, dict) else None
        if isinstance(name, str):
            found[name] = spec
    return found


class StepPrompts:
    """The prompts of one trajectory's steps in the chat-completions shape, converted once and shared.

    A step's prompt is the one before it plus a few messages: building each from scratch (and
    serialising it) made opening an episode quadratic in its length (a 2,000-step mini-swe-agent run
    took over 14 GB). Readers give each step a prefix of one list of messages, so a step's prompt is
    a slice of one :class:`~replay_tui.episodes.model.OpenAIConversation`, converted as far as the
    furthest step asked; a step whose messages are not such a prefix gets its own."""

    def __init__(self) -> None:
        self._seen: Sequence[ChatMessage] = []
        self._conversation = OpenAIConversation()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:  # an episode pickles (a copy, a worker process) without its lock
        return {"_seen": self._seen, "_conversation": self._conversation}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def of(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        """``messages`` in the request shape (:func:`~replay_tui.episodes.model.openai_messages`); the
        dicts are shared with the other steps' prompts (read-only). Views of one pool
        (:class:`~replay_tui.episodes.model.MessageView`) are told prefixes of each other from their
        ranges, so a step costs what its prompt adds, not its length."""
        with self._lock:
            seen = self._seen
            if len(messages) <= len(seen):
                if added_messages(seen, messages) is None:
                    return openai_messages(messages)
            else:
                added = added_messages(messages, seen)
                if added is None:
                    return openai_messages(messages)
                self._conversation.extend(added)
                self._seen = messages
            return self._conversation.sent[: len(messages)]


RECORDED_KEYS = (
    *SEED_STEP_FIELDS,
    "format",
    "step_label",
    "action_text",
    "content",
    "tool_call",
    "tools",
    "tools_inferred",
    "log_state",
    "answer",
    "answer_type",
)
"""The keys of a log's ``recorded_step`` (:func:`decision_fields`), in their order: the seed decision
step's (a user API: what policies always received), then what a log of another format adds
(``format``, the log's ``step_label``, ``action_text`` and ``content``; ``tool_call`` with the
``tools`` offered, recorded or ``tools_inferred``; the log's own ``log_state``; a plain ``answer``
and its ``answer_type``)."""


def offered_tools(trajectory: Trajectory) -> list[dict[str, Any]] | None:
    """The tool schemas inferred from the recorded calls of a tool-calling log that recorded none
    (:func:`~replay_tui.episodes.model.infer_tools`); None when its steps record their own, or its
    steps are WebShop actions."""
    if not is_call_judged(trajectory.format) or any(step.tools for step in trajectory.steps):
        return None
    return infer_tools([step.action for step in trajectory.steps if step.action is not None])


def is_decision(step: TrajectoryStep) -> bool:
    """True for a step a replay judges: a recorded tool call, or a recorded plain answer."""
    return step.action is not None or (step.answer is not None and bool(step.answer.strip()))


def decision_fields(step: TrajectoryStep, fmt: str, inferred: list[dict[str, Any]] | None) -> dict[str, Any]:
    """A log's decision step (:func:`is_decision`) in the recorded-step shape: the seed's keys
    (what the policies receive as ``recorded_step``, ``llm_prompt`` aside) then the log's own, the
    keys of :data:`RECORDED_KEYS` in their order. ``inferred``: :func:`offered_tools`."""
    base = {
        "step_number": step.index,
        "observation_before_llm": step.observation,
        "llm_prompt": None,
        "llm_thinking": step.thinking or None,
    }
    log = {"format": fmt, "step_label": step.label, "content": step.content}
    reward = step.reward if step.reward is not None else 0.0
    outcome = {"observation_after_action": step.tool_result or "", "reward": reward, "done": step.done}
    call = step.action
    if call is None:  # a plain answer (a QA or multiple-choice reply): the answer is the expected action
        answer = step.answer or ""
        fields = {
            **base,
            "llm_action_name": "",
            "llm_action_arguments": {},
            "state": ANSWER_STATE,
            "available_actions": [],
            "action_executed_in_env": answer,
            **outcome,
            **log,
            "action_text": answer,
            "tool_call": False,
            "tools": [],
            "tools_inferred": False,
            "log_state": step.state,
            "answer": True,
            "answer_type": step.answer_type,
        }
        return {key: fields[key] for key in RECORDED_KEYS}
    fields = {**base, "llm_action_name": call.name, "llm_action_arguments": dict(call.arguments)}
    if is_call_judged(fmt):
        tools = step.tools or inferred or []
        fields.update(
            state=call.name,
            available_actions=list(tools_by_name(tools)),
            action_executed_in_env=call.display(),
            **outcome,
            **log,
            action_text=step.action_text,
            tool_call=True,
            tools=tools,
            tools_inferred=not step.tools and bool(inferred),
            log_state=step.state,
        )
    else:
        fields.update(
            state=step.state,
            available_actions=step.available_actions,
            action_executed_in_env=step.action_text or None,
            **outcome,
            **log,
            action_text=step.action_text,
            tool_call=False,
            tools=[],
            tools_inferred=False,
            log_state=None,
        )
    fields.update(answer=False, answer_type=None)
    return {key: fields[key] for key in RECORDED_KEYS}


class LogDecision:
    """A log's decision step (:func:`is_decision`) as a replay reads it: the Trajectory's step, its
    recorded-step fields (:func:`decision_fields`) and the episode's shared prompts."""

    __slots__ = ("fields", "prompts", "step")

    def __init__(self, step: TrajectoryStep, fields: dict[str, Any], prompts: StepPrompts) -> None:
        self.step = step
        self.fields = fields
        self.prompts = prompts

    @property
    def tool_call(self) -> bool:
        """Judged as a tool call (name + typed arguments), not as a WebShop action."""
        return bool(self.fields["tool_call"])

    @property
    def answer(self) -> bool:
        """A plain answer (no tool call), judged by :func:`replay_tui.matching.judge_answer`."""
        return bool(self.fields["answer"])

    @property
    def llm_action_name(self) -> str:
        return str(self.fields["llm_action_name"])

    @property
    def llm_action_arguments(self) -> dict[str, Any]:
        arguments: dict[str, Any] = self.fields["llm_action_arguments"]
        return arguments

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The prompt in the chat-completions shape, ready to send again (shared dicts: read-only)."""
        return self.prompts.of(self.step.messages) if self.step.messages else []

    def prompt_text(self) -> str | None:
        """The prompt as JSON text (what ``llm_prompt`` holds for a seed step), built on demand."""
        messages = self.messages
        return orjson.dumps(messages).decode() if messages else None


def log_decisions(trajectory: Trajectory) -> Iterator[tuple[int, LogDecision]]:
    """The decision steps of a log of another format, each with its position among the steps."""
    inferred = offered_tools(trajectory)
    prompts = StepPrompts()
    for position, step in enumerate(trajectory.steps):
        if is_decision(step):
            yield position, LogDecision(step, decision_fields(step, trajectory.format, inferred), prompts)


def seed_outcome(
    final_reward: float | None, success: bool | None, completed_by_backup: bool = False, entries: Iterable[Any] = ()
) -> Outcome:
    """The outcome a seed demonstration file records: its reward, its success flag, whether the
    backup agent had to finish the task, and (given its trajectory ``entries``) the item bought
    (:func:`~replay_tui.episodes.model.webshop_outcome`, the one mapping the seed's reader uses too)."""
    return webshop_outcome(final_reward, success, completed_by_backup, entries)


def outcome_of(episode: Trajectory | FastReading) -> Outcome:
    """What ``episode``'s log says of its task (:class:`~replay_tui.episodes.model.Outcome`), for any
    format: a Trajectory's own, or what a seed episode's fast reading records, decided as the seed
    reader's Trajectory decides it."""
    if isinstance(episode, Trajectory):
        return episode.outcome
    success = seed_success(episode.final_reward, episode.success)
    return seed_outcome(episode.final_reward, success, episode.completed_by_backup, episode.trajectory)


@dataclass(frozen=True, slots=True)
class EpisodeFacts:
    """What a replay's reports say of the episode replayed, besides its steps: the same from a seed
    episode's fast reading as from its Trajectory (:func:`facts_of`)."""

    instruction: str
    episode_id: str | None
    """The episode's id in a log of another format; None for a seed demo (its session id says it)."""
    completed_by_backup: bool
    reward: float
    """The recorded final reward, else the last non-zero reward of its steps (0.0)."""
    succeeded: bool
    """The recorded success flag, else LASER's definition on :attr:`reward` (1.0)."""
    outcome: Outcome
    trajectory: Trajectory | None
    """The episode as the one model (None for a fast reading): its reference actions, when the log
    has them, are aligned with the replay's predictions."""


def facts_of(episode: Trajectory | FastReading) -> EpisodeFacts:
    """:class:`EpisodeFacts` of the episode a replay read (:meth:`EpisodeSet.replay_episode`)."""
    if not isinstance(episode, Trajectory):
        return EpisodeFacts(
            instruction=episode.instruction,
            episode_id=None,
            completed_by_backup=episode.completed_by_backup,
            reward=episode.reward,
            succeeded=episode.succeeded,
            outcome=outcome_of(episode),
            trajectory=None,
        )
    if is_seed(episode):
        final_reward, success = episode.extra.get("final_reward"), episode.extra.get("success")
        backup = completed_by_backup(episode)
        rewards = (s.extra.get("reward") if s.kind == "event" else s.reward for s in reversed(episode.steps))
        episode_id = None
    else:
        final_reward, success = episode.outcome.reward, episode.outcome.success
        backup = False
        rewards = (s.reward for s in reversed(episode.steps) if is_decision(s))
        episode_id = episode.id
    if isinstance(final_reward, (int, float)) and not isinstance(final_reward, bool):
        reward = float(final_reward)
    else:
        reward = next((float(value) for value in rewards if isinstance(value, (int, float)) and value), 0.0)
    succeeded = success if isinstance(success, bool) else reward == 1.0
    return EpisodeFacts(
        instruction=episode.task,
        episode_id=episode_id,
        completed_by_backup=backup,
        reward=reward,
        succeeded=succeeded,
        outcome=episode.outcome,
        trajectory=episode,
    )


def outcome_of_ref(ref: EpisodeRef) -> Outcome:
    """The outcome of an episode not yet opened: the reader's whole outcome when it indexed one,
    else what a seed demo's header holds (its reward, and its success decided as the seed reader's
    Trajectory decides it: :func:`~replay_tui.episodes.model.seed_success`)."""
    summary = ref.summary
    if (outcome := summary.full_outcome()) is not None:
        return outcome
    return seed_outcome(summary.reward, seed_success(summary.reward, summary.success), ref.completed_by_backup)


class TrajectoryFile:
    """A log of another format, indexed so a EpisodeSet holds it like a seed demo file.

    With an :class:`IndexingReader` only the summaries are kept and each episode is loaded when
    opened; other readers' files (small by nature: one run, one result file) are read whole once.
    Session ids are ``first_id``, ``first_id + 1``... in file order.
    """

    def _start(self, path: str | os.PathLike[str], reader: Reader) -> None:
        """The fields every kind of log file starts with, before it reads anything (its subclasses
        read otherwise: followed as it grows, or indexed progressively)."""
        self.path = Path(path)
        self.name = str(path)
        self.reader = reader
        self.format = reader.name
        self.episodes: list[EpisodeRef] = []
        self.problems: list[LoadProblem] = []
        self.error: str | None = None
        self._held: dict[int, Trajectory] = {}

    def __init__(self, path: str | os.PathLike[str], reader: Reader, first_id: int = 0):
        self._start(path, reader)
        next_id = first_id
        # an index allocates much and makes no cycles: the collector's passes over the growing
        # summaries were a third of a 100,000-sample .eval's index, and untenured, the first full
        # collection after it (opening an episode) took 0.5 s (see replay_tui.gcpause)
        try:
            with gc_paused():
                if isinstance(reader, IndexingReader):
                    for item in reader.index(self.path):
                        gc_tick()
                        if isinstance(item, LoadProblem):
                            self.problems.append(item)
                        else:
                            self._add(item, next_id)
                            next_id += 1
                else:
                    for record, found in enumerate(reader.read(self.path)):
                        gc_tick()
                        if isinstance(found, LoadProblem):
                            self.problems.append(found)
                            continue
                        summary = EpisodeSummary.of(found, record, record)
                        self._held[record] = found
                        self._add(summary, next_id)
                        next_id += 1
        except Exception as exc:  # a reader must never take the set down; what it found stays
            self.problems.append(LoadProblem(file=self.name, message=f"{self.format} reader failed: {exc}"))

    def _add(self, summary: EpisodeSummary, session_id: int) -> EpisodeRef:
        ref = EpisodeRef(
            file=self, index=summary.record, raw=summary, summary=summary, session_id=session_id, episode_id=summary.id
        )
        self.episodes.append(ref)
        return ref

    def read_trajectory(self, ref: EpisodeRef, *, fast: bool = True) -> Trajectory:
        """The episode as its reader gives it (held, or loaded now); raises EpisodeLoadError. (A log
        of another format has no fast reading: ``fast`` is the seed file's.)"""
        summary = ref.summary
        trajectory: Trajectory | LoadProblem | None = self._held.get(summary.record)
        if trajectory is None:
            if not isinstance(self.reader, IndexingReader):
                raise EpisodeLoadError(LoadProblem(file=self.name, index=summary.record, message="episode is gone"))
            try:
                trajectory = self.reader.load(self.path, summary)
            except Exception as exc:
                trajectory = LoadProblem(
                    file=self.name, index=summary.record, session_id=summary.id, message=f"cannot read: {exc}"
                )
        if isinstance(trajectory, LoadProblem):
            raise EpisodeLoadError(trajectory)
        return trajectory

    def read_fast(self, ref: EpisodeRef) -> None:
        """None: an episode of another format is replayed from its Trajectory."""
        return None

    def close(self) -> None:
        self.episodes.clear()
        self._held.clear()


class FollowedLog(TrajectoryFile):
    """A JSON Lines log of another format, or a Claude Code / Codex folder of them, followed as it
    grows (``--follow``).

    Each file is read from where the last look stopped (:class:`~replay_tui.formats.growing.FollowedFile`:
    Claude Code and Codex go on from their reading state; other readers read that one file again).
    An episode keeps its session id while it grows (it is known by its file, its id in the log and
    the how-manieth episode of that id it is); new episodes (a sub-agent, a trace, a session file
    new in a followed folder) get the next free ids. A file truncated, replaced or gone is one
    problem; its episodes stay and the others are followed on."""

    def __init__(self, path: str | os.PathLike[str], reader: Reader, first_id: int = 0):
        self._start(path, reader)
        self._files: dict[Path, FollowedFile] = {}
        self._stopped: list[LoadProblem] = []
        self._dropped: set[Path] = set()
        self._file_problems: dict[Path, list[LoadProblem]] = {}
        self._by_key: dict[tuple[Path, str, int], EpisodeRef] = {}
        self._prints: dict[int, tuple[Any, ...]] = {}
        self._watching = True
        self.read_grown(first_id)

    @staticmethod
    def can_follow(path: Path, reader: Reader) -> bool:
        """A JSON Lines file (``.jsonl``, or any session file of a reader that follows), or the
        folder of session files of a reader that follows."""
        if path.is_dir():
            return isinstance(reader, FollowingReader)
        return isinstance(reader, FollowingReader) or path.suffix.lower() == ".jsonl"

    @property
    def following(self) -> bool:
        return self._watching

    def read_grown(self, first_id: int) -> Grown:
        grown = Grown()
        paths = [self.path]
        if self.path.is_dir():
            assert isinstance(self.reader, FollowingReader)
            try:
                paths = self.reader.session_files(self.path)
            except OSError:
                paths = list(self._files)
        for path in paths:
            if path not in self._files and path not in self._dropped:
                self._files[path] = FollowedFile(path, self.reader)
        for path, followed in list(self._files.items()):
            try:
                if not followed.read():
                    continue
            except Exception as exc:  # gone, unreadable, or a reader that failed: never the set down
                del self._files[path]
                self._dropped.add(path)
                if isinstance(exc, OSError):
                    reason = f"cannot be read any more ({exc.strerror or exc})"
                else:
                    reason = str(exc) if isinstance(exc, Gone) else f"{self.format} reader failed: {exc}"
                stopped = LoadProblem(
                    file=str(path),
                    message=f"{reason}; following stopped, the episodes read so far stay: reopen it to read it again",
                )
                self._stopped.append(stopped)
                grown.problems.append(stopped)
                if not self.path.is_dir():
                    self._watching = False
                continue
            self._take(path, followed.items, first_id, grown)
        self.problems = [*(p for found in self._file_problems.values() for p in found), *self._stopped]
        return grown

    def _take(self, path: Path, items: list[Any], first_id: int, grown: Grown) -> None:
        """The file's episodes and problems as they stand now, against those it had."""
        seen: dict[str, int] = {}
        problems: list[LoadProblem] = []
        for item in items:
            if isinstance(item, LoadProblem):
                problems.append(item)
                continue
            nth = seen[item.id] = seen.get(item.id, -1) + 1
            key = (path, item.id, nth)
            ref = self._by_key.get(key)
            mark = _fingerprint(item)
            if ref is None:
                record = len(self._held)
                self._held[record] = item
                self._prints[record] = mark
                ref = self._add(EpisodeSummary.of(item, record, record), first_id + len(grown.added))
                self._by_key[key] = ref
                grown.added.append(ref)
            elif self._prints[ref.index] != mark:
                self._held[ref.index], self._prints[ref.index] = item, mark
                summary = EpisodeSummary.of(item, ref.index, ref.index)
                ref.raw = ref.summary = summary
                ref.episode_id = summary.id
                grown.changed.append(ref)
        before = self._file_problems.get(path, [])
        kept = [next((old for old in before if old == problem), problem) for problem in problems]
        grown.problems += [problem for problem in kept if not any(problem is old for old in before)]
        grown.gone += [old for old in before if not any(old is problem for problem in kept)]
        self._file_problems[path] = kept

    def read_trajectory(self, ref: EpisodeRef, *, fast: bool = True) -> Trajectory:
        trajectory = self._held.get(ref.index)
        if trajectory is None:
            raise EpisodeLoadError(LoadProblem(file=self.name, index=ref.index, message="episode is gone"))
        return trajectory


def read_trajectory(ref: EpisodeRef) -> Trajectory:
    """The episode ``ref`` names as the one model, read from its file (not through the EpisodeSet's
    cache): a log's as its reader gives it, a seed demo file's from its fast reading or its parsed
    model (its invalid optional fields read as their defaults, as the app reads them). Raises
    EpisodeLoadError naming the episode's problem."""
    return ref.file.read_trajectory(ref)


def trajectory_of(demos: EpisodeSet, session_id: int) -> Trajectory:
    """The opened episode ``session_id`` as the one model, through the EpisodeSet's cache (what the
    app, the MCP server and the engines read). Raises EpisodeLoadError, KeyError as
    :meth:`EpisodeSet.trajectory` does."""
    return demos.trajectory(session_id)


def field_problems(demos: EpisodeSet, session_id: int) -> list[LoadProblem]:
    """The invalid fields of the opened episode's steps, each read as its default (a seed file's,
    under ``trajectory[N]``: step N of its Trajectory); none for other logs. Raises as
    :func:`trajectory_of` does."""
    return list(demos.trajectory(session_id).problems)


def shown_as_decision(trajectory: Trajectory, step: TrajectoryStep) -> bool:
    """True for a step the stepper lists as a decision (not a sub-event or a note): a seed file's
    ``decision`` step, or another log's recorded call or answer (:func:`is_decision`)."""
    return step.kind == "decision" if is_seed(trajectory) else is_decision(step)


def shown_as_pages(trajectory: Trajectory) -> bool:
    """True for an episode whose steps are the seed's WebShop pages and their sub-events: the stepper
    shows a step's page, prompt and thinking with the action in the list, and the title its reward as
    the browser's row does (another log's steps show the log's own fields and outcome)."""
    return is_seed(trajectory)


def listed_as_pages(refs: Iterable[EpisodeRef]) -> bool:
    """True when every episode is a seed demo: the browser lists them in the seed's own columns."""
    return all(ref.format == SEED_FORMAT for ref in refs)


def records_backup(ref: EpisodeRef) -> bool:
    """True for an episode whose log says whether a backup agent finished it (the seed's demos)."""
    return ref.format == SEED_FORMAT


def records_ending(ref: EpisodeRef) -> bool:
    """True for an episode whose log can say it errored or hit a limit (not the seed's demos: their
    header holds a reward and a success only), so the browser asks no other row whether it did."""
    return ref.format != SEED_FORMAT


def listed_reward(ref: EpisodeRef) -> float | None:
    """The reward a row shows and sorts by: a seed demo's missing reward is its contract's 0, another
    log's missing score stays missing."""
    if ref.reward is None and ref.format == SEED_FORMAT:
        return 0.0
    return ref.reward


def listed_outcome(ref: EpisodeRef) -> tuple[str, str, bool]:
    """(kind, reason, hit a limit) of an episode not yet opened, as the browser filters and sorts by it:
    a seed demo's from its header alone, decided as its Trajectory's is (:func:`seed_success`; no
    Outcome built for each of a big file's rows), another log's from :func:`outcome_of_ref`."""
    if ref.format == SEED_FORMAT:
        return ("succeeded" if seed_success(ref.reward, ref.success) else "failed"), "", False
    outcome = outcome_of_ref(ref)
    return outcome.kind, outcome.reason, bool(outcome.hit_limit)


def note_kind(step: TrajectoryStep) -> str:
    """What a log's step without a recorded call is named in the step list: ``message`` when the
    model said something, else ``step``."""
    return "message" if step.content else "step"


FIRST_ROWS = 200
"""Episodes a progressive open (:func:`open_sources` with ``progressive``) indexes before it returns:
more than a screenful of the browser, so its first frame is full."""


class IndexingLog(TrajectoryFile):
    """An :class:`IndexingReader`'s log listed as its index goes (the app's progressive open).

    The first ``first`` summaries are indexed at open; a thread indexes the rest into a queue that
    :meth:`read_grown` (the ``--follow`` path of :meth:`EpisodeSet.read_new`) turns into episodes, so a
    1 GB log shows its first rows in the time its first rows take to index, not its whole index.
    Session ids go on from the set's next free id when they are taken (one file: its file order,
    as without ``progressive``). :attr:`following` is True until the queue is empty and the thread
    has ended; :attr:`indexed` counts the summaries the thread has found so far."""

    def __init__(self, path: str | os.PathLike[str], reader: Reader, first_id: int = 0, *, first: int = FIRST_ROWS):
        assert isinstance(reader, IndexingReader)
        self._start(path, reader)
        self._queue: list[EpisodeSummary | LoadProblem] = []
        self._queue_lock = threading.Lock()
        self._done = threading.Event()
        self._closed = False
        self.indexed = 0
        items = iter(reader.index(self.path))
        try:
            with gc_paused():
                while len(self.episodes) < first:
                    item = next(items, None)
                    if item is None:
                        self._done.set()
                        break
                    gc_tick()
                    if isinstance(item, LoadProblem):
                        self.problems.append(item)
                    else:
                        self._add(item, first_id + len(self.episodes))
        except Exception as exc:  # a reader must never take the set down; what it found stays
            self.problems.append(self._failed(exc))
            self._done.set()
        self.indexed = len(self.episodes)
        self._rest = items
        self._started = self._done.is_set()

    def start(self) -> None:
        """Index the rest in a thread, from now (the app starts it after its first frame: a thread
        started at open would take the GIL from the app's launch). Taking or waiting for the rest
        starts it too."""
        if not self._started:
            self._started = True
            thread = threading.Thread(target=self._index_rest, args=(self._rest,), name=f"index {self.path.name}")
            thread.daemon = True
            thread.start()

    def _failed(self, exc: Exception) -> LoadProblem:
        return LoadProblem(file=self.name, message=f"{self.format} reader failed: {exc}")

    def _index_rest(self, items: Iterator[EpisodeSummary | LoadProblem]) -> None:
        try:
            with gc_paused():
                for item in items:
                    gc_tick()
                    with self._queue_lock:
                        self._queue.append(item)
                        self.indexed += not isinstance(item, LoadProblem)
                    if self._closed:
                        return
        except Exception as exc:
            with self._queue_lock:
                self._queue.append(self._failed(exc))
        finally:
            self._done.set()

    @property
    def following(self) -> bool:
        """Summaries are still to come (the index goes on, or its last ones are not taken yet)."""
        return not self._done.is_set() or bool(self._queue)

    @property
    def indexing(self) -> bool:
        """The index is still going."""
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the index to end (True when it has)."""
        self.start()
        return self._done.wait(timeout)

    def read_grown(self, first_id: int) -> Grown:
        """The summaries indexed since the last look, as episodes from ``first_id`` on."""
        self.start()
        with self._queue_lock:
            items, self._queue = self._queue, []
        grown = Grown()
        for item in items:
            if isinstance(item, LoadProblem):
                self.problems.append(item)
                grown.problems.append(item)
            else:
                grown.added.append(self._add(item, first_id + len(grown.added)))
        return grown

    def close(self) -> None:
        self._closed = True
        super().close()


def _fingerprint(trajectory: Trajectory) -> tuple[Any, ...]:
    """What changes when a followed episode grows: its steps, their texts and results, its task
    and outcome (cheap: no prompt is compared)."""
    texts = sum(len(s.content) + len(s.thinking) + len(s.tool_result or "") for s in trajectory.steps)
    answered = sum(s.tool_result is not None for s in trajectory.steps)
    return (len(trajectory.steps), answered, texts, trajectory.task, trajectory.outcome.model_dump_json())


def _next_id(demos: EpisodeSet) -> int:
    return max(demos.by_session, default=-1) + 1


def _is_experiment_folder(path: Path) -> bool:
    """A folder a reader takes whole (a BrowserGym experiment or study, an OpenHands conversation,
    a tau2 experiment, a Claude Code project with its sub-agent files, a Codex ``sessions/YYYY/MM/DD``
    tree), not a folder of logs."""
    try:
        detect(path)
    except (ImportError, FormatError, OSError):
        return False
    return True


def _expand(spec: str | os.PathLike[str]) -> list[Path]:
    path = Path(spec)
    if path.is_dir():
        if _is_experiment_folder(path):
            return [path]
        try:
            found = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(LOG_SUFFIXES))
        except OSError as exc:
            raise DemoFileError(f"{spec}: cannot list the directory: {exc.strerror or exc}") from None
        if not found:
            raise DemoFileError(f"{spec}: directory holds no log files ({', '.join(LOG_SUFFIXES)})")
        return found
    return resolve_demo_paths([spec])


def expand_logs(spec: str | os.PathLike[str]) -> list[Path]:
    """The log files a spec names: itself, a folder's log files (a folder a reader takes whole stays
    one), or a glob's matches. DemoFileError (one line) when it names none."""
    return _expand(spec)


def _reader(path: Path, fmt: str | None, allow_pickle: bool) -> Reader | None:
    """The reader for ``path``: ``fmt``'s, else the detected one; None for the seed's own files
    (and for files no reader takes, whose DemoFile error is the most precise one we can give)."""
    if fmt is not None:
        reader = reader_for(fmt)
    else:
        try:
            reader, _ = detect(path)
        except FormatError:
            if path.is_dir():
                raise
            return None
    if reader.name == SEED_FORMAT:
        return None
    return allowing_pickles(reader) if allow_pickle else reader


def open_sources(
    specs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    *,
    fmt: str | None = None,
    allow_pickle: bool = False,
    skip_unreadable: bool = False,
    defer_scan: bool = False,
    follow: bool = False,
    progressive: bool = False,
) -> EpisodeSet:
    """Open log files of any format (paths, directories, globs) as one EpisodeSet.

    Each file's format is detected by content (``fmt`` forces one). Raises DemoFileError (one line)
    when a spec matches nothing or a file cannot be read at all, unless ``skip_unreadable``, which
    records it in :attr:`EpisodeSet.unreadable` and opens the rest. FormatError for an unknown ``fmt``.
    ``defer_scan``: a clean demo file is browsable before its depth scan (see :class:`DemoFile`);
    what the scan finds is a problem of the episode when it is read, not at open. ``follow``: demo
    files in JSON Lines are read up to their last complete line and grow with
    :meth:`EpisodeSet.read_new`, and so do logs of other formats in JSON Lines and Claude Code / Codex
    session folders (:class:`FollowedLog`); other logs are read once (a warning says so).
    ``progressive`` (the app): a log whose reader indexes returns with its first rows indexed and
    the rest indexed by a thread (:class:`IndexingLog`), taken by :meth:`EpisodeSet.read_new`; the
    CLI's commands read the whole index.
    """
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    if fmt is not None:
        reader_for(fmt)  # an unknown name fails before any file is read
    demos = EpisodeSet()
    paths: list[Path] = []
    for spec in specs:
        try:
            paths.extend(p for p in _expand(spec) if p not in paths)
        except DemoFileError as exc:
            if not skip_unreadable:
                raise
            demos.add_unreadable(str(spec), str(exc))
    for path in paths:
        try:
            reader = _reader(path, fmt, allow_pickle)
            if reader is None:
                demos.add_file(DemoFile(path, defer_scan=defer_scan, follow=follow))
            elif follow and FollowedLog.can_follow(path, reader):
                demos.add_file(FollowedLog(path, reader, _next_id(demos)))
            elif progressive and isinstance(reader, IndexingReader):
                demos.add_file(IndexingLog(path, reader, _next_id(demos)))
            else:
                demos.add_file(TrajectoryFile(path, reader, _next_id(demos)))
                if follow:
                    message = (
                        f"not followed: this {reader.name} log is read once (JSON Lines logs and "
                        "Claude Code / Codex session folders are followed)"
                    )
                    demos.problems.append(LoadProblem(file=str(path), message=message, severity="warning"))
        except (DemoFileError, FormatError) as exc:
            if not skip_unreadable:
                raise DemoFileError(str(exc)) from None
            demos.add_unreadable(str(path), str(exc))
    return demos
