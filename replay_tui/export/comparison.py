"""The reports of a comparison of runs: JSON, Markdown, CSV, HTML and JUnit XML (no Textual).

The same formats, suffixes and escaping as a run's report (:mod:`replay_tui.export.text`):

- **Markdown** fits a pull-request comment: the verdict, a summary table (accuracy of A and B with
  Wilson 95 % intervals, B − A with its bootstrap interval, McNemar's p), accuracy by state, the list
  of regressions, then the fixes and the steps both runs got wrong differently, folded;
- **JSON** is the :class:`~replay_tui.compare.Comparison` itself (deterministic);
- **HTML** is one self-contained file with character diffs of each run's prediction against the recording;
- **JUnit** fails one test case per regression (fixes and other flips pass, with their details);
- **CSV** has one row per aligned step and the figures as name/value rows.

An :class:`~replay_tui.compare.Agreement` of three or more runs renders as JSON, Markdown, CSV or HTML.
Rendering is deterministic: the same comparison gives the same bytes. :func:`write_comparison` writes
every comparison, of replay runs or of logs paired by task (:mod:`replay_tui.export.outcomes`).
"""

from __future__ import annotations

import csv
import io
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import TYPE_CHECKING

from replay_tui.compare import (
    FLIP_LABELS,
    Agreement,
    Comparison,
    RunInfo,
    StepPair,
    signed_pp,
)

if TYPE_CHECKING:
    from replay_tui.compare import OutcomeComparison, RunsComparison
from replay_tui.export.text import (
    CSS,
    HTML_DIFF_CHARS,
    MD_MAX_CHARS,
    MD_MAX_ROWS,
    ExportError,
    clean,
    csv_cell,
    esc,
    format_for_path,
    html_diff,
    junit_properties,
    md_code,
    md_text,
    normalize_format,
    number,
    one_line,
    pct,
    plural,
    write_atomic,
)
from replay_tui.stats import PairedStats, Rate

DEFAULT_TITLE = "Compare runs"
SUITE_NAME = "replay-tui compare"
CSV_COLUMNS: tuple[str, ...] = (
    "kind",  # step | stat | run
    "episode",
    "session_a",
    "session_b",
    "step",
    "state",
    "flip",
    "expected",
    "predicted_a",
    "predicted_b",
    "verdict_a",
    "verdict_b",
    "name",
    "value",
)
AGREEMENT_FORMATS: tuple[str, ...] = ("json", "md", "csv", "html")


# --------------------------------------------------------------------------- public API


def render_comparison(comparison: Comparison, fmt: str, *, title: str | None = None) -> bytes:
    """The comparison as a report in ``fmt`` (json, md, csv, html, junit; the aliases of export) as UTF-8."""
    name = normalize_format(fmt)
    heading = one_line(title or "") or DEFAULT_TITLE
    if name == "json":
        return comparison.to_json()
    if name == "md":
        return _md(comparison, heading).encode("utf-8")
    if name == "csv":
        return _csv(comparison).encode("utf-8")
    if name == "html":
        return _html(comparison, heading).encode("utf-8")
    return _junit(comparison)


def render_agreement(agreement: Agreement, fmt: str, *, title: str | None = None) -> bytes:
    """The agreement of several runs in ``fmt`` (json, md, csv or html)."""
    name = normalize_format(fmt)
    heading = one_line(title or "") or "Agreement between runs"
    if name == "json":
        return agreement.to_json()
    if name == "md":
        return _agreement_md(agreement, heading).encode("utf-8")
    if name == "csv":
        return _agreement_csv(agreement).encode("utf-8")
    if name == "html":
        return _agreement_html(agreement, heading).encode("utf-8")
    raise ExportError(f"an agreement of several runs is written as {', '.join(AGREEMENT_FORMATS)}, not {name}")


