"""Find text in every step of the loaded episodes: the core of the TUI's search screen (no Textual).

A search yields, episode by episode, one :class:`SearchHit` per step and field that contains the
query (case-insensitive, as the stepper's find in panes), with a one-line snippet around the first
occurrence. The caller decides when to stop (a new query, a cap on results): it reads the
generator one episode at a time.

Big files: a seed demo's episode is first searched as raw JSON bytes (a zero-copy view of the
memory-mapped file), and only parsed when they contain the query's longest run of printable ASCII
characters JSON writes as they are (not quotes, backslashes, slashes, < > &): a match in the text has that
run in the bytes. (It assumes no writer escapes plain ASCII letters as ``\u0041``; none does.)

Long logs of other formats: a step's "messages" are the messages its prompt adds to the step
before it's, so a message is found once, at the first step that was sent it, and a search stays
linear in the steps.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from replay_tui.episodes.collection import EpisodeRef, EpisodeSet
from replay_tui.episodes.model import ChatMessage, Trajectory, TrajectoryStep, added_messages
from replay_tui.episodes.problems import EpisodeLoadError, LoadProblem
from replay_tui.sanitize import strip_control
from replay_tui.sources import read_trajectory

SNIPPET_BEFORE = 12
"""Characters of context kept before a match in a snippet (the rest follows it): few, so the match
itself shows in the results list's narrow column at 80 columns."""
SNIPPET_LENGTH = 160
_SPACES = re.compile(r"\s+")
_RAW_RUNS = re.compile(r"[ !#$%'()*+,\-.0-9:;=?@A-Z\[\]^_`a-z{|}~]+")
"""Runs of printable ASCII that every JSON writer keeps as they are: not " \\ / (escaped by some),
nor < > & (escaped by Go's encoder)."""


@dataclass(frozen=True, slots=True)
class SearchHit:
    """The query found in one field of one step: where (session, trajectory position, field) and a
    snippet with the first occurrence at ``snippet[start:end]``."""

    session_id: int
    position: int | None
    """The trajectory entry (the stepper's row); None for the episode's task."""
    step: str
    """How the step is named on screen: its label, ``↳ type`` for a sub-event, ``task``."""
    field: str
    """What was searched: observation, observation after, prompt, messages, thinking, action, task."""
    snippet: str
    start: int
    end: int
    count: int = 1
    """Occurrences of the query in the field."""

    @property
    def after(self) -> bool:
        """The stepper shows this field with the observation after the action (its ``o`` toggle)."""
        return self.field == "observation after"


@dataclass
class EpisodeHits:
    """What searching one episode gave: its hits, or the problem that kept it from being read."""

    session_id: int
    hits: list[SearchHit] = field(default_factory=list)
    problem: LoadProblem | None = None


def snippet(text: str, start: int, end: int) -> tuple[str, int, int]:
    """One line around ``text[start:end]``: whitespace collapsed, controls stripped, ``…`` where
    it was cut; returns it with the match's span in it."""
    lead = max(0, start - SNIPPET_BEFORE)
    tail = min(len(text), end + max(0, SNIPPET_LENGTH - SNIPPET_BEFORE - (end - start)))

    def flat(part: str) -> str:
        return _SPACES.sub(" ", strip_control(part))

    before = ("…" if lead else "") + flat(text[lead:start]).lstrip()
    match = flat(text[start:end])
    after = flat(text[end:tail]).rstrip() + ("…" if tail < len(text) else "")
    return before + match + after, len(before), len(before) + len(match)


class Query:
    """A case-insensitive literal query, compiled once for every field and episode."""

    def __init__(self, text: str):
        self.text = text
        self.pattern = re.compile(re.escape(text), re.IGNORECASE)
        run = max(_RAW_RUNS.findall(text), key=len, default="")
        self.raw = run.lower().encode() if run else None

    def maybe_in(self, ref: EpisodeRef) -> bool:
        """False when the episode's raw JSON cannot contain the query (nothing to parse then).
        Lowering the bytes and ``in`` scan ~1 GB/s; a case-insensitive regex over them, ~0.25."""
        if self.raw is None:
            return True
        try:
            view = memoryview(ref.raw)  # a seed demo's JSON; other formats' refs hold a summary
        except TypeError:
            return True
        return self.raw in bytes(view).lower()

    def hit(self, session_id: int, position: int | None, step: str, name: str, text: str | None) -> SearchHit | None:
        if not text:
            return None
        first = self.pattern.search(text)
        if first is None:
            return None
        shown = strip_control(text)  # what the stepper shows: a title or a clipboard in a sequence is no match
        if shown is not text:
            text, first = shown, self.pattern.search(shown)
            if first is None:
                return None
        count = sum(1 for _ in self.pattern.finditer(text, first.end())) + 1
        line, start, end = snippet(text, first.start(), first.end())
        return SearchHit(session_id, position, step, name, line, start, end, count)


