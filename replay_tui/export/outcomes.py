"""The reports of a comparison of two logs (:mod:`replay_tui.compare.logs`): JSON, Markdown, CSV, JUnit, HTML.

JSON is for scripts: ``summary`` (integer counts, ``a_outcomes``/``b_outcomes`` as a replay report's
``outcomes``, float ``mcnemar_p``, rates, intervals, pass^k), ``unpaired`` (task keys in one log only)
and ``tasks`` (key, A and B outcome with ``kind``, ``reason`` and ``missed_expected``, first
divergence, A-only and B-only calls, argument differences, the reference actions each run hit).
Markdown is a PR comment: the figures, then every regressed task with its first divergent call. JUnit
has one failing case per regression; HTML is one self-contained page (every task, the regressions first).
"""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from typing import Any

import orjson

from replay_tui.compare import OutcomeComparison, RunsComparison, TaskPair
from replay_tui.episodes.model import OUTCOME_KINDS, Trajectory
from replay_tui.export.text import (
    CSS,
    MD_MAX_CHARS,
    ExportError,
    clean,
    csv_cell,
    esc,
    md_code,
    md_text,
)
from replay_tui.runner import EpisodeOutcome, recorded_outcome_of

DEFAULT_TITLE = "Compare runs of the same tasks"
FORMATS = ("json", "md", "csv", "junit", "html")


def _divergence(task: TaskPair) -> dict[str, Any] | None:
    found = task.divergence
    if found is None:
        return None
    return {
        "row": found.row,
        "kind": found.kind,
        "a_call": found.a_call,
        "b_call": found.b_call,
        "a": found.a,
        "b": found.b,
    }


def _side_outcome(trajectory: Trajectory | None) -> EpisodeOutcome:
    return recorded_outcome_of(trajectory) if trajectory is not None else EpisodeOutcome()


def _side(
    success: bool | None, score: float | None, status: str | None, calls: int, outcome: EpisodeOutcome
) -> dict[str, Any]:
    """One side of a task: the comparison's success and score, and the log's outcome as a replay
    report writes it (kind, reason, the reference actions missed or called differently)."""
    return {
        "success": success,
        "score": score,
        "status": status,
        "calls": calls,
        "kind": outcome.kind,
        "reason": outcome.reason,
        "missed_expected": outcome.missed_expected,
    }


def side_outcomes(comparison: OutcomeComparison) -> dict[str, dict[str, int]]:
    """``a_outcomes`` and ``b_outcomes``: each side's paired tasks by what its log says of them."""
    counts = {side: dict.fromkeys(OUTCOME_KINDS, 0) for side in ("a_outcomes", "b_outcomes")}
    for task in comparison.tasks:
        for side, trajectory in (("a_outcomes", task.a_trajectory), ("b_outcomes", task.b_trajectory)):
            kind = trajectory.outcome.kind if trajectory is not None else "unknown"
            counts[side][kind if kind in counts[side] else "unknown"] += 1
    return counts


def task_record(task: TaskPair) -> dict[str, Any]:
    """One task of the JSON report."""
    a_outcome, b_outcome = _side_outcome(task.a_trajectory), _side_outcome(task.b_trajectory)
    return {
        "key": task.key,
        "task": task.task,
        "change": task.change,
        "a": _side(task.a_success, task.a_score, task.a_status, len(task.a_calls), a_outcome),
        "b": _side(task.b_success, task.b_score, task.b_status, len(task.b_calls), b_outcome),
        "first_divergence": _divergence(task),
        "a_only_calls": task.count("a_only"),
        "b_only_calls": task.count("b_only"),
        "argument_differences": task.count("arguments"),
        "tool_differences": task.count("tool"),
        "expected_actions": [
            {"position": e.position, "action": e.action, "requestor": e.requestor, "a": e.a, "b": e.b}
            for e in task.expected
        ],
    }