def write_comparison(
    path: str | os.PathLike[str],
    report: Comparison | Agreement | OutcomeComparison | RunsComparison,
    fmt: str | None = None,
    *,
    title: str | None = None,
) -> Path:
    """Render and atomically write any comparison: of replay runs (or their agreement), or of logs paired
    by task (:mod:`replay_tui.export.outcomes`, imported only for those); the format follows the suffix
    unless given."""
    name = normalize_format(fmt) if fmt else format_for_path(path)
    if isinstance(report, Agreement):
        data = render_agreement(report, name, title=title)
    elif isinstance(report, Comparison):
        data = render_comparison(report, name, title=title)
    else:
        from replay_tui.export.outcomes import render

        data = render(report, name, title=title)
    return write_atomic(path, data)


def status(comparison: Comparison) -> tuple[str, str]:
    """``(status, sentence)``: ``fail`` when any step regressed, ``pass`` otherwise."""
    flips = comparison.flips
    regressed = flips["regressed"]
    parts = [
        plural(regressed, "regression", "regressions"),
        f"{flips['fixed']} fixed",
        f"{flips['both_wrong_different']} both wrong with different predictions",
        f"{flips['both_right'] + flips['both_wrong_same']} unchanged",
    ]
    return ("fail" if regressed else "pass"), ", ".join(parts) + "; " + comparison.overlap.describe()


SIGNIFICANT_P = 0.05
"""The McNemar p-value under which the headline calls the difference in accuracy real."""


def verdict_words(comparison: Comparison) -> tuple[str, str]:
    """``(icon, words)`` heading a comparison: what the regressions weigh against the fixes and
    whether the difference is significant, in words, so a candidate that is better overall with a
    few regressions is not headed like one that got worse. (``status`` stays the CI gate.)"""
    o = comparison.overall
    regressed = comparison.flips["regressed"]
    significant = o.mcnemar_p < SIGNIFICANT_P
    change = f"{signed_pp(o.difference)}, McNemar p = {o.mcnemar_p:.2g}"
    if not regressed:
        return "✅", "No regression"
    if significant and o.difference > 0:
        return "⚠️", f"B is better ({change}), with {plural(regressed, 'regression', 'regressions')}"
    if significant and o.difference < 0:
        return "❌", f"B is worse ({change})"
    return "⚠️", f"Regressions, no significant difference ({change})"


# --------------------------------------------------------------------------- shared helpers


def _rate(rate: Rate) -> str:
    """``21.6% [18.0–25.7]`` (the Wilson 95 % interval in brackets)."""
    return f"{pct(rate.rate)} [{rate.low * 100:.1f}–{rate.high * 100:.1f}]"


def _difference(stats: PairedStats) -> str:
    return f"{signed_pp(stats.difference)} [{signed_pp(stats.low)}, {signed_pp(stats.high)}]"


def _p(value: float) -> str:
    return f"{value:.3g}"


def _run_line(info: RunInfo) -> list[tuple[str, str]]:
    """A run's description as name/value pairs."""
    pairs = [
        ("name", info.name),
        ("source", info.source),
        ("policy", info.mode),
        ("mismatch_policy", info.mismatch_policy),
        ("matching", info.matching),
        ("item_steps", "on" if info.include_item_steps else "off"),
        ("episodes", str(info.episodes)),
        ("steps", str(info.steps)),
        ("files", "; ".join(Path(f.name).name for f in info.demo_files)),
        ("hashes", "sha256" if info.hashes_known else "unknown"),
    ]
    if info.model:
        pairs.append(("model", info.model))
    if info.created:
        pairs.append(("created", info.created))
    return [(name, clean(value)) for name, value in pairs if value]


def _stat_rows(comparison: Comparison) -> list[tuple[str, PairedStats]]:
    rows = [("Step accuracy", comparison.overall)]
    if comparison.accepted.a.right != comparison.overall.a.right or comparison.accepted.b.right != (
        comparison.overall.b.right
    ):
        rows.append(("Steps right with ≈ accepted", comparison.accepted))
    rows.append(("Episodes fully matched", comparison.episodes_stats))
    return rows


