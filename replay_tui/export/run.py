"""Export a replay run as a report file: JSON, Markdown, CSV, HTML or JUnit XML (no Textual).

The TUI and the CLI both call :func:`write_report`, and rendering is deterministic (same inputs,
same bytes; no timestamps), so they produce identical files for the same run. Every format
carries the run's settings, its totals with 95 % Wilson intervals on every accuracy figure, the
mismatch groups (:mod:`replay_tui.groups`), every mismatch, the tags and notes on the replayed
episodes and their steps, and the load problems.

Text from demo files (instructions, actions, states, problem messages) and from policies is
untrusted: terminal control characters are stripped everywhere, characters XML cannot hold are
replaced, and each format escapes what is left for its own syntax.
"""

from __future__ import annotations

import csv
import io
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from replay_tui.annotations import Annotation, AnnotationStore
from replay_tui.episodes.model import OutcomeCheck
from replay_tui.episodes.problems import LoadProblem
from replay_tui.export.text import (
    CSS,
    MD_MAX_CHARS,
    MD_MAX_ROWS,
    clean,
    csv_cell,
    esc,
    format_for_path,
    html_diff,
    junit_properties,
    md_code,
    md_lines,
    md_text,
    normalize_format,
    number,
    one_line,
    pct,
    plural,
    shorten,
    write_atomic,
)
from replay_tui.groups import MismatchGroup, group_mismatches
from replay_tui.repeat_report import RepeatReport
from replay_tui.runner import EpisodeOutcome, EpisodeReport, Mismatch, StepResult, SummaryReport
from replay_tui.stats import wilson

DEFAULT_TITLE = "Replay report"
SUITE_NAME = "replay-tui"

MD_MAX_GROUPS = 50
"""At most this many mismatch groups in a Markdown report; the rest are counted."""
GROUP_STEPS_SHOWN = 5
"""A Markdown group row names this many of its steps; HTML lists them all."""
CONFIDENCE = 0.95
INTERVAL_METHOD = "wilson"
INTERVAL_NOTE = "95% Wilson score intervals"

CSV_VERDICT_COLUMNS: tuple[str, ...] = ("steps_equivalent", "verdict", "reason")
"""Appended to CSV_COLUMNS when a matching policy other than exact judged the run."""
CSV_OUTCOME_COLUMNS: tuple[str, ...] = (
    "outcome",  # succeeded | failed | errored | unknown: what the log says of the task
    "outcome_success",
    "outcome_score",
    "outcome_reason",
    "missed_expected",
    "extra_writes",
    "outcome_status",
    "outcome_target",
    "outcome_answer",
    "outcome_explanation",
    "outcome_checks",
)
"""Appended last to every CSV report: each episode's outcome (the log's, never the replay's agreement)."""
CSV_COLUMNS: tuple[str, ...] = (
    "kind",  # episode | step | group | problem | run
    "session_id",
    "file",
    "instruction",
    "steps_recorded",
    "steps_total",
    "steps_matched",
    "accuracy",
    "mismatches",
    "first_mismatch_step",
    "first_expected",
    "first_predicted",
    "success",
    "final_reward",
    "completed_by_backup",
    "stopped_early",
    "cancelled",
    "tags",
    "note",
    "step",
    "state",
    "match",
    "expected",
    "predicted",
    "error",
    "problem_index",
    "problem_field",
    "problem_severity",
    "problem",
    "name",
    "value",
    "accuracy_ci_low",  # an episode's accuracy interval
    "accuracy_ci_high",
    "expected_tool",  # a mismatch group (kind "group"; its count in "mismatches")
    "predicted_tool",
    "reason_kind",
    "sample_reason",
    "group_steps",
)


# --------------------------------------------------------------------------- public API


def render_report(
    summary: SummaryReport,
    fmt: str,
    annotations: AnnotationStore | None = None,
    *,
    title: str | None = None,
) -> bytes:
    """The report of ``summary`` in ``fmt`` (one of :data:`FORMATS`) as UTF-8 bytes.

    Only annotations on sessions of the report (replayed episodes and load problems) are included.
    """
    name = normalize_format(fmt)
    context = _Context(summary, annotations, title)
    if name == "json":
        return _render_json(context)
    if name == "md":
        return _render_md(context).encode("utf-8")
    if name == "csv":
        return _render_csv(context).encode("utf-8")
    if name == "html":
        return _render_html(context).encode("utf-8")
    return _render_junit(context)


def write_report(
    path: str | os.PathLike[str],
    summary: SummaryReport,
    annotations: AnnotationStore | None = None,
    fmt: str | None = None,
    *,
    title: str | None = None,
) -> Path:
    """Render and atomically write the report; the format comes from the suffix unless ``fmt`` is given."""
    name = normalize_format(fmt) if fmt else format_for_path(path)
    data = render_report(summary, name, annotations, title=title)
    return write_atomic(path, data)


def verdict(summary: SummaryReport) -> tuple[str, str]:
    """``(status, sentence)``: status is ``pass``, ``fail`` (mismatches), ``error`` (load errors only) or ``empty``."""
    mismatches = summary.total_mismatches
    errors = sum(1 for p in summary.problems if p.severity == "error")
    if mismatches:
        status = "fail"
    elif errors:
        status = "error"
    elif not summary.episodes_run:
        status = "empty"
    else:
        status = "pass"
    parts = [
        f"{summary.episodes_matched}/{summary.episodes_run} episodes matched",
        f"{summary.total_matched}/{summary.total_steps} steps ({pct(summary.overall_accuracy)})",
        *([f"{summary.total_equivalent} equivalent"] if summary.shows_verdicts else []),
        plural(mismatches, "mismatch", "mismatches"),
        plural(len(summary.problems), "load problem", "load problems"),
    ]
    sentence = ", ".join(parts)
    if summary.shows_verdicts:
        sentence += f" (matching: {summary.matching_label})"
    if summary.episodes_run != summary.episodes_total:
        sentence += f"; {summary.episodes_run} of {summary.episodes_total} episodes replayed"
    if summary.cancelled:
        sentence += "; the run was cancelled"
    return status, sentence


def agreement_phrase(summary: SummaryReport) -> str:
    """``replay agrees with the recording on 18/20 steps``: the *agreement* half of a headline."""
    text = f"replay agrees with the recording on {summary.total_matched}/{summary.total_steps} steps"
    if summary.shows_verdicts and summary.total_equivalent:
        text += f" ({summary.total_equivalent} more equivalent)"
    return text


def outcome_phrase(summary: SummaryReport | RepeatReport) -> str:
    """``the recorded agent succeeded on 11/20 tasks (9 failed)``: the *outcome* half of a headline,
    from what the logs say of their tasks (a replay's or a ``--repeat`` run's). Whenever not every
    task succeeded it says how many failed."""
    counts = summary.outcomes
    total = sum(counts.values())
    if not total:
        return "no task was replayed"
    if counts["unknown"] == total:
        return f"the log records no outcome for {plural(total, 'task', 'tasks')}"
    text = f"the recorded agent succeeded on {counts['succeeded']}/{total} tasks"
    if counts["succeeded"] < total:
        others = [f"{counts['failed']} failed"]
        others += [f"{counts[kind]} {kind}" for kind in ("errored", "unknown") if counts[kind]]
        text += f" ({', '.join(others)})"
    return text


def headline(summary: SummaryReport) -> str:
    """Agreement and outcome in one line, never mixed: ``replay agrees with the recording on 20/20
    steps · the recorded agent succeeded on 11/20 tasks (9 failed)``."""
    return f"{agreement_phrase(summary)} · {outcome_phrase(summary)}"