def _lost(task: TaskPair) -> list[str]:
    """The agent's reference actions A hit and B did not, by tool name."""
    return [e.name for e in task.expected if e.requestor != "user" and e.change == "lost"]


def _hits(task: TaskPair, labels: tuple[str, str] = ("A", "B")) -> str:
    """``A 4/5 · B 2/5``: the agent's reference actions each run hit; empty without a reference."""
    if not task.expected:
        return ""
    (a, total), (b, _) = task.expected_hit("a"), task.expected_hit("b")
    return f"{labels[0]} {a}/{total} · {labels[1]} {b}/{total}"


def to_json(comparison: OutcomeComparison) -> dict[str, Any]:
    """The JSON report as a dict."""
    return {
        "kind": "outcome_comparison",
        "a": comparison.a_path,
        "b": comparison.b_path,
        "summary": {**comparison.summary(), **side_outcomes(comparison)},
        "unpaired": {"a_only": comparison.a_only, "b_only": comparison.b_only},
        "tasks": [task_record(task) for task in comparison.tasks],
        "warnings": comparison.warnings,
    }


def _md(comparison: OutcomeComparison, title: str, labels: tuple[str, str] = ("A", "B")) -> str:
    x, y = labels
    summary = comparison.summary()
    a, b, diff = summary["a_success"], summary["b_success"], summary["difference"]
    lines = [
        f"## {md_text(title)}",
        "",
        f"{x}: {md_code(comparison.a_path, table=False)} · {y}: {md_code(comparison.b_path, table=False)}",
        "",
        f"| | {x} | {y} |",
        "| --- | --- | --- |",
        f"| success | {a['successes']}/{a['n']} {_pct(a)} | {b['successes']}/{b['n']} {_pct(b)} |",
    ]
    for p in comparison.pass_k:
        lines.append(f"| pass^{p.k} ({p.tasks} tasks) | {p.a:.3f} | {p.b:.3f} |")
    lines += [
        "",
        f"**{summary['paired']} paired**: {summary['regressions']} regressed ({x} ✓, {y} ✗), {summary['fixes']} fixed, "
        f"{summary['both_succeeded']} both succeeded, {summary['both_failed']} both failed. "
        f"{y} − {x} {diff['b_minus_a'] * 100:+.1f} pp [{diff['low'] * 100:+.1f}, {diff['high'] * 100:+.1f}] "
        f"(bootstrap over {diff['clusters']} tasks); exact McNemar p = {summary['mcnemar_p']:.3g}.",
    ]
    hits = summary["expected_actions"]
    if hits["tasks"]:
        lines += [
            "",
            f"Reference actions ({hits['tasks']} tasks carry one, {hits['actions']} for the agent): {x} hit "
            f"{hits['a_matched']}, {y} hit {hits['b_matched']}; {hits['lost']} hit by {x} only, "
            f"{hits['gained']} by {y} only.",
        ]
    if comparison.a_only or comparison.b_only:
        lines += [
            "",
            f"Not paired: {len(comparison.a_only)} task key(s) only in {x}, {len(comparison.b_only)} only in {y}.",
        ]
    regressions = comparison.regressions
    if regressions:
        lines += [
            "",
            f"### Regressions ({len(regressions)})",
            "",
            f"| Task | First divergence | {x} | {y} | Reference actions hit | Hit by {x}, not by {y} |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        groups = ", ".join(
            f"{md_code(tool, 80, table=False)} {count}" for tool, count in comparison.regression_groups().items()
        )
        lines[-2:-2] = [f"By the tool at the first divergence: {groups}", ""]
        for words, named in (
            (f"By the reference action {y} missed", comparison.grouped_regressions("reference")),
            (f"By {y}'s termination", comparison.grouped_regressions("status")),
        ):
            if named:
                listed = ", ".join(f"{md_code(name, 80, table=False)} {len(keys)}" for name, keys in named.items())
                lines[-2:-2] = [f"{words}: {listed}", ""]
        used = sum(len(line) + 1 for line in lines)
        for index, task in enumerate(regressions):
            found = task.divergence
            where = "none (same calls)" if found is None else found.kind.replace("_", " ")
            row = (
                f"| {md_code(task.key, 200)} | {md_text(where)} | {_md_call(found.a if found else None)} "
                f"| {_md_call(found.b if found else None)} | {_hits(task, labels) or '—'} "
                f"| {', '.join(md_code(name, 80) for name in _lost(task)) or '—'} |"
            )
            if used + len(row) > MD_MAX_CHARS - 200:
                lines.append(f"\n… {len(regressions) - index} more regressions (see the JSON report)")
                break
            lines.append(row)
            used += len(row) + 1
    return "\n".join(lines) + "\n"