def _stat_pairs(comparison: Comparison) -> list[tuple[str, str]]:
    """Every figure as a name/value pair (CSV rows, JUnit properties)."""
    pairs: list[tuple[str, str]] = []
    for name, stats in [
        ("steps", comparison.overall),
        ("accepted", comparison.accepted),
        ("episodes", comparison.episodes_stats),
        *((f"state[{clean(state)}]", stats) for state, stats in comparison.by_state.items()),
    ]:
        pairs += [
            (f"{name}.n", str(stats.n)),
            (f"{name}.a", number(stats.a.rate)),
            (f"{name}.a_low", number(stats.a.low)),
            (f"{name}.a_high", number(stats.a.high)),
            (f"{name}.b", number(stats.b.rate)),
            (f"{name}.b_low", number(stats.b.low)),
            (f"{name}.b_high", number(stats.b.high)),
            (f"{name}.difference", number(stats.difference)),
            (f"{name}.difference_low", number(stats.low)),
            (f"{name}.difference_high", number(stats.high)),
            (f"{name}.right_only_a", str(stats.a_only)),
            (f"{name}.right_only_b", str(stats.b_only)),
            (f"{name}.mcnemar_p", number(stats.mcnemar_p)),
        ]
    pairs += [(f"flips.{flip}", str(count)) for flip, count in comparison.flips.items()]
    pairs += [(f"episode_flips.{flip}", str(count)) for flip, count in comparison.episode_flips.items()]
    overlap = comparison.overlap
    pairs += [
        ("overlap.episodes_common", str(overlap.episodes_common)),
        ("overlap.episodes_only_a", str(overlap.episodes_only_a)),
        ("overlap.episodes_only_b", str(overlap.episodes_only_b)),
        ("overlap.steps_common", str(overlap.steps_common)),
        ("overlap.steps_only_a", str(overlap.steps_only_a)),
        ("overlap.steps_only_b", str(overlap.steps_only_b)),
    ]
    return pairs


def _take(lines: list[str], budget: int, max_items: int = MD_MAX_ROWS) -> list[str]:
    """The leading lines that fit in ``budget`` characters, at most ``max_items``."""
    taken: list[str] = []
    used = 0
    for line in lines:
        if len(taken) >= max_items or used + len(line) + 1 > budget:
            break
        taken.append(line)
        used += len(line) + 1
    return taken


# --------------------------------------------------------------------------- Markdown


def _md_prediction(step: StepPair, run: str) -> str:
    predicted = step.predicted_a if run == "a" else step.predicted_b
    error = step.error_a if run == "a" else step.error_b
    right = step.right_a if run == "a" else step.right_b
    cell = f"{'✓' if right else '✗'} {md_code(predicted)}"
    if error:
        cell += f" ⚠️ {md_code(error, 120)}"
    return cell


def _md_step_rows(steps: list[StepPair]) -> list[str]:
    return [
        f"| {md_code(step.episode, 40)} | {md_code(step.step_label, 20)} | {md_code(step.state, 60)} "
        f"| {md_code(step.expected)} | {_md_prediction(step, 'a')} | {_md_prediction(step, 'b')} |"
        for step in steps[:MD_MAX_ROWS]
    ]


_MD_STEP_HEAD = ["| Episode | Step | State | Expected | A | B |", "| --- | --- | --- | --- | --- | --- |"]


def _md_steps(title: str, steps: list[StepPair], budget: int, *, folded: bool) -> list[str]:
    if not steps:
        return []
    taken = _take(_md_step_rows(steps), budget - 300)
    body = [*_MD_STEP_HEAD, *taken]
    if len(steps) > len(taken):
        body += ["", f"… and {len(steps) - len(taken)} more"]
    if folded:
        return [f"<details><summary>{md_text(title)}</summary>", "", *body, "", "</details>", ""]
    return [f"### {md_text(title)}", "", *body, ""]