def outcome_pairs(outcome: EpisodeOutcome | None) -> list[tuple[str, str]]:
    """An episode's outcome as name/value pairs named as :data:`CSV_OUTCOME_COLUMNS` (CSV cells,
    JUnit properties); the empty ones left out."""
    if outcome is None:
        return [("outcome", "unknown")]
    pairs = [
        ("outcome", outcome.kind),
        ("outcome_success", "" if outcome.success is None else _bool(outcome.success)),
        ("outcome_score", "" if outcome.score is None else number(outcome.score)),
        ("outcome_reason", one_line(outcome.reason)),
        ("missed_expected", ";".join(clean(name) for name in outcome.missed_expected)),
        ("extra_writes", ";".join(clean(call) for call in outcome.extra_writes)),
        ("outcome_status", one_line(outcome.status or "")),
        ("outcome_target", clean(outcome.target or "")),
        ("outcome_answer", clean(outcome.answer or "")),
        ("outcome_explanation", clean(outcome.explanation or "")),
        ("outcome_checks", ";".join(_check_text(check) for check in outcome.checks)),
    ]
    return [(name, value) for name, value in pairs if value]


def _check_text(check: OutcomeCheck) -> str:
    """``db: failed`` / ``accuracy: 0.5``: one check of an outcome's breakdown, short."""
    state = "" if check.passed is None else "passed" if check.passed else "failed"
    value = state or ("" if check.value is None else one_line(check.value))
    if value and not check.counts:
        value += " (diagnostic: not in the reward)"
    return f"{one_line(check.name)}: {value}" if value else one_line(check.name)


def outcome_run_pairs(summary: SummaryReport) -> list[tuple[str, str]]:
    """The outcome counts and the headline as name/value pairs: CSV run rows, JUnit suite properties."""
    pairs = [(f"outcomes_{kind}", str(n)) for kind, n in summary.outcomes.items()]
    return [*pairs, ("headline", headline(summary))]


# --------------------------------------------------------------------------- shared helpers

_STATUS_LABELS = {"pass": "PASS", "fail": "FAIL", "error": "ERROR", "empty": "NO EPISODES"}


def _bool(value: bool) -> str:
    return "true" if value else "false"


Interval = tuple[float, float]


def _interval(successes: int, total: int) -> Interval:
    """The 95 % Wilson interval of ``successes / total``, rounded as reports write numbers."""
    low, high = wilson(successes, total)
    return round(low, 6), round(high, 6)


def _of(rate: float, total: int) -> int:
    """The count behind a rate over ``total`` (rates are stored, counts are not)."""
    return round(rate * total)


def _pct_ci(interval: Interval) -> str:
    """``[17.9–25.8%]``."""
    low, high = interval
    return f"[{low * 100:.1f}–{high * 100:.1f}%]"


class Intervals:
    """The Wilson intervals of a summary's accuracy figures (overall, by state, episodes, with ≈)."""

    def __init__(self, summary: SummaryReport):
        total = summary.total_steps
        self.overall = _interval(summary.total_matched, total)
        self.by_state = {
            state: _interval(_of(acc, summary.steps_by_state.get(state, 0)), summary.steps_by_state.get(state, 0))
            for state, acc in sorted(summary.accuracy_by_state.items())
        }
        self.episodes_matched = _interval(summary.episodes_matched, summary.episodes_run)
        self.episodes = {e.session_id: _interval(e.steps_matched, e.steps_total) for e in summary.episodes}
        self.accepted = _interval(summary.total_matched + summary.total_equivalent, total)
        self.accepted_by_state = {
            state: _interval(
                _of(summary.accepted_accuracy_by_state.get(state, 0.0), summary.steps_by_state.get(state, 0)),
                summary.steps_by_state.get(state, 0),
            )
            for state in sorted(summary.accuracy_by_state)
        }
        self.verdicts = summary.shows_verdicts

    def as_dict(self) -> dict[str, Any]:
        """The ``intervals`` object of JSON reports: ``[low, high]`` per accuracy figure, named after
        the figure (``overall_accuracy``, ``accuracy_by_state``...); ``episodes_matched`` bounds the
        share of replayed episodes that matched, ``episode_accuracy`` each episode's step accuracy
        (by session id)."""
        data: dict[str, Any] = {
            "method": INTERVAL_METHOD,
            "confidence": CONFIDENCE,
            "overall_accuracy": list(self.overall),
            "accuracy_by_state": {state: list(ci) for state, ci in self.by_state.items()},
            "episodes_matched": list(self.episodes_matched),
            "episode_accuracy": {str(sid): list(ci) for sid, ci in self.episodes.items()},
        }
        if self.verdicts:
            data["accepted_accuracy"] = list(self.accepted)
            data["accepted_accuracy_by_state"] = {state: list(ci) for state, ci in self.accepted_by_state.items()}
        return data


def report_intervals(summary: SummaryReport) -> dict[str, Any]:
    """The Wilson intervals JSON reports carry under ``intervals`` (:meth:`Intervals.as_dict`)."""
    return Intervals(summary).as_dict()


def group_dict(group: MismatchGroup) -> dict[str, Any]:
    """A mismatch group as JSON reports write it: its keys, count, sample reason and steps."""
    return {
        "state": group.state,
        "expected_tool": group.expected_tool,
        "predicted_tool": group.predicted_tool,
        "reason_kind": group.reason_kind,
        "count": group.count,
        "sample_reason": group.sample_reason,
        "steps": [{"session_id": sid, "step_label": label} for sid, label in group.steps],
    }


def report_dict(summary: SummaryReport, *, include_steps: bool = False) -> dict[str, Any]:
    """What a JSON report holds before annotations: the summary (:meth:`SummaryReport.to_dict`) plus
    ``intervals`` and ``mismatch_groups``. ``--report-steps`` writes it with every step result."""
    data = summary.to_dict(include_steps=include_steps)
    data["intervals"] = report_intervals(summary)
    data["mismatch_groups"] = [group_dict(group) for group in group_mismatches(summary)]
    return data


def report_json(summary: SummaryReport, *, include_steps: bool = False) -> bytes:
    """:func:`report_dict` as deterministic JSON (sorted keys, two-space indent, trailing newline),
    text cleaned of control characters as in every report."""
    data = _clean_tree(report_dict(summary, include_steps=include_steps))
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


def _step_order(label: str | None) -> tuple[int, tuple[int, ...], str]:
    if label is None:
        return (0, (), "")
    try:
        return (1, tuple(int(part) for part in label.split(".")), label)
    except ValueError:
        return (2, (), label)