def _prompt_text(step: TrajectoryStep) -> str | None:
    """A prompt recorded as one text, as the stepper shows it: its messages' contents, or the text
    when it does not parse into messages (such prompts are not shared lists: searched whole)."""
    messages = step.messages
    return "\n".join(message.content for message in messages) if messages else step.prompt_text


def _new_messages(step: TrajectoryStep, previous: TrajectoryStep | None) -> Sequence[ChatMessage]:
    """The messages of ``step``'s prompt that the step before it was not sent: a prompt is most often
    the one before plus a few messages, and searching every prompt whole made a search of a long
    run quadratic (and gave every later step a hit for one early message)."""
    messages = step.messages
    if previous is not None:
        added = added_messages(messages, previous.messages)
        if added is not None:
            return added
    return messages


def _log_fields(step: TrajectoryStep, previous: TrajectoryStep | None) -> Iterator[tuple[str, str | None]]:
    yield "observation", step.observation
    yield "observation after", step.tool_result
    if step.prompt_text:
        yield "prompt", _prompt_text(step)
    else:
        yield "messages", "\n".join(message.content for message in _new_messages(step, previous) if message.content)
    yield "thinking", step.thinking
    yield "action", "\n".join(part for part in (step.content, step.action_text) if part)


def step_fields(trajectory: Trajectory) -> Iterator[tuple[int, str, Iterator[tuple[str, str | None]]]]:
    """Each step of ``trajectory`` as ``(position, label, fields)``: the texts ``F`` searches
    (observation, observation after, prompt or messages, thinking, action), named as the stepper names
    them, for any log format; a log step's messages are those its prompt adds to the step before.
    The one place a step's texts are picked, for search and other faces."""
    steps = trajectory.steps
    for position, step in enumerate(steps):
        yield position, _label(step), _log_fields(step, steps[position - 1] if position else None)


def _label(step: TrajectoryStep) -> str:
    """A step named as the step list names it: a named sub-event by what it records."""
    if step.kind == "event" and step.event:
        return "↳ " + strip_control(step.event)
    return step.label


def episode_hits(trajectory: Trajectory, session_id: int, query: Query) -> list[SearchHit]:
    """Every step and field of the episode that contains the query, in step order (the task first)."""
    hits: list[SearchHit] = []
    task = query.hit(session_id, None, "task", "task", trajectory.task)
    if task is not None:
        hits.append(task)
    for position, label, fields in step_fields(trajectory):
        for name, text in fields:
            hit = query.hit(session_id, position, label, name, text)
            if hit is not None:
                hits.append(hit)
    return hits


def search(demos: EpisodeSet, text: str, session_ids: Iterable[int] | None = None) -> Iterator[EpisodeHits]:
    """Search the episodes (all of ``demos``, or ``session_ids`` in that order) for ``text``:
    one :class:`EpisodeHits` per episode searched, as soon as it is done, so a caller can show
    hits while it searches, count progress, and stop between episodes.

    Episodes are read from their files directly (not through the EpisodeSet's cache, which keeps
    the episodes the user opened); one that cannot be read gives its problem instead of hits."""
    query = Query(text)
    refs = demos.refs if session_ids is None else [demos.by_session[s] for s in session_ids if s in demos.by_session]
    for ref in refs:
        session_id = ref.session_id
        if not text or not query.maybe_in(ref):
            yield EpisodeHits(session_id)
            continue
        try:
            trajectory = read_trajectory(ref)
        except EpisodeLoadError as exc:
            yield EpisodeHits(session_id, problem=exc.problem)
            continue
        yield EpisodeHits(session_id, episode_hits(trajectory, session_id, query))