def _md_regression_groups(comparison: Comparison) -> list[str]:
    """What kind of step regressed: the regressions grouped like a run's mismatches."""
    groups = comparison.regression_groups
    if not groups:
        return []
    lines = [
        f"### What regressed ({len(groups)} groups)",
        "",
        "| Count | State | Expected → B's tool | Reason (B) | Sample |",
        "| ---: | --- | --- | --- | --- |",
    ]
    for group in groups[:20]:
        lines.append(
            f"| {group.count} | {md_code(group.state, 60)} | {md_code(group.expected_tool, 60)} → "
            f"{md_code(group.predicted_tool, 60)} | {md_text(group.reason_kind, 120)} "
            f"| {md_text(group.sample_reason, 160)} |"
        )
    if len(groups) > 20:
        lines.append(f"| … | {len(groups) - 20} more groups | | | |")
    return [*lines, ""]


def _md(comparison: Comparison, title: str) -> str:
    _, sentence = status(comparison)
    icon, words = verdict_words(comparison)
    a, b = comparison.a, comparison.b
    head = [f"## {md_text(title, 200)}", ""]
    head += [f"**{icon} {md_text(words)}:** {md_text(sentence)}", ""]
    head += [
        "| Run | Name | Policy | Matching | Mismatch | Episodes | Steps |",
        "| --- | --- | --- | --- | --- | ---: | ---: |",
    ]
    for info, role in ((a, "A (baseline)"), (b, "B")):
        head.append(
            f"| {role} | {md_code(info.name, 80)} | {md_code(info.mode, 80)} | {md_code(info.matching, 80)} "
            f"| {md_code(info.mismatch_policy, 20)} | {info.episodes} | {info.steps} |"
        )
    head += ["", "| | A | B | B − A (95% CI) | McNemar p (✓→✗ / ✗→✓) |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, stats in _stat_rows(comparison):
        head.append(
            f"| {name} (n={stats.n}) | {_rate(stats.a)} | {_rate(stats.b)} | {_difference(stats)} "
            f"| {_p(stats.mcnemar_p)} ({stats.a_only} / {stats.b_only}) |"
        )
    head += ["", f"Accuracies with Wilson 95% intervals. {md_text(comparison.note)}", ""]
    if comparison.warnings:
        head += [f"> ⚠️ {md_text(warning)}" for warning in comparison.warnings]
        head.append("")
    if comparison.by_state:
        head += [
            "### Accuracy by state",
            "",
            "| State | Steps | A | B | B − A | ✓→✗ | ✗→✓ | McNemar p |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        head += [
            f"| {md_code(state, 60)} | {stats.n} | {_rate(stats.a)} | {_rate(stats.b)} | {_difference(stats)} "
            f"| {stats.a_only} | {stats.b_only} | {_p(stats.mcnemar_p)} |"
            for state, stats in list(comparison.by_state.items())[:40]
        ]
        head.append("")
    remaining = MD_MAX_CHARS - sum(len(line) + 1 for line in head) - 2_000
    regressions = comparison.regressions
    lines = [*head, *_md_regression_groups(comparison)]
    if regressions:
        section = _md_steps(f"Regressions ({len(regressions)})", regressions, int(remaining * 0.6), folded=False)
    else:
        section = ["### Regressions (0)", "", "No step regressed.", ""]
    lines += section
    remaining -= sum(len(line) + 1 for line in section)
    fixes = comparison.fixes
    section = _md_steps(f"{plural(len(fixes), 'fix', 'fixes')} ✗→✓", fixes, int(remaining * 0.5), folded=True)
    lines += section
    remaining -= sum(len(line) + 1 for line in section)
    different = [step for step in comparison.steps if step.flip == "both_wrong_different"]
    section = _md_steps(
        f"{len(different)} both wrong with different predictions", different, int(remaining * 0.7), folded=True
    )
    lines += section
    remaining -= sum(len(line) + 1 for line in section)
    episodes = [e for e in comparison.episodes if e.flip in ("regressed", "fixed")]
    if episodes:
        rows = [
            f"- {md_code(e.episode, 40, table=False)} {'regressed ✓→✗' if e.flip == 'regressed' else 'fixed ✗→✓'} "
            f"({e.regressed} steps regressed, {e.fixed} fixed)"
            for e in episodes
        ]
        taken = _take(rows, remaining - 200)
        flips = comparison.episode_flips
        summary = (
            f"Episodes: {flips['regressed']} regressed, {flips['fixed']} fixed (every step matched in one run only)"
        )
        lines += [f"<details><summary>{md_text(summary)}</summary>", "", *taken]
        if len(rows) > len(taken):
            lines.append(f"- … and {len(rows) - len(taken)} more episodes")
        lines += ["", "</details>", ""]
    text = "\n".join(lines).rstrip("\n") + "\n"
    if len(text) > MD_MAX_CHARS:  # a safety net: the budgets keep well below the cap
        cut = text.rfind("\n", 0, MD_MAX_CHARS - 100)
        text = text[:cut] + "\n\n… report cut to fit the size limit\n"
    return text


def _agreement_md(agreement: Agreement, title: str) -> str:
    runs = agreement.runs
    lines = [f"## {md_text(title, 200)}", ""]
    lines += [
        f"**{agreement.all_agree} of {agreement.common_steps} steps replayed by all {len(runs)} runs agree** "
        f"(same verdict and prediction); {agreement.all_right} right in every run, "
        f"{agreement.all_wrong} wrong in every run",
        "",
        "| Run | Name | Policy | Steps | Accuracy on common steps |",
        "| --- | --- | --- | ---: | ---: |",
    ]
    for info, rate in zip(runs, agreement.accuracy, strict=True):
        lines.append(
            f"| {info.label} | {md_code(info.name, 80)} | {md_code(info.mode, 80)} | {info.steps} | {_rate(rate)} |"
        )
    lines += ["", "| | " + " | ".join(info.label for info in runs) + " |", "| --- |" + " ---: |" * len(runs)]
    for i, info in enumerate(runs):
        cells = [f"{pct(agreement.matrix[i][j])} ({agreement.pair_steps[i][j]})" for j in range(len(runs))]
        lines.append(f"| {info.label} | " + " | ".join(cells) + " |")
    lines += ["", "Agreement: same verdict and same prediction, on the steps both runs replayed (in brackets).", ""]
    lines += [f"> ⚠️ {md_text(warning)}" for warning in agreement.warnings]
    if agreement.disagreements:
        lines += ["", "### First disagreements", ""]
        lines += ["| Episode | Step | Expected | " + " | ".join(info.label for info in runs) + " |"]
        lines += ["| --- | --- | --- |" + " --- |" * len(runs)]
        for item in agreement.disagreements:
            cells = [
                f"{'✓' if verdict == 'match' else '✗'} {md_code(predicted, 120)}"
                for predicted, verdict in zip(item["predicted"], item["verdicts"], strict=True)
            ]
            lines.append(
                f"| {md_code(item['episode'], 40)} | {md_code(item['step_label'], 20)} "
                f"| {md_code(item['expected'], 120)} | " + " | ".join(cells) + " |"
            )
    return "\n".join(lines).rstrip("\n") + "\n"


# --------------------------------------------------------------------------- CSV


def _csv(comparison: Comparison) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)

    def row(**cells: str) -> None:
        writer.writerow([cells.get(column, "") for column in CSV_COLUMNS])

    for step in comparison.steps:
        row(
            kind="step",
            episode=csv_cell(step.episode),
            session_a=str(step.session_a),
            session_b=str(step.session_b),
            step=csv_cell(step.step_label),
            state=csv_cell(step.state),
            flip=step.flip,
            expected=csv_cell(step.expected),
            predicted_a=csv_cell(step.predicted_a),
            predicted_b=csv_cell(step.predicted_b),
            verdict_a=step.verdict_a,
            verdict_b=step.verdict_b,
        )
    for name, value in _stat_pairs(comparison):
        row(kind="stat", name=csv_cell(name), value=csv_cell(value))
    for info in (comparison.a, comparison.b):
        for name, value in _run_line(info):
            row(kind="run", name=csv_cell(f"{info.label}.{name}"), value=csv_cell(value))
    return buffer.getvalue()


