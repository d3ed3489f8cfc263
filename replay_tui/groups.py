"""Mismatch groups: a run's (or a comparison's) mismatches counted by what went wrong.

A mismatch is grouped by four keys: its ``state``, the tool the recording used (``expected_tool``),
the tool the policy used (``predicted_tool``) and the *kind* of the reason the matching module gave
(``reason_kind``). Every mismatch falls in exactly one group, so the counts sum to the mismatch
count. Groups sort by count (largest first), then by their keys.

Tools are read from the action texts, whatever the log's format:

- WebShop actions: ``search[...]`` is ``Search``; ``click[<ASIN>]`` is ``select_item``; the fixed
  buttons are their tools (``click[Next >]`` is ``Next``, ``click[Buy Now]`` is ``Buy_Now``...,
  as :data:`replay_tui.actions.CONSTANT_TOOLS` names them); any other click is ``select_option``;
- tool calls of other formats, ``name({"a": 1})`` (:func:`replay_tui.episodes.model.parse_call_text`):
  the call's name;
- no action (a policy failure predicts ``""``): ``<no action: KIND>`` with the failure's kind
  (``<no action: timeout>``), or ``<no action>``; text that is neither: ``<text>``.

The reason is the one :mod:`replay_tui.matching` stored on the step (``StepResult.reason``,
``Mismatch.reason``); it names values (``arguments.origin: expected 'ORD', got 'JFK'``), so it is
reduced to a stable template by :func:`reason_kind` (``argument arguments.origin differs``) and
one full reason per group is kept as its ``sample_reason``. Nothing here judges actions again.

Outcome groups (:func:`group_outcomes`) group episodes instead of steps, by what the log says of
the task: its termination reason, the first expected action it missed, its first failed check, the
leading phrase of the scorer's explanation.

Pure (no Textual): reports, the CLI and the app group the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from replay_tui.actions import CONSTANT_TOOLS, try_parse_action
from replay_tui.episodes.model import Outcome, parse_call_text
from replay_tui.matching import argument_type
from replay_tui.sanitize import one_line

if TYPE_CHECKING:
    from replay_tui.expected import TaskAlignment
    from replay_tui.runner import EpisodeReport, SummaryReport

NO_ACTION = "<no action>"
"""The predicted tool of an empty prediction without a failure kind."""
TEXT = "<text>"
"""The tool of an action text that is neither a WebShop action nor a tool call."""
NO_REASON = "no reason recorded"
"""The reason kind of a mismatch stored without a reason (reports written before reasons existed)."""
TOOL_CHARS = 60
"""Tool names (from untrusted logs) are cut to this many characters."""
SORT_KEYS: tuple[str, ...] = ("count", "state", "tool", "reason")
"""What groups can be sorted by (:func:`sort_groups`)."""


class MismatchGroup(BaseModel):
    """Mismatches that share a state, an expected tool, a predicted tool and a reason kind.

    ``steps`` are the keys of its mismatches in the order they were given: ``(session_id,
    step_label)`` pairs for a run (:func:`group_mismatches`), whatever key the caller passed to
    :func:`group_steps` otherwise. ``count`` is ``len(steps)``.
    """

    state: str
    expected_tool: str
    predicted_tool: str
    reason_kind: str
    count: int
    sample_reason: str = ""
    steps: list[Any] = Field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.state, self.expected_tool, self.predicted_tool, self.reason_kind)

    @property
    def tools(self) -> str:
        """``expected → predicted``."""
        return f"{self.expected_tool} → {self.predicted_tool}"


# -- tools ----------------------------------------------------------------------------------------

_BUTTON_TOOLS: dict[str, str] = {}
for _tool, _action in CONSTANT_TOOLS.items():
    _parsed = try_parse_action(_action)
    if _parsed is not None:
        _BUTTON_TOOLS[" ".join(_parsed.argument.split()).casefold()] = _tool
_BUTTON_TOOLS["attributes"] = "Attributes"  # an item-page tab the seed's actions use, without a tool of its own


# Reasons quote values with repr(), which writes control characters as escapes ("\\x1b[31m"): the
# sample of a group leaves them out as sanitize.strip_control leaves out the characters themselves.
_ESCAPED_CONTROLS = re.compile(
    r"(?P<backslash>\\\\)"  # an escaped backslash: kept, and not the start of an escape
    r"|(?P<space>\\[trn])"  # tab, newline, carriage return: a space
    r"|\\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\\]*(?:\\x07|\\x1b\\\\)?|[@-Z\\-_])?"  # ESC and its sequence
    r"|\\x(?:[01][0-9a-f]|7f|[89][0-9a-f])"  # other C0/C1 controls
)


def _unescape(found: re.Match[str]) -> str:
    if found.group("backslash"):
        return found.group()
    return " " if found.group("space") else ""


def clean_reason(text: str | None) -> str:
    """A stored reason as one line of plain text: control characters, and the escapes repr() wrote
    for them, left out."""
    return one_line(_ESCAPED_CONTROLS.sub(_unescape, text or ""))


def _cut(text: str, limit: int = TOOL_CHARS) -> str:
    flat = one_line(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def action_tool(text: str | None, error_kind: str | None = None) -> str:
    """The tool an action text uses: a WebShop action's tool, a tool call's name, or a placeholder.

    An empty text is ``<no action: KIND>`` when ``error_kind`` (the policy failure's kind) is
    given, else ``<no action>``.
    """
    text = (text or "").strip()
    if not text:
        kind = _cut(error_kind or "", 40)
        return f"<no action: {kind}>" if kind else NO_ACTION
    parsed = try_parse_action(text)
    if parsed is not None:
        kind = parsed.kind.lower()
        if kind == "search":
            return "Search"
        if kind != "click":
            return _cut(parsed.kind)
        argument = parsed.argument
        found = argument_type("click", argument)
        if found == "item_id":
            return "select_item"
        if found == "button":
            return _BUTTON_TOOLS.get(" ".join(argument.split()).casefold(), "click")
        return "select_option"
    call = parse_call_text(text)
    if call is not None:
        return _cut(call.name)
    return TEXT


# -- reason kinds -----------------------------------------------------------------------------------

_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_INDEX = re.compile(r"\[\d+\]")
_Q = "['\"]"  # a repr's opening quote
_TEMPLATES: tuple[tuple[re.Pattern[str], str | None], ...] = (
    # tool calls (matching.judge_call, matching.judge_step)
    (re.compile(r"^tool differs: "), "tool differs"),
    (re.compile(r"^not a tool call: "), "not a tool call"),
    (re.compile(r"^arguments are not a JSON object: "), "arguments are not a JSON object"),
    (re.compile(r"^(?P<path>arguments.*?) differs: expected "), "argument {path} differs"),
    (
        re.compile(r"^(?P<path>arguments.*?): expected an? (?P<want>\w+) .*, got an? (?P<got>\w+) "),
        "argument {path} type differs ({want} → {got})",
    ),
    (re.compile(r"^(?P<path>arguments.*?): expected \d+ items, got \d+$"), "argument {path} length differs"),
    (re.compile(r"^(?P<path>arguments.*?): (?P<keys>(?:missing|unexpected) " + _Q + ".*)$"), None),  # _keys
    # WebShop actions (matching.judge)
    (re.compile(r"^action kind differs: "), "action kind differs"),
    (
        re.compile(r"^argument differs: expected (?P<want>[a-z ]+?) " + _Q + ".*, got (?P<got>[a-z ]+?) " + _Q),
        "argument type differs ({want} → {got})",
    ),
    (re.compile(r"^item id differs in letter case: "), "item id differs in letter case"),
    (
        re.compile(r"^search keywords differ: .*\(the same words up to [a-z/, ]+: tolerant"),
        "search keywords differ (same words)",
    ),
    (re.compile(r"^search keywords differ: "), "search keywords differ"),
    (re.compile(r"^item ids differ: "), "item id differs"),
    (re.compile(r"^buttons differ: "), "button differs"),
    (re.compile(r"^option values differ: "), "option value differs"),
    (re.compile(r"^arguments differ: "), "argument differs"),
    (re.compile(r"^differs only in (?P<detail>.+?) from the recorded action"), "differs only in {detail}"),
    (re.compile(r"^(?P<which>expected|predicted) action is not of the form "), "{which} action not parsed"),
)
"""The reasons :mod:`replay_tui.matching` (and ``matching.judge_step``) write, as (pattern, kind template);
a None template is a missing/unexpected keys reason (:func:`_keys`)."""


def _keys(path: str, text: str) -> str:
    """``missing 'a', 'b'; unexpected 'c'`` -> ``argument arguments: missing 'a', 'b'; unexpected keys``:
    the recorded call's keys name the kind, the keys a policy invented do not."""
    parts = []
    for part in (p.strip() for p in text.split(";")):
        if part.startswith("missing "):
            parts.append(_cut(part, 80))
        elif part.startswith("unexpected ") and "unexpected keys" not in parts:
            parts.append("unexpected keys")
    return f"argument {path}: " + "; ".join(parts)


def reason_kind(reason: str | None, error_kind: str | None = None) -> str:
    """The kind of a matching reason: the reason with its values left out, a stable group key.

    ``"tool differs: expected 'x', got 'y'"`` is ``tool differs``, ``"arguments.origin: expected
    'ORD', got 'JFK'"``-style reasons ``argument arguments.origin differs`` (list positions read
    ``[*]``), ``"search keywords differ: ..."`` ``search keywords differ``; a policy failure
    (``error_kind`` given) is ``policy error: KIND``. A reason of an unknown form keeps its words
    with quoted values replaced by ``…``.
    """
    if error_kind:
        return f"policy error: {_cut(error_kind, 40)}"
    text = one_line(reason or "")
    if not text:
        return NO_REASON
    for pattern, template in _TEMPLATES:
        found = pattern.search(text)
        if found is None:
            continue
        fields = {name: _INDEX.sub("[*]", value) for name, value in found.groupdict().items() if value is not None}
        if template is None:
            return _keys(fields["path"], fields["keys"])
        return _cut(template.format(**fields), 120)
    return _cut(_QUOTED.sub("…", text), 80)


# -- grouping ---------------------------------------------------------------------------------------


def group_steps(items: Iterable[tuple[str, str, str, str | None, str | None, Any]]) -> list[MismatchGroup]:
    """Group steps given as ``(state, expected, predicted, reason, error_kind, key)``.

    The building block of :func:`group_mismatches`, for any set of judged steps: a comparison's
    regressions are grouped the same way by passing, for each, the step's state, its recorded
    action, the prediction, the stored reason (``StepResult.reason``), the failure kind (or None)
    and a key to find it again (e.g. ``(session_id, step_label)``). ``sample_reason`` is the first
    reason of each group. Sorted by count, then keys (:func:`sort_groups`).
    """
    found: dict[tuple[str, str, str, str], MismatchGroup] = {}
    for state, expected, predicted, reason, error_kind, key in items:
        kind = error_kind if not (predicted or "").strip() else None
        group_key = (
            _cut(state or "", 80),
            action_tool(expected),
            action_tool(predicted, kind),
            reason_kind(reason, kind),
        )
        group = found.get(group_key)
        if group is None:
            group = found[group_key] = MismatchGroup(
                state=group_key[0],
                expected_tool=group_key[1],
                predicted_tool=group_key[2],
                reason_kind=group_key[3],
                count=0,
                sample_reason=clean_reason(reason),
            )
        group.steps.append(key)
        group.count += 1
    return sort_groups(found.values())


def _episodes(source: SummaryReport | Iterable[EpisodeReport]) -> Iterable[EpisodeReport]:
    episodes = getattr(source, "episodes", None)
    return episodes if episodes is not None else source  # type: ignore[return-value]


def group_mismatches(source: SummaryReport | Iterable[EpisodeReport]) -> list[MismatchGroup]:
    """The mismatches of a run (a SummaryReport, or its episodes) in groups whose counts sum to
    the number of mismatches; each group's ``steps`` are ``(session_id, step_label)`` pairs.

    A policy failure's sample reason is its error message (``policy error (timeout): ...``).
    """

    def items() -> Iterable[tuple[str, str, str, str | None, str | None, Any]]:
        for episode in _episodes(source):
            for m in episode.mismatches:
                failed = m.error_kind or ("exception" if m.error else None)
                reason = f"policy error ({failed}): {m.error}" if m.error and not m.predicted.strip() else m.reason
                yield m.state, m.expected, m.predicted, reason, failed, (m.session_id, m.step_label)

    return group_steps(items())


def sort_groups(groups: Iterable[MismatchGroup], by: str = "count", reverse: bool = False) -> list[MismatchGroup]:
    """Groups sorted by ``by`` (one of :data:`SORT_KEYS`), ties broken by the other keys.

    ``count`` puts the largest group first (``reverse`` the smallest); ``state``, ``tool``
    (expected, then predicted) and ``reason`` sort alphabetically.
    """
    if by not in SORT_KEYS:
        raise ValueError(f"unknown sort key {by!r}; choose one of {', '.join(SORT_KEYS)}")

    def keys(g: MismatchGroup) -> tuple[Any, ...]:
        state, tools, reason = (
            g.state.casefold(),
            (g.expected_tool.casefold(), g.predicted_tool.casefold()),
            g.reason_kind,
        )
        if by == "count":
            return (-g.count, state, tools, reason)
        if by == "state":
            return (state, -g.count, tools, reason)
        if by == "tool":
            return (tools, -g.count, state, reason)
        return (reason.casefold(), -g.count, state, tools)

    return sorted(groups, key=keys, reverse=reverse)


# -- outcome groups -------------------------------------------------------------------------------
#
# What the log says of each task (its outcome), not what a replay found: the episodes that did not
# succeed (failed or errored), grouped by one cause at a time. Every such episode falls in exactly
# one group of each kind, so the groups of one kind sum to the count of episodes that did not
# succeed. Keys are cut to stable templates (numbers and quoted values left out) so runs group alike.

OUTCOME_GROUPINGS: tuple[tuple[str, str], ...] = (
    ("termination", "termination reason"),
    ("missed", "missed expected action"),
    ("check", "failed check"),
    ("explanation", "scorer explanation"),
)
"""The kinds of outcome group, (key, what the views call it), in the order ``o`` cycles them."""
NO_STATUS = "<no termination reason>"
NO_REFERENCE = "<no reference actions>"
NONE_MISSED = "<none missed>"
NO_FAILED_CHECK = "<no failed check>"
NO_EXPLANATION = "<no explanation>"
EXPLANATION_WORDS = 5
"""A scorer explanation is grouped by this many of its leading words (of its first sentence)."""
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s|\n")


class OutcomeGroup(BaseModel):
    """Episodes that did not succeed and share one cause of one kind (:data:`OUTCOME_GROUPINGS`).

    ``episodes`` are the keys the caller gave, in its order; ``count`` is their number; ``sample``
    one full text behind the key (a check's detail, a whole explanation).
    """

    grouping: str
    key: str
    count: int = 0
    sample: str = ""
    episodes: list[Any] = Field(default_factory=list)


def _template(text: str, limit: int = 80) -> str:
    """Text with numbers read as ``#`` and quoted values as ``…``: a stable key."""
    return _cut(_NUMBER.sub("#", _QUOTED.sub("…", one_line(text))), limit)


def termination_key(outcome: Outcome) -> str:
    """The termination or exit reason as the log says it (``error`` when it ended on an error only)."""
    if outcome.status:
        return _cut(outcome.status, 60)
    return "error" if outcome.error else NO_STATUS


def missed_key(alignment: TaskAlignment | None) -> tuple[str, str]:
    """(the tool of the agent's first expected action missed or called with different arguments, the
    why); a simulated user's actions are not the agent's misses (:attr:`TaskAlignment.missed`)."""
    if alignment is None or not alignment.hits:
        return NO_REFERENCE, ""
    hit = next((hit for hit in alignment.hits if hit.status != "matched" and hit.requestor != "user"), None)
    if hit is None:
        return NONE_MISSED, ""
    why = f"{hit.status}: {hit.reason}" if hit.reason else hit.status
    return _cut(hit.name), why


def check_key(outcome: Outcome) -> tuple[str, str]:
    """(the kind of the first failed check: its name as a template, its detail)."""
    failed = outcome.failed_checks
    if not failed:
        return NO_FAILED_CHECK, ""
    first = failed[0]
    return _template(first.name.split(":", 1)[0] or first.name, 60), first.detail


def explanation_key(outcome: Outcome) -> str:
    """The leading phrase of the scorer's explanation: the first words of its first sentence."""
    text = (outcome.explanation or "").strip()
    if not text:
        return NO_EXPLANATION
    sentence = _SENTENCE_END.split(text, maxsplit=1)[0]
    words = _template(sentence, 200).rstrip(".!?;:,").split()
    return " ".join(words[:EXPLANATION_WORDS]).casefold() or NO_EXPLANATION


def group_outcomes(items: Iterable[tuple[Any, Outcome, TaskAlignment | None]], grouping: str) -> list[OutcomeGroup]:
    """The episodes of ``items`` (``(key, outcome, alignment or None)``) that did not succeed (their
    outcome's kind is ``failed`` or ``errored``), grouped by ``grouping`` (a key of
    :data:`OUTCOME_GROUPINGS`); largest group first, then by key."""
    if grouping not in dict(OUTCOME_GROUPINGS):
        raise ValueError(f"unknown outcome grouping {grouping!r}; choose one of {', '.join(dict(OUTCOME_GROUPINGS))}")
    found: dict[str, OutcomeGroup] = {}
    for key, outcome, alignment in items:
        if outcome.kind not in ("failed", "errored"):
            continue
        sample = ""
        if grouping == "termination":
            name = termination_key(outcome)
            sample = outcome.reason
        elif grouping == "missed":
            name, sample = missed_key(alignment)
        elif grouping == "check":
            name, sample = check_key(outcome)
        else:
            name = explanation_key(outcome)
            sample = outcome.explanation or ""
        group = found.get(name)
        if group is None:
            group = found[name] = OutcomeGroup(grouping=grouping, key=name, sample=clean_reason(sample))
        group.episodes.append(key)
        group.count += 1
    return sort_outcome_groups(found.values())


OUTCOME_SORT_KEYS: tuple[str, ...] = ("count", "group")
"""What outcome groups can be sorted by (:func:`sort_outcome_groups`)."""


def sort_outcome_groups(groups: Iterable[OutcomeGroup], by: str = "count", reverse: bool = False) -> list[OutcomeGroup]:
    """Largest first then by key (``count``), or by key (``group``); ``reverse`` turns it round."""
    if by not in OUTCOME_SORT_KEYS:
        raise ValueError(f"unknown sort key {by!r}; choose one of {', '.join(OUTCOME_SORT_KEYS)}")
    if by == "count":
        return sorted(groups, key=lambda g: (-g.count, g.key.casefold()), reverse=reverse)
    return sorted(groups, key=lambda g: (g.key.casefold(), -g.count), reverse=reverse)