def _md_call(call: str | None) -> str:
    return md_code(call, 200) if call else "—"


def _pct(rate: dict[str, Any]) -> str:
    return f"{rate['rate'] * 100:.1f}% [{rate['low'] * 100:.1f}–{rate['high'] * 100:.1f}]"


CSV_COLUMNS = (
    "key",
    "task",
    "change",
    "a_success",
    "b_success",
    "a_score",
    "b_score",
    "divergence",
    "a_call",
    "b_call",
    "expected_total",
    "a_expected_hit",
    "b_expected_hit",
    "expected_hit_by_a_only",
)


def _csv(comparison: OutcomeComparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(_csv_rows(comparison))
    return out.getvalue()


def _csv_rows(comparison: OutcomeComparison) -> list[list[Any]]:
    rows = []
    for task in comparison.tasks:
        found = task.divergence
        rows.append(
            [
                csv_cell(task.key),
                csv_cell(task.task),
                task.change,
                task.a_success,
                task.b_success,
                task.a_score,
                task.b_score,
                found.kind if found else "",
                csv_cell(found.a if found and found.a else ""),
                csv_cell(found.b if found and found.b else ""),
                *_csv_hits(task),
            ]
        )
    return rows


def _csv_hits(task: TaskPair) -> list[Any]:
    if not task.expected:
        return ["", "", "", ""]
    (a, total), (b, _) = task.expected_hit("a"), task.expected_hit("b")
    return [total, a, b, csv_cell(" ".join(_lost(task)))]


def _suite(comparison: OutcomeComparison, name: str, labels: tuple[str, str] = ("A", "B")) -> ET.Element:
    x, y = labels
    suite = ET.Element(
        "testsuite",
        name=clean(name),
        tests=str(len(comparison.tasks)),
        failures=str(comparison.counts["regressed"]),
    )
    for task in comparison.tasks:
        case = ET.SubElement(suite, "testcase", classname="replay-tui compare", name=clean(task.key))
        if task.change == "regressed":
            failure = ET.SubElement(case, "failure", message=clean(f"{x} succeeded, {y} failed: {task.key}"))
            text = task.divergence.text() if task.divergence else "same calls, different outcome"
            if _lost(task):
                text += f"\nreference actions {x} hit and {y} did not: {', '.join(_lost(task))}"
            failure.text = clean(text)
    return suite


def _junit(comparison: OutcomeComparison, title: str) -> bytes:
    return ET.tostring(_suite(comparison, title), encoding="utf-8", xml_declaration=True)


_MARKS = {True: "✓", False: "✗", None: "?"}


def _html_body(comparison: OutcomeComparison, labels: tuple[str, str] = ("A", "B")) -> list[str]:
    x, y = labels
    summary = comparison.summary()
    a, b, diff = summary["a_success"], summary["b_success"], summary["difference"]
    rows = [
        f"<tr><td>success</td><td>{a['successes']}/{a['n']} {esc(_pct(a))}</td><td>{b['successes']}/{b['n']} "
        f"{esc(_pct(b))}</td></tr>",
        *(
            f"<tr><td>pass^{p.k} ({p.tasks} tasks)</td><td>{p.a:.3f}</td><td>{p.b:.3f}</td></tr>"
            for p in comparison.pass_k
        ),
    ]
    order = {"regressed": 0, "fixed": 1, "both_failed": 2, "unknown": 3, "both_succeeded": 4}
    tasks = []
    for task in sorted(comparison.tasks, key=lambda t: order[t.change]):
        found = task.divergence
        tasks.append(
            f'<tr class="{esc(task.change)}"><td><code>{esc(task.key)}</code></td><td>{esc(task.change)}</td>'
            f"<td>{_MARKS[task.a_success]}</td><td>{_MARKS[task.b_success]}</td>"
            f"<td>{esc(found.kind if found else '')}</td><td><code>{esc(found.a if found else '')}</code></td>"
            f"<td><code>{esc(found.b if found else '')}</code></td><td>{esc(_hits(task, labels))}</td>"
            f"<td>{esc(', '.join(_lost(task)))}</td></tr>"
        )
    return [
        f"<p>{x}: <code>{esc(comparison.a_path)}</code><br>{y}: <code>{esc(comparison.b_path)}</code></p>",
        f"<table><tr><th></th><th>{x}</th><th>{y}</th></tr>",
        *rows,
        "</table>",
        f"<p><strong>{summary['paired']} paired</strong>: {summary['regressions']} regressed, {summary['fixes']} "
        f"fixed, {summary['both_succeeded']} both succeeded, {summary['both_failed']} both failed; {y} − {x} "
        f"{diff['b_minus_a'] * 100:+.1f} pp [{diff['low'] * 100:+.1f}, {diff['high'] * 100:+.1f}]; exact McNemar "
        f"p = {summary['mcnemar_p']:.3g}. Not paired: {len(comparison.a_only)} only in {x}, "
        f"{len(comparison.b_only)} only in {y}.</p>",
        f"<table><tr><th>task</th><th>change</th><th>{x}</th><th>{y}</th><th>first divergence</th><th>{x}'s call</th>"
        f"<th>{y}'s call</th><th>reference actions hit</th><th>hit by {x}, not by {y}</th></tr>",
        *tasks,
        "</table>",
    ]


def _page(title: str, body: list[str]) -> str:
    head = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">']
    head += [f"<title>{esc(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>", f"<h1>{esc(title)}</h1>"]
    return "\n".join([*head, *body, "</body>", "</html>", ""])


def _html(comparison: OutcomeComparison, title: str) -> str:
    return _page(title, _html_body(comparison))


# --------------------------------------------------------------------------- three or more logs


def _pairs(runs: RunsComparison) -> list[tuple[tuple[str, str], OutcomeComparison]]:
    """Each compared log's labels (A, its own) and its comparison with A."""
    return [((runs.labels[0], label), c) for label, c in zip(runs.labels[1:], runs.comparisons, strict=True)]


def to_json_many(runs: RunsComparison) -> dict[str, Any]:
    """The JSON report of three or more logs: ``runs`` (the combined table), then ``comparisons``, each
    the two-log report of A and one later log (``labels`` say which)."""
    return {
        "kind": "outcome_comparisons",
        "baseline": runs.baseline,
        "common": len(runs.common),
        "runs": runs.runs(),
        "comparisons": [{"labels": list(labels), **to_json(c)} for labels, c in _pairs(runs)],
        "warnings": runs.warnings,
    }


def _rate_cell(rate: dict[str, Any]) -> str:
    return f"{rate['successes']}/{rate['n']} {_pct(rate)}"


def _md_many(runs: RunsComparison, title: str) -> str:
    lines = [
        f"## {md_text(title)}",
        "",
        f"{len(runs.labels)} runs, each compared with {runs.labels[0]} (the baseline) on the tasks they share; "
        f"success on the {len(runs.common)} tasks every run has:",
        "",
        "| Run | Log | Paired with A | Success on common tasks | Regressed | Fixed | McNemar p |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in runs.runs():
        versus = row["paired_with_baseline"] is not None
        lines.append(
            f"| {row['label']} | {md_code(row['log'], 200)} | {row['paired_with_baseline'] if versus else '—'} "
            f"| {_rate_cell(row['success_on_common'])} | {row['regressions'] if versus else '—'} "
            f"| {row['fixes'] if versus else '—'} | {format(row['mcnemar_p'], '.3g') if versus else '—'} |"
        )
    text = "\n".join(lines) + "\n"
    for labels, c in _pairs(runs):
        text += "\n" + _md(c, f"{labels[0]} → {labels[1]}", labels)
    return text


def _csv_many(runs: RunsComparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("run", *CSV_COLUMNS))
    for (_, label), c in _pairs(runs):
        writer.writerows([label, *row] for row in _csv_rows(c))
    return out.getvalue()


def _junit_many(runs: RunsComparison, title: str) -> bytes:
    suites = ET.Element("testsuites", name=clean(title))
    for labels, c in _pairs(runs):
        suites.append(_suite(c, f"{title}: {labels[0]} → {labels[1]}", labels))
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True)


def _html_many(runs: RunsComparison, title: str) -> str:
    rows = [
        f"<tr><td>{esc(row['label'])}</td><td><code>{esc(row['log'])}</code></td>"
        f"<td>{row['paired_with_baseline'] if row['paired_with_baseline'] is not None else '—'}</td>"
        f"<td>{esc(_rate_cell(row['success_on_common']))}</td>"
        f"<td>{row['regressions'] if row['regressions'] is not None else '—'}</td>"
        f"<td>{row['fixes'] if row['fixes'] is not None else '—'}</td>"
        f"<td>{format(row['mcnemar_p'], '.3g') if row['mcnemar_p'] is not None else '—'}</td></tr>"
        for row in runs.runs()
    ]
    body = [
        f"<p>{len(runs.labels)} runs, each compared with {esc(runs.labels[0])} (the baseline); success on the "
        f"{len(runs.common)} tasks every run has.</p>",
        "<table><tr><th>run</th><th>log</th><th>paired with A</th><th>success on common tasks</th><th>regressed</th>"
        "<th>fixed</th><th>McNemar p</th></tr>",
        *rows,
        "</table>",
    ]
    for labels, c in _pairs(runs):
        body += [f"<h2>{esc(labels[0])} → {esc(labels[1])}</h2>", *_html_body(c, labels)]
    return _page(title, body)


def _render_many(runs: RunsComparison, fmt: str, title: str) -> bytes:
    if fmt == "json":
        return orjson.dumps(to_json_many(runs), option=orjson.OPT_INDENT_2) + b"\n"
    if fmt == "md":
        return _md_many(runs, title).encode()
    if fmt == "csv":
        return _csv_many(runs).encode()
    if fmt == "junit":
        return _junit_many(runs, title)
    return _html_many(runs, title).encode()


def render(comparison: OutcomeComparison | RunsComparison, fmt: str, *, title: str | None = None) -> bytes:
    """The report in ``fmt``; ExportError for a format a comparison of logs is not written as."""
    if fmt not in FORMATS:
        raise ExportError(f"a comparison of logs is written as {', '.join(FORMATS)} (not {fmt})")
    if isinstance(comparison, RunsComparison):
        return _render_many(comparison, fmt, title or DEFAULT_TITLE)
    if fmt == "json":
        return orjson.dumps(to_json(comparison), option=orjson.OPT_INDENT_2) + b"\n"
    if fmt == "md":
        return _md(comparison, title or DEFAULT_TITLE).encode()
    if fmt == "csv":
        return _csv(comparison).encode()
    if fmt == "junit":
        return _junit(comparison, title or DEFAULT_TITLE)
    if fmt == "html":
        return _html(comparison, title or DEFAULT_TITLE).encode()
    raise ExportError(f"a comparison of two logs is written as {', '.join(FORMATS)} (not {fmt})")