def _agreement_csv(agreement: Agreement) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(("run_i", "run_j", "agreement", "steps"))
    for i, first in enumerate(agreement.runs):
        for j, second in enumerate(agreement.runs):
            writer.writerow(
                (
                    csv_cell(first.label),
                    csv_cell(second.label),
                    number(agreement.matrix[i][j]),
                    agreement.pair_steps[i][j],
                )
            )
    return buffer.getvalue()


# --------------------------------------------------------------------------- HTML

_COMPARE_CSS = """
tr.regressed td:first-child { border-left: 3px solid var(--bad); }
tr.fixed td:first-child { border-left: 3px solid var(--ok); }
.ok { color: var(--ok); } .bad { color: var(--bad); } .warn { color: var(--warn); }
"""


def _html_prediction(expected: str, predicted: str, right: bool, error: str | None) -> str:
    mark = '<span class="ok">✓</span> ' if right else '<span class="bad">✗</span> '
    if right:
        shown = esc(predicted if len(predicted) <= HTML_DIFF_CHARS else predicted[:HTML_DIFF_CHARS] + "…")
    else:
        _, shown = html_diff(expected, predicted)
    out = mark + f'<span class="action">{shown}</span>'
    if error:
        out += f'<br><span class="error">{esc(error)}</span>'
    return out