def _clean_tree(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(key) if isinstance(key, str) else key: _clean_tree(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean_tree(item) for item in value]
    return value


class _Context:
    """A summary plus the annotations that concern it, looked up by session and step."""

    def __init__(self, summary: SummaryReport, store: AnnotationStore | None, title: str | None):
        self.summary = summary
        self.title_given = title
        self.title = one_line(title or "") or DEFAULT_TITLE
        self.status, self.sentence = verdict(summary)
        self.groups = group_mismatches(summary)
        self.intervals = Intervals(summary)
        sessions: set[Any] = {episode.session_id for episode in summary.episodes}
        sessions |= {p.session_id for p in summary.problems if p.session_id is not None}
        self.annotations: list[Annotation] = [a for a in (store or ()) if a.session_id in sessions and not a.empty]
        self._by_key = {a.key: a for a in self.annotations}
        self._by_session: dict[int, list[Annotation]] = {}
        for item in sorted(self.annotations, key=lambda a: _step_order(a.step_label)):
            self._by_session.setdefault(item.session_id, []).append(item)
        self.store = store

    def iter_mismatches(self) -> Iterator[tuple[EpisodeReport, Mismatch]]:
        for episode in self.summary.episodes:
            for mismatch in episode.mismatches:
                yield episode, mismatch

    def get(self, session_id: Any, step_label: str | None = None) -> Annotation | None:
        return self._by_key.get((session_id, step_label))

    def tags(self, session_id: Any, step_label: str | None = None) -> list[str]:
        item = self.get(session_id, step_label)
        return [clean(tag) for tag in item.tags] if item else []

    def note(self, session_id: Any, step_label: str | None = None) -> str:
        item = self.get(session_id, step_label)
        return clean(item.note).strip() if item else ""

    def all_tags(self, session_id: Any) -> list[str]:
        """The tags on the episode and on any of its steps, each once, in label order."""
        if self.store is None or not self.for_session(session_id):  # no tags: spare the store's scan
            return []
        return [clean(tag) for tag in self.store.episode_tags(session_id)]

    def for_session(self, session_id: Any) -> list[Annotation]:
        """The session's annotations: the episode's own first, then its steps' in step order."""
        return self._by_session.get(session_id, [])

    def step_labels(self, episode: EpisodeReport) -> list[str]:
        """The labels of the steps worth a row of their own: mismatched, equivalent or annotated."""
        labels = {m.step_label for m in episode.mismatches} | {e.step_label for e in episode.equivalents}
        labels |= {a.step_label for a in self.for_session(episode.session_id) if a.step_label is not None}
        return sorted(labels, key=_step_order)


def _settings(summary: SummaryReport) -> list[tuple[str, str]]:
    return [
        ("mode", clean(summary.mode)),
        ("mismatch_policy", clean(summary.mismatch_policy)),
        ("include_item_steps", _bool(summary.include_item_steps)),
        ("case", clean(summary.case)),
        *([("matching", clean(summary.matching_label))] if summary.shows_verdicts else []),
    ]


def _totals(summary: SummaryReport) -> list[tuple[str, str]]:
    return [
        ("episodes_total", str(summary.episodes_total)),
        ("episodes_run", str(summary.episodes_run)),
        ("episodes_matched", str(summary.episodes_matched)),
        ("total_steps", str(summary.total_steps)),
        ("total_matched", str(summary.total_matched)),
        ("overall_accuracy", number(summary.overall_accuracy)),
        ("mismatches", str(summary.total_mismatches)),
        *(
            [
                ("total_equivalent", str(summary.total_equivalent)),
                ("accepted_accuracy", number(summary.accepted_accuracy)),
            ]
            if summary.shows_verdicts
            else []
        ),
        ("problems", str(len(summary.problems))),
        ("cancelled", _bool(summary.cancelled)),
    ]


def _states(summary: SummaryReport) -> list[tuple[str, int, float]]:
    """``(state, steps, accuracy)`` per state, in state order."""
    return [
        (clean(state), summary.steps_by_state.get(state, 0), accuracy)
        for state, accuracy in sorted(summary.accuracy_by_state.items())
    ]


def _run_pairs(ctx: _Context, summary: SummaryReport) -> list[tuple[str, str]]:
    """The run as name/value pairs (title, settings, files, totals, per-state figures): CSV and JUnit."""
    run: list[tuple[str, str]] = []
    if ctx.title_given is not None:
        run.append(("title", ctx.title))
    run += _settings(summary)
    run += [("file", name) for name in summary.files]
    run += _totals(summary)
    for state, steps, accuracy in _states(summary):
        run += [(f"accuracy_by_state[{state}]", number(accuracy)), (f"steps_by_state[{state}]", str(steps))]
    if summary.shows_verdicts:
        for state, equivalent, accepted in _equivalent_states(summary):
            run += [
                (f"equivalent_by_state[{state}]", str(equivalent)),
                (f"accepted_accuracy_by_state[{state}]", number(accepted)),
            ]
    return run + _interval_pairs(ctx)


def _interval_pairs(ctx: _Context) -> list[tuple[str, str]]:
    """The Wilson intervals as name/value pairs (``overall_accuracy_ci_low`` ...): CSV and JUnit."""
    found = ctx.intervals
    figures: list[tuple[str, Interval]] = [
        ("overall_accuracy", found.overall),
        ("episodes_matched", found.episodes_matched),
    ]
    if found.verdicts:
        figures.append(("accepted_accuracy", found.accepted))
    states = [state for state, _, _ in _states(ctx.summary)]
    figures += [(f"accuracy_by_state[{state}]", ci) for state, ci in zip(states, found.by_state.values(), strict=True)]
    if found.verdicts:
        figures += [
            (f"accepted_accuracy_by_state[{state}]", ci)
            for state, ci in zip(states, found.accepted_by_state.values(), strict=True)
        ]
    pairs = [("intervals", INTERVAL_NOTE)]
    for name, (low, high) in figures:
        base, bracket, rest = name.partition("[")
        pairs += [(f"{base}_ci_low{bracket}{rest}", number(low)), (f"{base}_ci_high{bracket}{rest}", number(high))]
    return pairs


def _equivalent_states(summary: SummaryReport) -> list[tuple[str, int, float]]:
    """``(state, equivalent steps, accuracy with equivalents)`` per state, in state order."""
    return [
        (clean(state), summary.equivalent_by_state.get(state, 0), summary.accepted_accuracy_by_state.get(state, 0.0))
        for state in sorted(summary.accuracy_by_state)
    ]


def _problem_where(problem: LoadProblem) -> str:
    if problem.index is None:
        return "file"
    where = f"episode #{problem.index}"
    if problem.session_id is not None:
        where += f" (session {one_line(problem.session_id)})"
    return where


# --------------------------------------------------------------------------- JSON


def _render_json(ctx: _Context) -> bytes:
    data = ctx.summary.to_dict()
    data["intervals"] = ctx.intervals.as_dict()
    data["mismatch_groups"] = [group_dict(group) for group in ctx.groups]
    data["annotations"] = [a.model_dump(mode="json") for a in ctx.annotations]
    if ctx.title_given is not None:
        data["title"] = ctx.title_given
    return orjson.dumps(_clean_tree(data), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n"


# --------------------------------------------------------------------------- Markdown

_MD_ICONS = {"pass": "✅", "fail": "❌", "error": "⚠️", "empty": "➖"}
_MD_STATES = 40
_MD_FILES = 20


def _md_tags(tags: list[str], *, table: bool, limit: int = 10) -> str:
    shown = " ".join(md_code(tag, 60, table=table) for tag in tags[:limit])
    return shown + (f" +{len(tags) - limit}" if len(tags) > limit else "")


def _md_take(lines: list[str], budget: int, max_items: int | None = None) -> tuple[list[str], int]:
    """The leading lines that fit in ``budget`` characters (and ``max_items``); and how many were left out."""
    taken: list[str] = []
    used = 0
    for line in lines:
        if (max_items is not None and len(taken) >= max_items) or used + len(line) + 1 > budget:
            break
        taken.append(line)
        used += len(line) + 1
    return taken, len(lines) - len(taken)


def _md_share(summary: SummaryReport, interval: Interval) -> str:
    """``(60.0% [23.1–88.2%])``: the share of replayed episodes that matched, with its interval."""
    return f"({pct(summary.episodes_matched / max(1, summary.episodes_run))} {_pct_ci(interval)})"


def _render_md(ctx: _Context) -> str:
    summary = ctx.summary
    ci = ctx.intervals
    head: list[str] = [f"## {md_text(ctx.title, 200)}", ""]
    # agreement and outcome side by side: a PASS never stands without how many tasks failed
    head += [f"**{_MD_ICONS[ctx.status]} {_STATUS_LABELS[ctx.status]}**: {md_text(headline(summary))}", ""]
    head += [f"Agreement: {md_text(ctx.sentence)}", ""]
    settings = (
        f"Mode {md_code(summary.mode, 80, table=False)} · mismatch policy "
        f"{md_code(summary.mismatch_policy, 40, table=False)} · item steps "
        f"{'on' if summary.include_item_steps else 'off'} · case {md_code(summary.case, 40, table=False)}"
    )
    if summary.shows_verdicts:
        settings += f" · matching {md_code(summary.matching_label, 200, table=False)}"
    head += [settings, ""]
    files = [md_code(name, 200, table=False) for name in summary.files]
    if len(files) == 1:
        head += [f"File: {files[0]}", ""]
    elif files:
        head.append(f"Files ({len(files)}):")
        head += [f"- {name}" for name in files[:_MD_FILES]]
        if len(files) > _MD_FILES:
            head.append(f"- … and {len(files) - _MD_FILES} more files")
        head.append("")
    head += [
        "| Metric | Value |",
        "| --- | --- |",
        f"| Episodes replayed | {summary.episodes_run} of {summary.episodes_total} |",
        f"| Episodes matched | {summary.episodes_matched} {_md_share(summary, ci.episodes_matched)} |",
        f"| Steps matched | {summary.total_matched} of {summary.total_steps} |",
        f"| Step accuracy | {pct(summary.overall_accuracy)} {_pct_ci(ci.overall)} |",
        f"| Mismatches | {summary.total_mismatches} |",
        f"| Load problems | {len(summary.problems)} |",
    ]
    tolerant = summary.shows_verdicts
    if tolerant:
        head[-2:-2] = [
            f"| Equivalent steps (≈) | {summary.total_equivalent} |",
            f"| Step accuracy with ≈ | {pct(summary.accepted_accuracy)} {_pct_ci(ci.accepted)} |",
        ]
    outcomes = summary.outcomes
    head += [
        f"| Tasks succeeded (the log's outcome) | {outcomes['succeeded']} of {summary.episodes_run} |",
        f"| Tasks failed | {outcomes['failed']} |",
        f"| Tasks errored | {outcomes['errored']} |",
        f"| Tasks without a recorded outcome | {outcomes['unknown']} |",
    ]
    if summary.cancelled:
        head.append("| Cancelled | yes |")
    head += ["", f"Accuracy figures show their {INTERVAL_NOTE} in brackets.", ""]
    states = _states(summary)
    if states:
        extra = {state: (eq, acc) for state, eq, acc in _equivalent_states(summary)} if tolerant else {}
        state_ci = list(ci.by_state.values())
        accepted_ci = list(ci.accepted_by_state.values())
        header, rule = "| State | Steps | Accuracy |", "| --- | ---: | ---: |"
        if tolerant:
            header, rule = header + " ≈ Equivalent | With ≈ |", rule + " ---: | ---: |"
        head += ["### Accuracy by state", "", header, rule]
        head += [
            f"| {md_code(state, 60)} | {steps} | {pct(acc)} {_pct_ci(state_ci[n])} |"
            + (f" {extra[state][0]} | {pct(extra[state][1])} {_pct_ci(accepted_ci[n])} |" if tolerant else "")
            for n, (state, steps, acc) in enumerate(states[:_MD_STATES])
        ]
        if len(states) > _MD_STATES:
            head += ["", f"… and {len(states) - _MD_STATES} more states"]
        head.append("")

    # The sections below share what is left of the budget; what one leaves unused passes on.
    remaining = MD_MAX_CHARS - sum(len(line) + 1 for line in head) - 2_000
    outcome_lines, used = _md_outcomes(ctx, int(remaining * 0.25))
    remaining -= used
    group_lines, used = _md_groups(ctx, int(remaining * 0.25))
    remaining -= used
    mismatch_lines, used = _md_mismatches(ctx, int(remaining * 0.6))
    remaining -= used
    equivalent_lines, used = _md_equivalents(ctx, int(remaining * 0.5))
    remaining -= used
    note_lines, used = _md_notes(ctx, int(remaining * 0.6))
    remaining -= used
    problem_lines, _ = _md_problems(ctx, remaining)
    text = (
        "\n".join(
            [*head, *outcome_lines, *group_lines, *mismatch_lines, *equivalent_lines, *note_lines, *problem_lines]
        ).rstrip("\n")
        + "\n"
    )
    if len(text) > MD_MAX_CHARS:  # a safety net: the budgets above keep well below the cap
        cut = text.rfind("\n", 0, MD_MAX_CHARS - 100)
        text = text[:cut] + "\n\n… report cut to fit the size limit\n"
    return text


def missed_lines(outcome: EpisodeOutcome) -> list[tuple[str, str]]:
    """``(name, why)`` for each reference action the recorded agent missed or called differently
    (a simulated user's are not the agent's misses), then each extra write it made."""
    missed = [
        (item.name, f"{item.status}: {item.reason}" if item.reason else item.status)
        for item in outcome.expected
        if item.status != "matched" and item.requestor != "user"
    ] or [(name, "missed") for name in outcome.missed_expected]
    return missed + [(call, "extra write: not in the reference") for call in outcome.extra_writes]


def _md_outcomes(ctx: _Context, budget: int) -> tuple[list[str], int]:
    """Every failed or errored task: its outcome, score, reason and the reference actions it missed."""
    counts = ctx.summary.outcomes
    ids = any(episode.episode_id is not None for episode in ctx.summary.episodes)  # logs of other formats
    rows = []
    for episode in ctx.summary.episodes:
        outcome = episode.outcome
        if outcome is None or outcome.kind not in ("failed", "errored"):
            continue
        missed = "; ".join(f"{md_code(name, 80)} {md_text(why, 200)}" for name, why in missed_lines(outcome))
        score = "" if outcome.score is None else number(outcome.score)
        reason = outcome.reason or outcome.explanation or ""
        episode_id = f" {md_code(episode.episode_id or '', 60)} |" if ids else ""
        rows.append(
            f"| {episode.session_id} |{episode_id} {outcome.kind} | {score} | {md_text(reason, 300)}"
            f"{_md_record(outcome, reason)} | {missed} |"
        )
    if not any(counts[kind] for kind in ("succeeded", "failed", "errored")):
        return [], 0
    lines = [
        "### Task outcomes",
        "",
        "What the logs say of their tasks, apart from the replay's agreement: "
        + ", ".join(f"{n} {kind}" for kind, n in counts.items())
        + ".",
        "",
    ]
    if rows:
        taken, left = _md_take(rows, budget - 500)
        header = "| Session | Episode | Outcome |" if ids else "| Session | Outcome |"
        rule = "| ---: | --- | --- |" if ids else "| ---: | --- |"
        body = [f"{header} Score | Reason | Missed expected actions, extra writes |", f"{rule} ---: | --- | --- |"]
        body += taken
        if left:
            body += ["", f"… and {left} more failed or errored tasks"]
        lines += _md_details(plural(len(rows), "failed or errored task", "failed or errored tasks"), body, True)
    return lines, sum(len(line) + 1 for line in lines)


def _md_record(outcome: EpisodeOutcome, reason: str) -> str:
    """`` · target `A` · answer `C` · explanation …`` for a task whose log names its target and no
    reference actions (a QA or multiple-choice sample): there the target is what was expected and the
    answer what the agent gave, the why of the failure; the explanation when the reason lacks it."""
    if not outcome.target or not outcome.target.strip() or outcome.expected:
        return ""
    parts = [f"target {md_code(outcome.target, 80)}"]
    if outcome.answer and outcome.answer.strip():
        parts.append(f"answer {md_code(outcome.answer, 80)}")
    explanation = " ".join((outcome.explanation or "").split())
    if explanation and explanation not in " ".join(reason.split()):
        parts.append(f"explanation {md_text(explanation, 160)}")
    return "".join(" · " + part for part in parts)


def _md_details(summary_line: str, body: list[str], open_: bool) -> list[str]:
    return [f"<details{' open' if open_ else ''}><summary>{summary_line}</summary>", "", *body, "", "</details>", ""]


def _group_label(key: Any) -> str:
    """A group's step as ``session:step`` (another key as it is)."""
    if isinstance(key, tuple) and len(key) == 2:
        return f"{key[0]}:{key[1]}"
    return str(key)


def _md_groups(ctx: _Context, budget: int) -> tuple[list[str], int]:
    """The mismatch groups, largest first: count, state, tools, reason kind, a sample, some steps."""
    groups = ctx.groups
    if not groups:
        return [], 0
    rows = []
    for group in groups[:MD_MAX_GROUPS]:
        steps = ", ".join(md_code(_group_label(key), 40) for key in group.steps[:GROUP_STEPS_SHOWN])
        if group.count > GROUP_STEPS_SHOWN:
            steps += f" +{group.count - GROUP_STEPS_SHOWN}"
        rows.append(
            f"| {group.count} | {md_code(group.state, 60)} | {md_code(group.expected_tool, 60)} → "
            f"{md_code(group.predicted_tool, 60)} | {md_text(group.reason_kind, 120)} "
            f"| {md_text(group.sample_reason, 160)} | {steps} |"
        )
    taken, _ = _md_take(rows, budget - 300, MD_MAX_GROUPS)
    body = [
        "| Count | State | Expected → predicted tool | Reason | Sample | Steps |",
        "| ---: | --- | --- | --- | --- | --- |",
        *taken,
    ]
    left = groups[len(taken) :]
    if left:
        body += ["", f"… and {len(left)} more groups ({sum(g.count for g in left)} mismatches)"]
    total = ctx.summary.total_mismatches
    lines = [
        "### Mismatch groups",
        "",
        f"{plural(total, 'mismatch', 'mismatches')} in {plural(len(groups), 'group', 'groups')}, "
        "by state, expected and predicted tool, and kind of reason.",
        "",
        *body,
        "",
    ]
    return lines, sum(len(line) + 1 for line in lines)


def _md_mismatches(ctx: _Context, budget: int) -> tuple[list[str], int]:
    total = ctx.summary.total_mismatches
    tolerant = ctx.summary.shows_verdicts
    rows: list[str] = []
    for episode, mismatch in islice(ctx.iter_mismatches(), MD_MAX_ROWS):  # no more rows than could be shown
        predicted = md_code(mismatch.predicted)
        if mismatch.error:
            predicted += f" ⚠️ policy error: {md_code(mismatch.error, 200)}"
        tags = _md_tags(ctx.tags(episode.session_id, mismatch.step_label), table=True)
        if ctx.note(episode.session_id, mismatch.step_label):
            tags = (tags + " 📝").strip()
        why = f" {md_text(mismatch.reason or '', 300)} |" if tolerant else ""
        rows.append(
            f"| {episode.session_id} | {md_code(mismatch.step_label, 20)} | {md_code(mismatch.state, 60)} "
            f"| {md_code(mismatch.expected)} | {predicted} | {tags} |{why}"
        )
    if not rows:
        return [], 0
    taken, _ = _md_take(rows, budget - 500, MD_MAX_ROWS)
    left = total - len(taken)
    body = ["| Session | Step | State | Expected | Predicted | Tags |", "| ---: | --- | --- | --- | --- | --- |"]
    if tolerant:
        body = [body[0] + " Why |", body[1] + " --- |"]
    body += taken
    if left:
        body += ["", f"… and {left} more mismatches"]
    lines = ["### Mismatches", "", *_md_details(plural(total, "mismatch", "mismatches"), body, total <= 20)]
    return lines, sum(len(line) + 1 for line in lines)


def _md_equivalents(ctx: _Context, budget: int) -> tuple[list[str], int]:
    """Steps the matching policy tolerated (only when a policy other than exact judged the run)."""
    summary = ctx.summary
    if not summary.shows_verdicts or not summary.total_equivalent:
        return [], 0
    rows = [
        f"| {episode.session_id} | {md_code(e.step_label, 20)} | {md_code(e.state, 60)} | {md_code(e.expected)} "
        f"| {md_code(e.predicted)} | {md_text(e.reason or '', 300)} |"
        for episode in summary.episodes
        for e in episode.equivalents
    ][:MD_MAX_ROWS]
    taken, _ = _md_take(rows, budget - 500, MD_MAX_ROWS)
    left = summary.total_equivalent - len(taken)
    body = ["| Session | Step | State | Expected | Predicted | Why |", "| ---: | --- | --- | --- | --- | --- |", *taken]
    if left:
        body += ["", f"… and {left} more equivalent steps"]
    total = summary.total_equivalent
    lines = [
        "### Equivalent steps (≈)",
        "",
        f"Differences tolerated by matching {md_code(summary.matching_label, 200, table=False)}.",
        "",
        *_md_details(plural(total, "equivalent step", "equivalent steps"), body, total <= 20),
    ]
    return lines, sum(len(line) + 1 for line in lines)


def _md_notes(ctx: _Context, budget: int) -> tuple[list[str], int]:
    items: list[str] = []
    for session_id in sorted({a.session_id for a in ctx.annotations}):
        for item in ctx.for_session(session_id):
            if item.step_label is None:
                parts = [f"**session {session_id}**"]
            else:
                parts = [f"session {session_id}, step {md_code(item.step_label, 20, table=False)}"]
            if item.tags:
                parts.append(_md_tags(item.tags, table=False))
            prefix = "- " if item.step_label is None else "  - "
            if item.note.strip():
                parts.append(md_lines(item.note, 1_000, " " * len(prefix)))
            items.append(prefix + " — ".join(parts))
    if not items:
        return [], 0
    taken, left = _md_take(items, budget - 200)
    lines = ["### Notes", "", *taken]
    if left:
        lines.append(f"- … and {left} more annotations")
    lines.append("")
    return lines, sum(len(line) + 1 for line in lines)


def _md_problems(ctx: _Context, budget: int) -> tuple[list[str], int]:
    items = []
    for problem in ctx.summary.problems:
        severity = "" if problem.severity == "error" else f" ({problem.severity})"
        items.append(f"- {md_code(problem.one_line(), 400, table=False)}{severity}")
    if not items:
        return [], 0
    taken, left = _md_take(items, budget - 200)
    if left:
        taken.append(f"- … and {left} more problems")
    heading = plural(len(items), "load problem", "load problems")
    lines = ["### Load problems", "", *_md_details(heading, taken, len(items) <= 10)]
    return lines, sum(len(line) + 1 for line in lines)


# --------------------------------------------------------------------------- CSV


def _render_csv(ctx: _Context) -> str:
    summary = ctx.summary
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    tolerant = summary.shows_verdicts
    # A run judged by a policy other than exact adds its verdict columns (exact reports keep their form).
    columns = (CSV_COLUMNS + CSV_VERDICT_COLUMNS if tolerant else CSV_COLUMNS) + CSV_OUTCOME_COLUMNS
    writer.writerow(columns)

    def row(**cells: str) -> None:
        writer.writerow([cells.get(column, "") for column in columns])

    for episode in summary.episodes:
        sid = episode.session_id
        first = episode.mismatches[0] if episode.mismatches else None
        row(
            kind="episode",
            session_id=str(sid),
            file=csv_cell(episode.file),
            instruction=csv_cell(episode.instruction),
            steps_recorded=str(episode.steps_recorded),
            steps_total=str(episode.steps_total),
            steps_matched=str(episode.steps_matched),
            accuracy=number(episode.accuracy),
            accuracy_ci_low=number(ctx.intervals.episodes[sid][0]),
            accuracy_ci_high=number(ctx.intervals.episodes[sid][1]),
            mismatches=str(len(episode.mismatches)),
            first_mismatch_step=csv_cell(episode.first_mismatch_step or ""),
            first_expected=csv_cell(first.expected if first else ""),
            first_predicted=csv_cell(first.predicted if first else ""),
            success=_bool(episode.success),
            final_reward=number(episode.final_reward),
            completed_by_backup=_bool(episode.completed_by_backup),
            stopped_early=_bool(episode.stopped_early),
            cancelled=_bool(episode.cancelled),
            tags=csv_cell(";".join(ctx.all_tags(sid))),
            note=csv_cell(ctx.note(sid)),
            steps_equivalent=str(episode.steps_equivalent),
            **{name: csv_cell(value) for name, value in outcome_pairs(episode.outcome)},
        )
    for episode in summary.episodes:
        sid = episode.session_id
        mismatches = {m.step_label: m for m in episode.mismatches}
        equivalents = {e.step_label: e for e in episode.equivalents}
        results: dict[str, StepResult] = {s.step_label: s for s in episode.steps}
        for label in ctx.step_labels(episode):
            cells = {
                "kind": "step",
                "session_id": str(sid),
                "file": csv_cell(episode.file),
                "step": csv_cell(label),
                "tags": csv_cell(";".join(ctx.tags(sid, label))),
                "note": csv_cell(ctx.note(sid, label)),
            }
            found: Mismatch | StepResult | None = mismatches.get(label) or equivalents.get(label) or results.get(label)
            if found is not None:
                cells.update(
                    state=csv_cell(found.state),
                    expected=csv_cell(found.expected),
                    predicted=csv_cell(found.predicted),
                    error=csv_cell(found.error or ""),
                    match=_bool(label not in mismatches and label not in equivalents),
                )
                verdict = "mismatch" if label in mismatches else "equivalent" if label in equivalents else "match"
                cells.update(verdict=verdict, reason=csv_cell(found.reason or ""))
            row(**cells)
    for group in ctx.groups:
        row(
            kind="group",
            state=csv_cell(group.state),
            mismatches=str(group.count),
            expected_tool=csv_cell(group.expected_tool),
            predicted_tool=csv_cell(group.predicted_tool),
            reason_kind=csv_cell(group.reason_kind),
            sample_reason=csv_cell(group.sample_reason),
            group_steps=csv_cell(";".join(_group_label(key) for key in group.steps)),
        )
    for problem in summary.problems:
        problem_sid = problem.session_id
        row(
            kind="problem",
            session_id=csv_cell("" if problem_sid is None else problem_sid),
            file=csv_cell(problem.file),
            problem_index="" if problem.index is None else str(problem.index),
            problem_field=csv_cell(problem.field or ""),
            problem_severity=problem.severity,
            problem=csv_cell(problem.message),
            tags=csv_cell(";".join(ctx.all_tags(problem_sid))) if problem_sid is not None else "",
            note=csv_cell(ctx.note(problem_sid)) if problem_sid is not None else "",
        )
    run = _run_pairs(ctx, summary) + outcome_run_pairs(summary)
    for name, value in run:
        row(kind="run", name=csv_cell(name), value=csv_cell(value))
    return buffer.getvalue()


# --------------------------------------------------------------------------- HTML


_SCRIPT = """
(function () {
  var box = document.getElementById("filter");
  box.hidden = false;
  box.addEventListener("input", function () {
    var query = box.value.toLowerCase();
    document.querySelectorAll(".filterable").forEach(function (el) {
      el.hidden = query !== "" && el.textContent.toLowerCase().indexOf(query) < 0;
    });
  });
})();
"""


def _html_tags(tags: Iterable[str]) -> str:
    return "".join(f'<span class="tag">{esc(tag)}</span>' for tag in tags)


def _render_html(ctx: _Context) -> str:
    summary = ctx.summary
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(ctx.title)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{esc(ctx.title)}</h1>",
        f'<p class="verdict"><span class="status status-{ctx.status}">{_STATUS_LABELS[ctx.status]}</span> '
        f"{esc(headline(summary))}</p>",
        f'<p class="muted">Agreement: {esc(ctx.sentence)}</p>',
    ]
    settings = "".join(
        f"<tr><th>{esc(name)}</th><td><code>{esc(value)}</code></td></tr>" for name, value in _settings(summary)
    )
    files = "".join(f"<li><code>{esc(name)}</code></li>" for name in summary.files) or "<li>none</li>"
    out += [
        '<h2 id="settings">Run settings</h2>',
        f'<table class="settings"><tbody>{settings}<tr><th>files</th><td><ul>{files}</ul></td></tr></tbody></table>',
    ]
    ci = ctx.intervals
    cards = [
        (f"{summary.episodes_run} / {summary.episodes_total}", "episodes replayed", ""),
        (str(summary.episodes_matched), "episodes matched", _html_share(summary, ci.episodes_matched)),
        (f"{summary.total_matched} / {summary.total_steps}", "steps matched", ""),
        (pct(summary.overall_accuracy), "step accuracy", _html_ci(ci.overall)),
        (str(summary.total_mismatches), "mismatches", f"in {plural(len(ctx.groups), 'group', 'groups')}"),
        (str(len(summary.problems)), "load problems", ""),
    ]
    if summary.shows_verdicts:
        cards[4:4] = [
            (str(summary.total_equivalent), "equivalent steps (≈)", ""),
            (pct(summary.accepted_accuracy), "step accuracy with ≈", _html_ci(ci.accepted)),
        ]
    outcomes = summary.outcomes
    others = ", ".join(f"{n} {kind}" for kind, n in outcomes.items() if kind != "succeeded")
    cards.append((f"{outcomes['succeeded']} / {summary.episodes_run}", "tasks succeeded (the log's outcome)", others))
    if summary.cancelled:
        cards.append(("yes", "cancelled", ""))
    out.append(
        '<div class="cards">'
        + "".join(
            f'<div class="card"><span class="value">{esc(value)}</span><span class="label">{esc(label)}</span>'
            + (f'<span class="ci">{esc(note)}</span>' if note else "")
            + "</div>"
            for value, label, note in cards
        )
        + "</div>"
    )
    out.append(f'<p class="muted">Accuracy figures show their {esc(INTERVAL_NOTE)} (CI).</p>')

    states = _states(summary)
    if states:
        tolerant = summary.shows_verdicts
        extra = {state: (eq, acc) for state, eq, acc in _equivalent_states(summary)} if tolerant else {}
        state_ci = list(ci.by_state.values())
        accepted_ci = list(ci.accepted_by_state.values())
        rows = "".join(
            f'<tr><td><code>{esc(state)}</code></td><td class="num">{steps}</td>'
            f'<td><span class="bar"><span style="width:{acc * 100:.1f}%"></span></span>{pct(acc)} '
            f'<span class="muted">{_pct_ci(state_ci[n])}</span></td>'
            + (
                f'<td class="num">{extra[state][0]}</td><td class="num">{pct(extra[state][1])} '
                f'<span class="muted">{_pct_ci(accepted_ci[n])}</span></td>'
                if tolerant
                else ""
            )
            + "</tr>"
            for n, (state, steps, acc) in enumerate(states)
        )
        columns = "<th>State</th><th>Steps</th><th>Accuracy [95% CI]</th>" + (
            "<th>≈ Equivalent</th><th>With ≈ [95% CI]</th>" if tolerant else ""
        )
        out += [
            '<h2 id="states">Accuracy by state</h2>',
            f"<table><thead><tr>{columns}</tr></thead><tbody>{rows}</tbody></table>",
        ]
    out += _html_groups(ctx)

    out += ['<p><input id="filter" type="search" placeholder="Filter episodes and mismatches…" hidden></p>']
    out += _html_episodes(ctx)
    out += _html_mismatches(ctx)
    out += _html_equivalents(ctx)
    out += _html_notes(ctx)
    out += _html_problems(ctx)
    out += [f"<script>{_SCRIPT}</script>", "</body>", "</html>", ""]
    return "\n".join(out)


def _html_ci(interval: Interval) -> str:
    low, high = interval
    return f"95% CI {low * 100:.1f}–{high * 100:.1f}%"


def _html_share(summary: SummaryReport, interval: Interval) -> str:
    share = summary.episodes_matched / max(1, summary.episodes_run)
    return f"{pct(share)} of replayed, {_html_ci(interval)}"


def _html_groups(ctx: _Context) -> list[str]:
    """The mismatch groups, largest first; each opens the list of its steps (links to the mismatches)."""
    groups = ctx.groups
    out = [f'<h2 id="groups">Mismatch groups ({len(groups)})</h2>']
    if not groups:
        return [*out, '<p class="muted">No mismatches to group.</p>']
    out.append(
        '<p class="muted">Mismatches by state, expected and predicted tool, and kind of reason '
        f"({esc(plural(ctx.summary.total_mismatches, 'mismatch', 'mismatches'))}).</p>"
    )
    rows = []
    for rank, group in enumerate(groups, start=1):
        links = " ".join(
            f'<a href="#m-{esc(key[0])}-{esc(key[1])}">{esc(_group_label(key))}</a>'
            if isinstance(key, tuple) and len(key) == 2
            else esc(_group_label(key))
            for key in group.steps
        )
        steps = plural(group.count, "step", "steps")
        rows.append(
            f'<tr class="filterable" id="g-{rank}"><td class="num">{group.count}</td>'
            f"<td><code>{esc(group.state)}</code></td>"
            f"<td><code>{esc(group.expected_tool)}</code> → <code>{esc(group.predicted_tool)}</code></td>"
            f"<td>{esc(group.reason_kind)}</td><td>{esc(group.sample_reason)}</td>"
            f"<td><details><summary>{steps}</summary>{links}</details></td></tr>"
        )
    return [
        *out,
        "<table><thead><tr><th>Count</th><th>State</th><th>Expected → predicted tool</th><th>Reason</th>"
        "<th>Sample</th><th>Steps</th></tr></thead><tbody>",
        *rows,
        "</tbody></table>",
    ]


def _html_episodes(ctx: _Context) -> list[str]:
    episodes = ctx.summary.episodes
    out = [f'<h2 id="episodes">Episodes ({len(episodes)})</h2>']
    if not episodes:
        return [*out, '<p class="muted">No episode was replayed.</p>']
    head = (
        "<tr><th>Session</th><th>File</th><th>Instruction</th><th>Steps matched</th><th>Accuracy</th>"
        "<th>Mismatches</th><th>First mismatch</th><th>Success</th><th>Reward</th><th>Outcome</th><th>Tags</th>"
        "<th>Note</th></tr>"
    )
    rows: list[str] = []
    for episode in episodes:
        sid = episode.session_id
        flags = []
        if episode.completed_by_backup:
            flags.append("completed by backup")
        if episode.stopped_early:
            flags.append("stopped early")
        if episode.cancelled:
            flags.append("cancelled")
        extra = f'<br><span class="muted">{esc(", ".join(flags))}</span>' if flags else ""
        first = (
            f'<a href="#m-{sid}-{esc(episode.first_mismatch_step)}">step {esc(episode.first_mismatch_step)}</a>'
            if episode.first_mismatch_step is not None
            else ""
        )
        rows.append(
            f'<tr id="s-{sid}" class="filterable {"ok" if episode.matched else "bad"}">'
            f'<td class="num">{sid}</td><td title="{esc(episode.file)}">{esc(Path(clean(episode.file)).name)}</td>'
            f"<td>{esc(episode.instruction)}</td>"
            f'<td class="num">{episode.steps_matched} / {episode.steps_total} '
            f'<span class="muted">({episode.steps_recorded} recorded)</span>{extra}</td>'
            f'<td class="num">{pct(episode.accuracy)} '
            f'<span class="muted">{_pct_ci(ctx.intervals.episodes[sid])}</span></td>'
            f'<td class="num">{len(episode.mismatches)}</td>'
            f"<td>{first}</td><td>{'yes' if episode.success else 'no'}</td>"
            f'<td class="num">{esc(number(episode.final_reward))}</td><td>{_html_outcome(episode.outcome)}</td>'
            f'<td>{_html_tags(ctx.all_tags(sid))}</td><td class="note">{esc(ctx.note(sid))}</td></tr>'
        )
    return [*out, f"<table><thead>{head}</thead><tbody>", *rows, "</tbody></table>"]


def _html_outcome(outcome: EpisodeOutcome | None) -> str:
    """An episode's outcome cell: its kind, reason, missed reference actions, and what the log
    records of the task (target, answer, explanation, checks) folded away."""
    if outcome is None:
        return "unknown"
    css = {"succeeded": "", "failed": "error", "errored": "error"}.get(outcome.kind, "muted")
    out = f'<span class="{css}">{esc(outcome.kind)}</span>'
    if outcome.reason:
        out += f"<br>{esc(outcome.reason)}"
    missed = missed_lines(outcome)
    if missed:
        items = "".join(f"<li><code>{esc(name)}</code> {esc(why)}</li>" for name, why in missed)
        out += f"<br>missed expected actions, extra writes:<ul>{items}</ul>"
    details = [
        (name, text)
        for name, text in (
            ("target", outcome.target),
            ("answer", outcome.answer),
            ("explanation", outcome.explanation),
            ("error", outcome.error),
            ("checks", "; ".join(_check_text(check) for check in outcome.checks)),
        )
        if text
    ]
    if details:
        rows = "".join(f"<dt>{name}</dt><dd>{esc(text)}</dd>" for name, text in details)
        out += f"<details><summary>the log's record</summary><dl>{rows}</dl></details>"
    return out


def _html_mismatches(ctx: _Context) -> list[str]:
    out = [f'<h2 id="mismatches">Mismatches ({ctx.summary.total_mismatches})</h2>']
    if not ctx.summary.total_mismatches:
        return [*out, '<p class="muted">Every replayed step matched.</p>']
    for episode in ctx.summary.episodes:
        if not episode.mismatches:
            continue
        sid = episode.session_id
        out.append(f'<section class="episode filterable" id="e-{sid}">')
        out.append(
            f'<h3>Session {sid} <span class="muted">{esc(Path(clean(episode.file)).name)}</span> '
            f"{_html_tags(ctx.tags(sid))}</h3>"
        )
        out.append(f"<p>{esc(episode.instruction)}</p>")
        if note := ctx.note(sid):
            out.append(f'<p class="note"><strong>Note:</strong> {esc(note)}</p>')
        for mismatch in episode.mismatches:
            label = mismatch.step_label
            expected, predicted = html_diff(mismatch.expected, mismatch.predicted)
            out.append(f'<div class="mismatch" id="m-{sid}-{esc(label)}">')
            out.append(
                f"<h4>Step {esc(label)} <code>{esc(mismatch.state)}</code> {_html_tags(ctx.tags(sid, label))}</h4>"
            )
            out.append("<dl>")
            out.append(f'<dt>expected</dt><dd class="action">{expected}</dd>')
            out.append(f'<dt>predicted</dt><dd class="action">{predicted}</dd>')
            if mismatch.error:
                out.append(f'<dt>policy error</dt><dd class="error">{esc(mismatch.error)}</dd>')
            if mismatch.reason and ctx.summary.shows_verdicts:
                out.append(f"<dt>why</dt><dd>{esc(mismatch.reason)}</dd>")
            if note := ctx.note(sid, label):
                out.append(f'<dt>note</dt><dd class="note">{esc(note)}</dd>')
            if mismatch.observation_excerpt:
                out.append(
                    f"<dt>observation</dt><dd><details><summary>excerpt</summary>"
                    f'<p class="muted">{esc(mismatch.observation_excerpt)}</p></details></dd>'
                )
            out.append("</dl>")
            out.append("</div>")
        out.append("</section>")
    return out


def _html_equivalents(ctx: _Context) -> list[str]:
    """Steps the matching policy tolerated (only when a policy other than exact judged the run)."""
    summary = ctx.summary
    if not summary.shows_verdicts:
        return []
    out = [
        f'<h2 id="equivalents">Equivalent steps ({summary.total_equivalent})</h2>',
        f'<p class="muted">Differences tolerated by matching {esc(summary.matching_label)}: '
        "neither matches nor mismatches.</p>",
    ]
    rows = [
        f'<tr class="filterable"><td class="num">{episode.session_id}</td><td>{esc(e.step_label)}</td>'
        f'<td><code>{esc(e.state)}</code></td><td class="action">{esc(e.expected)}</td>'
        f'<td class="action">{esc(e.predicted)}</td><td>{esc(e.reason or "")}</td></tr>'
        for episode in summary.episodes
        for e in episode.equivalents
    ]
    if rows:
        out.append(
            "<table><thead><tr><th>Session</th><th>Step</th><th>State</th><th>Expected</th><th>Predicted</th>"
            f"<th>Why</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
    return out


def _html_notes(ctx: _Context) -> list[str]:
    out = [f'<h2 id="notes">Tags and notes ({len(ctx.annotations)})</h2>']
    if not ctx.annotations:
        return [*out, '<p class="muted">No tags or notes on these episodes.</p>']
    rows = []
    for item in sorted(ctx.annotations, key=lambda a: (str(a.session_id), _step_order(a.step_label))):
        step = "episode" if item.step_label is None else f"step {esc(item.step_label)}"
        rows.append(
            f'<tr class="filterable"><td class="num">{item.session_id}</td><td>{step}</td>'
            f'<td>{_html_tags(clean(t) for t in item.tags)}</td><td class="note">{esc(item.note.strip())}</td>'
            "</tr>"
        )
    return [
        *out,
        "<table><thead><tr><th>Session</th><th>Where</th><th>Tags</th><th>Note</th></tr></thead><tbody>",
        *rows,
        "</tbody></table>",
    ]


def _html_problems(ctx: _Context) -> list[str]:
    problems = ctx.summary.problems
    out = [f'<h2 id="problems">Load problems ({len(problems)})</h2>']
    if not problems:
        return [*out, '<p class="muted">No load problems.</p>']
    rows = [
        f'<tr class="filterable"><td><code>{esc(problem.file)}</code></td><td>{esc(_problem_where(problem))}</td>'
        f"<td><code>{esc(problem.field or '')}</code></td><td>{esc(problem.severity)}</td>"
        f"<td>{esc(problem.message)}</td></tr>"
        for problem in problems
    ]
    return [
        *out,
        "<table><thead><tr><th>File</th><th>Where</th><th>Field</th><th>Severity</th><th>Message</th></tr>"
        "</thead><tbody>",
        *rows,
        "</tbody></table>",
    ]


# --------------------------------------------------------------------------- JUnit XML
# Text goes in through clean() only: ElementTree escapes markup itself.


def _annotation_properties(ctx: _Context, session_id: Any) -> list[tuple[str, str]]:
    items: list[tuple[str, str]] = []
    for item in ctx.for_session(session_id):
        prefix = "" if item.step_label is None else f"step {clean(item.step_label)} "
        if item.tags:
            items.append((prefix + "tags", ";".join(clean(tag) for tag in item.tags)))
        if item.note.strip():
            items.append((prefix + "note", clean(item.note).strip()))
    return items


def _annotation_lines(ctx: _Context, session_id: Any) -> list[str]:
    return [f"{name}: {value}" for name, value in _annotation_properties(ctx, session_id)]


def _render_junit(ctx: _Context) -> bytes:
    summary = ctx.summary
    failing = sum(1 for episode in summary.episodes if episode.mismatches)
    tests = len(summary.episodes) + len(summary.problems)
    counts = {"tests": str(tests), "failures": str(failing), "errors": str(len(summary.problems))}
    root = ET.Element("testsuites", {"name": SUITE_NAME, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE_NAME, **counts, "skipped": "0"})
    run = _run_pairs(ctx, summary)
    run += [
        (
            f"mismatch_group[{rank}]",
            f"{group.count} × {group.state}: {group.tools}: {group.reason_kind}",
        )
        for rank, group in enumerate(ctx.groups, start=1)
    ]
    junit_properties(suite, run + outcome_run_pairs(summary))

    for episode in summary.episodes:
        sid = episode.session_id
        case = ET.SubElement(
            suite,
            "testcase",
            classname=clean(Path(clean(episode.file)).stem or "demos"),
            name=f"session {sid}",
            assertions=str(episode.steps_total),
        )
        # the task's outcome as properties: agreement alone makes the case pass or fail
        junit_properties(case, outcome_pairs(episode.outcome) + _annotation_properties(ctx, sid))
        for mismatch in episode.mismatches:
            label = mismatch.step_label
            got = shorten(one_line(mismatch.predicted), 300) or "no action"
            message = (
                f"step {one_line(label)} ({one_line(mismatch.state)}): expected "
                f"{shorten(one_line(mismatch.expected), 300)} got {got}"
            )
            if mismatch.error:
                message += f" (policy error: {shorten(one_line(mismatch.error), 300)})"
            details = [
                f"session {sid}, step {clean(label)} ({clean(mismatch.state)})",
                f"expected:  {clean(mismatch.expected)}",
                f"predicted: {clean(mismatch.predicted)}",
            ]
            if mismatch.error:
                details.append(f"policy error: {clean(mismatch.error)}")
            if mismatch.reason and summary.shows_verdicts:
                details.append(f"why: {clean(mismatch.reason)}")
            if tags := ctx.tags(sid, label):
                details.append(f"tags: {';'.join(tags)}")
            if note := ctx.note(sid, label):
                details.append(f"note: {note}")
            if mismatch.observation_excerpt:
                details.append(f"observation: {clean(mismatch.observation_excerpt)}")
            failure = ET.SubElement(case, "failure", message=message, type="mismatch")
            failure.text = "\n".join(details)
        out = [
            f"instruction: {clean(episode.instruction)}",
            f"file: {clean(episode.file)}",
            f"steps matched: {episode.steps_matched} of {episode.steps_total} ({episode.steps_recorded} recorded)",
            f"accuracy: {pct(episode.accuracy)}",
            f"success: {_bool(episode.success)}, final reward: {number(episode.final_reward)}, "
            f"completed by backup: {_bool(episode.completed_by_backup)}",
        ]
        if summary.shows_verdicts:
            out.append(f"equivalent steps (≈, {clean(summary.matching_label)}): {episode.steps_equivalent}")
            out += [
                f"≈ step {clean(e.step_label)} ({clean(e.state)}): expected {clean(e.expected)} got "
                f"{clean(e.predicted)}: {clean(e.reason or '')}"
                for e in episode.equivalents
            ]
        if episode.stopped_early:
            out.append("stopped early at the first mismatch")
        if episode.cancelled:
            out.append("cancelled")
        out += _annotation_lines(ctx, sid)
        ET.SubElement(case, "system-out").text = "\n".join(out)

    for problem in summary.problems:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=clean(Path(clean(problem.file)).stem or "demos"),
            name=f"load problem: {_problem_where(problem)}",
        )
        problem_sid = problem.session_id
        if problem_sid is not None:
            junit_properties(case, _annotation_properties(ctx, problem_sid))
        error = ET.SubElement(
            case, "error", message=shorten(one_line(problem.one_line()), 1_000), type=f"load-{problem.severity}"
        )
        lines = [f"file: {clean(problem.file)}", f"where: {_problem_where(problem)}"]
        if problem.field:
            lines.append(f"field: {clean(problem.field)}")
        lines.append(f"message: {clean(problem.message)}")
        if problem_sid is not None:
            lines += _annotation_lines(ctx, problem_sid)
        error.text = "\n".join(lines)

    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