def _html_steps(title: str, anchor: str, steps: list[StepPair], *, open_: bool) -> list[str]:
    out = [f'<h2 id="{anchor}">{esc(title)} ({len(steps)})</h2>']
    if not steps:
        return [*out, '<p class="muted">None.</p>']
    rows = []
    for step in steps:
        rows.append(
            f'<tr class="{step.flip}"><td>{esc(step.episode)}</td><td>{esc(step.step_label)}</td>'
            f"<td><code>{esc(step.state)}</code></td>"
            f'<td class="action">{esc(step.expected)}</td>'
            f"<td>{_html_prediction(step.expected, step.predicted_a, step.right_a, step.error_a)}</td>"
            f"<td>{_html_prediction(step.expected, step.predicted_b, step.right_b, step.error_b)}</td></tr>"
        )
    table = (
        "<table><thead><tr><th>Episode</th><th>Step</th><th>State</th><th>Expected</th><th>A</th><th>B</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    return [*out, f"<details{' open' if open_ else ''}><summary>{len(steps)} steps</summary>{table}</details>"]


def _html_page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(title)}</title>",
            f"<style>{CSS}{_COMPARE_CSS}</style>",
            "</head>",
            "<body>",
            f"<h1>{esc(title)}</h1>",
            *body,
            "</body>",
            "</html>",
            "",
        ]
    )


def _html_runs(runs: list[RunInfo]) -> str:
    rows = "".join(
        f"<tr><td>{esc(info.label)}</td><td><code>{esc(info.name)}</code></td><td><code>{esc(info.mode)}</code></td>"
        f"<td><code>{esc(info.matching)}</code></td><td>{esc(info.mismatch_policy)}</td>"
        f'<td class="num">{info.episodes}</td><td class="num">{info.steps}</td>'
        f"<td>{esc('; '.join(Path(f.name).name for f in info.demo_files))}"
        f"{'' if info.hashes_known else ' <span class=muted>(hashes unknown)</span>'}</td></tr>"
        for info in runs
    )
    return (
        "<table><thead><tr><th>Run</th><th>Name</th><th>Policy</th><th>Matching</th><th>Mismatch</th>"
        f"<th>Episodes</th><th>Steps</th><th>Demo files</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _html(comparison: Comparison, title: str) -> str:
    state, sentence = status(comparison)
    _, words = verdict_words(comparison)
    body = [
        f'<p class="verdict"><span class="status status-{state}">{esc(words)}</span> {esc(sentence)}</p>',
        '<h2 id="runs">Runs</h2>',
        _html_runs([comparison.a, comparison.b]),
    ]
    flips = comparison.flips
    cards = [
        (str(flips["regressed"]), "regressed ✓→✗"),
        (str(flips["fixed"]), "fixed ✗→✓"),
        (str(flips["both_wrong_different"]), "both wrong, different"),
        (str(comparison.overall.n), "steps compared"),
        (signed_pp(comparison.overall.difference), "accuracy B − A"),
    ]
    body.append(
        '<div class="cards">'
        + "".join(
            f'<div class="card"><span class="value">{esc(value)}</span><span class="label">{esc(label)}</span></div>'
            for value, label in cards
        )
        + "</div>"
    )
    rows = "".join(
        f"<tr><td>{esc(name)} (n={stats.n})</td><td class='num'>{esc(_rate(stats.a))}</td>"
        f"<td class='num'>{esc(_rate(stats.b))}</td><td class='num'>{esc(_difference(stats))}</td>"
        f"<td class='num'>{esc(_p(stats.mcnemar_p))} ({stats.a_only} / {stats.b_only})</td></tr>"
        for name, stats in _stat_rows(comparison)
    )
    body += [
        '<h2 id="summary">Summary</h2>',
        "<table><thead><tr><th></th><th>A</th><th>B</th><th>B − A (95% CI)</th>"
        f"<th>McNemar p (✓→✗ / ✗→✓)</th></tr></thead><tbody>{rows}</tbody></table>",
        f'<p class="muted">Accuracies with Wilson 95% intervals. {esc(comparison.note)}</p>',
    ]
    body += [f'<p class="warn">⚠ {esc(warning)}</p>' for warning in comparison.warnings]
    if comparison.by_state:
        rows = "".join(
            f"<tr><td><code>{esc(name)}</code></td><td class='num'>{stats.n}</td>"
            f"<td class='num'>{esc(_rate(stats.a))}</td><td class='num'>{esc(_rate(stats.b))}</td>"
            f"<td class='num'>{esc(_difference(stats))}</td><td class='num'>{stats.a_only}</td>"
            f"<td class='num'>{stats.b_only}</td><td class='num'>{esc(_p(stats.mcnemar_p))}</td></tr>"
            for name, stats in comparison.by_state.items()
        )
        body += [
            '<h2 id="states">Accuracy by state</h2>',
            "<table><thead><tr><th>State</th><th>Steps</th><th>A</th><th>B</th><th>B − A</th><th>✓→✗</th>"
            f"<th>✗→✓</th><th>McNemar p</th></tr></thead><tbody>{rows}</tbody></table>",
        ]
    if comparison.regression_groups:
        group_rows = "".join(
            f"<tr><td class='num'>{group.count}</td><td>{esc(group.state)}</td>"
            f"<td>{esc(group.expected_tool)} → {esc(group.predicted_tool)}</td><td>{esc(group.reason_kind)}</td>"
            f"<td>{esc(group.sample_reason)}</td></tr>"
            for group in comparison.regression_groups
        )
        body += [
            '<h2 id="regression-groups">What regressed</h2>',
            "<table><thead><tr><th>Count</th><th>State</th><th>Expected → B's tool</th><th>Reason (B)</th>"
            f"<th>Sample</th></tr></thead><tbody>{group_rows}</tbody></table>",
        ]
    body += _html_steps("Regressions", "regressions", comparison.regressions, open_=True)
    body += _html_steps("Fixes", "fixes", comparison.fixes, open_=False)
    body += _html_steps(
        "Both wrong, different predictions",
        "different",
        [step for step in comparison.steps if step.flip == "both_wrong_different"],
        open_=False,
    )
    episodes = [e for e in comparison.episodes if e.shown]
    rows = "".join(
        f'<tr class="{e.flip}"><td>{esc(e.episode)}</td><td>{esc(e.instruction)}</td>'
        f'<td class="num">{e.right_a}/{e.steps}</td><td class="num">{e.right_b}/{e.steps}</td>'
        f'<td class="num">{e.regressed}</td><td class="num">{e.fixed}</td><td>{esc(e.flip.replace("_", " "))}</td></tr>'
        for e in episodes
    )
    body += [
        f'<h2 id="episodes">Episodes with flips ({len(episodes)})</h2>',
        "<table><thead><tr><th>Episode</th><th>Instruction</th><th>A right</th><th>B right</th><th>✓→✗</th>"
        f"<th>✗→✓</th><th>Episode</th></tr></thead><tbody>{rows}</tbody></table>",
    ]
    return _html_page(title, body)


def _agreement_html(agreement: Agreement, title: str) -> str:
    runs = agreement.runs
    head = "".join(f"<th>{esc(info.label)}</th>" for info in runs)
    rows = "".join(
        f"<tr><th>{esc(info.label)}</th>"
        + "".join(
            f'<td class="num">{pct(agreement.matrix[i][j])} '
            f'<span class="muted">({agreement.pair_steps[i][j]})</span></td>'
            for j in range(len(runs))
        )
        + "</tr>"
        for i, info in enumerate(runs)
    )
    body = [
        f"<p>{agreement.all_agree} of {agreement.common_steps} steps replayed by all {len(runs)} runs agree "
        f"(same verdict and prediction); {agreement.all_right} right in every run, "
        f"{agreement.all_wrong} wrong in every run.</p>",
        _html_runs(runs),
        f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{rows}</tbody></table>",
        *(f'<p class="warn">⚠ {esc(warning)}</p>' for warning in agreement.warnings),
    ]
    return _html_page(title, body)


# --------------------------------------------------------------------------- JUnit XML


def _junit(comparison: Comparison) -> bytes:
    flipped = comparison.shown_steps
    regressed = comparison.flips["regressed"]
    counts = {"tests": str(len(flipped) + 1), "failures": str(regressed), "errors": "0"}
    root = ET.Element("testsuites", {"name": SUITE_NAME, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE_NAME, **counts, "skipped": "0"})
    run_pairs = [
        (f"{info.label}.{name}", value) for info in (comparison.a, comparison.b) for name, value in _run_line(info)
    ]
    junit_properties(suite, run_pairs + _stat_pairs(comparison))
    case = ET.SubElement(
        suite, "testcase", classname="compare", name="comparison", assertions=str(comparison.overall.n)
    )
    _, sentence = status(comparison)
    out = [
        sentence,
        *(
            f"{name}: A {_rate(s.a)}, B {_rate(s.b)}, B − A {_difference(s)}, McNemar p {_p(s.mcnemar_p)}"
            for name, s in _stat_rows(comparison)
        ),
    ]
    out += [comparison.note, *comparison.warnings]
    ET.SubElement(case, "system-out").text = "\n".join(clean(line) for line in out)
    for step in flipped:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=clean(f"episode {step.episode}"),
            name=clean(f"step {step.step_label} ({step.state}) {step.flip.replace('_', ' ')}"),
        )
        details = [
            f"episode {clean(step.episode)}, step {clean(step.step_label)} ({clean(step.state)}): "
            f"{FLIP_LABELS[step.flip]}",
            f"expected:    {clean(step.expected)}",
            f"A predicted: {clean(step.predicted_a)} ({step.verdict_a})",
            f"B predicted: {clean(step.predicted_b)} ({step.verdict_b})",
        ]
        if step.error_b:
            details.append(f"B policy error: {clean(step.error_b)}")
        if step.reason_b:
            details.append(f"why (B): {clean(step.reason_b)}")
        if step.flip == "regressed":
            message = (
                f"step {one_line(step.step_label)} regressed: expected {one_line(step.expected)[:300]} "
                f"got {one_line(step.predicted_b)[:300] or 'no action'} (A had it right)"
            )
            failure = ET.SubElement(case, "failure", message=message, type="regression")
            failure.text = "\n".join(details)
        else:
            ET.SubElement(case, "system-out").text = "\n".join(details)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
