import csv
import io
import json
import os
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from replay_tui import fileio
from replay_tui.annotations import AnnotationStore
from replay_tui.env import OfflineWebshopEnv
from replay_tui.examples import example_path
from replay_tui.export import (
    CSV_COLUMNS,
    CSV_OUTCOME_COLUMNS,
    FORMATS,
    MD_MAX_CHARS,
    ExportError,
    format_for_path,
    md_code,
    render_report,
    report_dict,
    report_json,
    write_report,
)
from replay_tui.formats.webshop_demos.index import open_demos
from replay_tui.groups import group_mismatches
from replay_tui.policies import HeuristicPolicy, StubPolicy
from replay_tui.runner import EpisodeReport, Mismatch, Runner, summarize
from replay_tui.sanitize import strip_control
from replay_tui.stats import wilson
from tests.conftest import episode, result_step, search_step, write_json

HOSTILE = "[bold red]x[/] <script>alert(1)</script> a|b ``tick`` \x1b[31mred\x1b[0m nul\x00 &amp; two\nlines"
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def heuristic_summary():
    env = OfflineWebshopEnv(open_demos(example_path()), mismatch_policy="allow")
    return Runner(env, HeuristicPolicy(), mode="heuristic").run_all([0, 1, 2, 3, 4])


@pytest.fixture(scope="module")
def summary():
    report = heuristic_summary()
    assert report.total_mismatches > 0
    return report


@pytest.fixture
def store(tmp_path):
    store = AnnotationStore(tmp_path / "demos.annotations.json")
    store.toggle_tag(0, None, "policy-bug")
    store.set_note(0, None, "episode-note-words")
    store.toggle_tag(0, "1", "data-issue")
    store.set_note(0, "1", "step-note-words")
    store.set_note(77, None, "note-on-a-session-not-in-the-run")
    return store


class HostilePolicy:
    """Answers with markup and control characters; its third call raises with the same text."""

    def __init__(self):
        self.calls = 0

    def predict_action(self, observation, state, available_actions, llm_prompt_repr):
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("boom " + HOSTILE)
        return "click[" + HOSTILE + "]"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A run over a demo file whose instruction, actions, a session id and a policy error are hostile."""
    path = tmp_path_factory.mktemp("hostile") / "hostile_demos_1-3.json"
    write_json(
        path,
        [
            episode(1, [search_step(0, keywords=HOSTILE), result_step(1, "Next")], instruction="instr " + HOSTILE),
            {"session_id": "<script>\x1b]0;title\x07", "instruction": HOSTILE, "trajectory": "nope"},
            episode(3, [search_step(0)], instruction='=HYPERLINK("http://evil") ' + HOSTILE),
        ],
    )
    env = OfflineWebshopEnv(open_demos(path), mismatch_policy="allow")
    report = Runner(env, HostilePolicy(), mode="hostile \x1b[2J<b>mode</b>").run_all()
    store = AnnotationStore(tmp_path_factory.mktemp("notes") / "x.annotations.json")
    store.toggle_tag(1, None, "@evil-tag")
    store.set_note(1, None, "=cmd|' /C calc'!A0 " + HOSTILE)
    store.set_note(1, "0", "-step note " + HOSTILE)
    assert report.total_mismatches == 3 and len(report.problems) == 1
    assert any(m.error for e in report.episodes for m in e.mismatches)
    return report, store


# --------------------------------------------------------------------------- parsing helpers

VOID = {"meta", "br", "input", "link", "img", "hr", "wbr", "col", "source"}


class StrictHTML(HTMLParser):
    """Records start tags and text, checks that every element is closed in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.actions: list[list[str]] = []
        self._open_actions: list[tuple[int, list[str]]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag == "dd" and "action" in (attrs.get("class") or "").split():
            capture: list[str] = []
            self.actions.append(capture)
            self._open_actions.append((len(self.stack), capture))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            return
        if self._open_actions and self._open_actions[-1][0] == len(self.stack):
            self._open_actions.pop()
        self.stack.pop()

    def handle_data(self, data):
        if self.stack and self.stack[-1] in ("script", "style"):
            return
        self.text.append(data)
        for _, capture in self._open_actions:
            capture.append(data)


def parse_html(data: bytes) -> StrictHTML:
    parser = StrictHTML()
    parser.feed(data.decode("utf-8"))
    parser.close()
    assert parser.errors == [] and parser.stack == []
    return parser


def parse_csv(data: bytes) -> list[dict[str, str]]:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    columns = CSV_COLUMNS + CSV_OUTCOME_COLUMNS  # the outcome columns come last, the seed's stay in place
    assert tuple(rows[0]) == columns
    assert all(len(row) == len(columns) for row in rows)
    return [dict(zip(columns, row, strict=True)) for row in rows[1:]]


def parse_csv_verdicts(data: bytes) -> list[dict[str, str]]:
    """A CSV with the verdict columns (a run judged with reasons)."""
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def md_scan(text: str) -> tuple[str, list[str]]:
    """Split Markdown into the text outside code spans (backslash escapes kept) and the code spans' contents."""
    outside: list[str] = []
    spans: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            outside.append(text[i : i + 2])
            i += 2
            continue
        if text[i] == "`":
            fence = re.match(r"`+", text[i:]).group()
            end = re.compile(r"(?<!`)" + fence + r"(?!`)").search(text, i + len(fence))
            if end and "\n" not in text[i : end.start()]:
                spans.append(text[i + len(fence) : end.start()])
                i = end.end()
                continue
            outside.append(fence)
            i += len(fence)
            continue
        outside.append(text[i])
        i += 1
    return "".join(outside), spans


def md_table_rows(text: str, header_start: str) -> list[list[str]]:
    """The data rows of the table whose header starts with ``header_start``, split like GFM does."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def all_strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from all_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from all_strings(item)


# --------------------------------------------------------------------------- format selection


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("r.json", "json"),
        ("r.JSON", "json"),
        ("r.md", "md"),
        ("r.markdown", "md"),
        ("r.csv", "csv"),
        ("r.html", "html"),
        ("r.htm", "html"),
        ("r.xml", "junit"),
        ("dir.d/report.Xml", "junit"),
    ],
)
def test_format_for_path(name, fmt):
    assert format_for_path(name) == fmt
    assert format_for_path(Path(name)) == fmt


@pytest.mark.parametrize("name", ["report", "report.txt", "report.json.gz", ".json", "evil\n\x1b[2Jname.pdf"])
def test_format_for_path_rejects_unknown_suffixes_in_one_line(name):
    with pytest.raises(ExportError) as info:
        format_for_path(name)
    message = str(info.value)
    assert "\n" not in message and "\x1b" not in message and ".json" in message


def test_render_report_rejects_unknown_formats_and_accepts_aliases(summary):
    with pytest.raises(ExportError):
        render_report(summary, "pdf")
    assert render_report(summary, "markdown") == render_report(summary, "md")
    assert render_report(summary, "xml") == render_report(summary, "junit")
    assert set(FORMATS) == {"json", "md", "csv", "html", "junit"}


# --------------------------------------------------------------------------- every format


@pytest.mark.parametrize("fmt", FORMATS)
def test_rendering_is_deterministic(summary, store, fmt):
    first = render_report(summary, fmt, store, title="Nightly")
    assert first == render_report(summary, fmt, store, title="Nightly")
    assert first == render_report(heuristic_summary(), fmt, store, title="Nightly")  # a second, separate run
    assert first.endswith(b"\n")


@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_runs_render(fmt):
    empty = summarize([], mode="stub", mismatch_policy="stop")
    data = render_report(empty, fmt)
    assert data
    if fmt == "html":
        parse_html(data)
    elif fmt == "junit":
        assert ET.fromstring(data).find("testsuite").get("tests") == "0"
    elif fmt == "csv":
        assert [r["kind"] for r in parse_csv(data)] == ["run"] * len(parse_csv(data))


@pytest.mark.parametrize("fmt", FORMATS)
def test_run_settings_and_totals_are_in_every_format(summary, fmt):
    text = render_report(summary, fmt).decode("utf-8")
    for needle in ("heuristic", "allow", "exact", "webshop_demonstrations_0-99", "Result", "Search"):
        assert needle in text, needle
    if fmt in ("md", "html"):
        assert f"{summary.overall_accuracy * 100:.1f}%" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_annotations_on_episodes_and_steps_are_in_every_format(summary, store, fmt):
    text = render_report(summary, fmt, store).decode("utf-8")
    for needle in ("policy-bug", "episode-note-words", "data-issue", "step-note-words"):
        assert needle in text, needle
    assert "note-on-a-session-not-in-the-run" not in text  # only the report's sessions


@pytest.mark.parametrize("fmt", FORMATS)
def test_hostile_text_is_stripped_of_control_characters(hostile, fmt):
    report, store = hostile
    data = render_report(report, fmt, store, title="t\x1b]0;x\x07itle")
    text = data.decode("utf-8")
    assert not CONTROL.search(text.replace("\r\n", "\n")), fmt
    assert "\\u001b" not in text and "\\u0000" not in text
    # a step's reason quotes the actions as Python literals: the escape shows there as the four
    # characters \x1b, text that no terminal runs (JSON writes the backslash doubled)
    quoted = text.replace("\\\\x1b[31m", "").replace("\\\\x1b[0m", "")
    assert "[31m" not in quoted and "]0;" not in text
    if fmt == "json":
        assert not any(CONTROL.search(s) for s in all_strings(json.loads(data)))


# --------------------------------------------------------------------------- JSON


def test_json_is_the_summary_plus_sorted_annotations(summary, store):
    data = json.loads(render_report(summary, "json", store))
    expected = summary.to_dict()
    added = ("annotations", "intervals", "mismatch_groups")
    assert {k: v for k, v in data.items() if k not in added} == expected
    assert {k: v for k, v in data.items() if k != "annotations"} == report_dict(summary)
    assert [(a["session_id"], a["step_label"]) for a in data["annotations"]] == [(0, None), (0, "1")]
    assert data["annotations"][1] == {
        "session_id": 0,
        "step_label": "1",
        "tags": ["data-issue"],
        "note": "step-note-words",
    }
    raw = render_report(summary, "json", store).decode()
    assert raw == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_json_carries_mismatch_groups_and_wilson_intervals(summary):
    data = json.loads(render_report(summary, "json"))
    groups = data["mismatch_groups"]
    assert groups and sum(g["count"] for g in groups) == summary.total_mismatches
    assert [g["count"] for g in groups] == sorted((g["count"] for g in groups), reverse=True)
    steps = [(s["session_id"], s["step_label"]) for g in groups for s in g["steps"]]
    assert sorted(steps) == sorted((m.session_id, m.step_label) for e in summary.episodes for m in e.mismatches)
    assert all(g["count"] == len(g["steps"]) for g in groups)
    assert set(groups[0]) == {
        "state", "expected_tool", "predicted_tool", "reason_kind", "count", "sample_reason", "steps"
    }  # fmt: skip
    assert groups == [
        {**g.model_dump(exclude={"steps"}), "steps": [{"session_id": a, "step_label": b} for a, b in g.steps]}
        for g in group_mismatches(summary)
    ]
    intervals = data["intervals"]
    assert intervals["method"] == "wilson" and intervals["confidence"] == 0.95
    low, high = intervals["overall_accuracy"]
    assert 0 <= low <= summary.overall_accuracy <= high <= 1 and high - low < 0.5
    assert set(intervals["accuracy_by_state"]) == set(summary.accuracy_by_state)
    for state, (low, high) in intervals["accuracy_by_state"].items():
        assert low <= summary.accuracy_by_state[state] <= high
    assert set(intervals["episode_accuracy"]) == {str(e.session_id) for e in summary.episodes}
    for report in summary.episodes:
        low, high = intervals["episode_accuracy"][str(report.session_id)]
        assert low <= report.accuracy <= high
    low, high = intervals["episodes_matched"]
    assert low <= summary.episodes_matched / summary.episodes_run <= high
    assert "accepted_accuracy" not in intervals  # exact matching: no equivalents to bound
    assert all(round(x, 6) == x for pair in [intervals["overall_accuracy"]] for x in pair)


def test_json_with_steps_carries_groups_and_intervals_too(summary):
    data = json.loads(report_json(summary, include_steps=True))
    assert data["episodes"][0]["steps"] and data["mismatch_groups"] and data["intervals"]["overall_accuracy"]
    assert data == json.loads(report_json(summary, include_steps=True))


def test_tolerant_runs_bound_the_accuracy_with_equivalents():
    from replay_tui.matching import MatchSettings

    env = OfflineWebshopEnv(
        open_demos(example_path()), mismatch_policy="allow", matching=MatchSettings.parse(["Search=tolerant"])
    )
    report = Runner(env, HeuristicPolicy(), mode="heuristic").run_all([0, 1, 2, 3, 4])
    data = json.loads(render_report(report, "json"))
    low, high = data["intervals"]["accepted_accuracy"]
    assert low <= report.accepted_accuracy <= high
    assert set(data["intervals"]["accepted_accuracy_by_state"]) == set(report.accuracy_by_state)
    assert sum(g["count"] for g in data["mismatch_groups"]) == report.total_mismatches
    md = render_report(report, "md").decode()
    assert re.search(r"\| Step accuracy with ≈ \| [\d.]+% \[[\d.]+–[\d.]+%\] \|", md)


def test_json_keeps_hostile_text_as_data_without_control_characters(hostile):
    report, store = hostile
    data = json.loads(render_report(report, "json", store))
    first = data["episodes"][0]["mismatches"][0]
    assert first["expected"] == "search[" + strip_control(HOSTILE) + "]"
    assert "<script>alert(1)</script>" in first["predicted"] and "[bold red]" in first["predicted"]
    assert len(data["problems"]) == 1 and "\x1b" not in data["problems"][0]["session_id"]


# --------------------------------------------------------------------------- Markdown


def test_markdown_counts_and_table(summary, store):
    text = render_report(summary, "md", store, title="PR check").decode()
    assert text.startswith("## PR check\n")
    assert "FAIL" in text.splitlines()[2]
    rows = md_table_rows(text, "| Session | Step |")
    assert len(rows) == summary.total_mismatches
    assert all(len(row) == 6 for row in rows)
    states = md_table_rows(text, "| State |")
    assert len(states) == len(summary.accuracy_by_state)
    assert "<details" in text and "</details>" in text


def test_markdown_groups_and_intervals(summary):
    text = render_report(summary, "md").decode()
    rows = md_table_rows(text, "| Count | State |")
    groups = group_mismatches(summary)
    assert len(rows) == len(groups) and all(len(row) == 6 for row in rows)
    assert sum(int(row[0]) for row in rows) == summary.total_mismatches
    assert rows[0][3] == groups[0].reason_kind
    assert rows[0][2] == f"`{groups[0].expected_tool}` → `{groups[0].predicted_tool}`"
    [step_accuracy] = md_table_rows(text, "| Metric |")[3:4]
    assert re.fullmatch(r"[\d.]+% \[[\d.]+–[\d.]+%\]", step_accuracy[1])
    states = md_table_rows(text, "| State |")
    assert all(re.fullmatch(r"[\d.]+% \[[\d.]+–[\d.]+%\]", row[2]) for row in states)
    assert "Wilson" in text
    assert text.index("### Mismatch groups") < text.index("### Mismatches")


def test_markdown_passes_a_clean_run():
    env = OfflineWebshopEnv(open_demos(example_path()), mismatch_policy="allow")
    report = Runner(env, StubPolicy(), mode="stub").run_all([0, 1])
    text = render_report(report, "md").decode()
    assert "PASS" in text and "| Session | Step |" not in text and "### Mismatch groups" not in text
    assert "100.0% [" in text


def test_markdown_escapes_hostile_text(hostile):
    report, store = hostile
    text = render_report(report, "md", store).decode()
    rows = md_table_rows(text, "| Session | Step |")
    assert len(rows) == report.total_mismatches and all(len(row) == 6 for row in rows)
    # Expected/predicted are code spans whose content (pipes unescaped as GFM does) is the cleaned action.
    outside, spans = md_scan(text)
    spans = [span.replace("\\|", "|") for span in spans]
    flat = "search[" + strip_control(HOSTILE).replace("\n", "⏎") + "]"
    assert any(span.strip() == flat for span in spans)
    assert not re.search(r"(?<!\\)<script", outside) and not re.search(r"(?<!\\)\[bold red", outside)
    assert set(re.findall(r"(?<!\\)<(/?\w+)", outside)) <= {"details", "/details", "summary", "/summary"}
    assert "\\=cmd\\|" not in outside and "=cmd\\|' /C calc'\\!A0" in outside  # the note, escaped as text
    assert all("\n" not in line for line in text.splitlines())
    assert "policy error" in text and "boom" in text


@pytest.mark.parametrize(
    "text",
    [
        "click[Buy Now]",
        "`x`",
        "``",
        "a ` b",
        "a``b```c",
        " lead",
        "trail ",
        " both ",
        "   ",
        "a|b",
        "\\|",
        "x\\",
        "<script>alert(1)</script>",
        "two\nlines",
        "\x1b[31mred\x1b[0m",
        "",
    ],
)
@pytest.mark.parametrize("table", [True, False])
def test_md_code_spans_hold_any_text(text, table):
    rendered = md_code(text, table=table)
    if not strip_control(text):
        assert rendered == "*(empty)*"
        return
    outside, spans = md_scan(rendered)
    assert outside == "" and len(spans) == 1
    [span] = spans
    if span.startswith(" ") and span.endswith(" ") and span.strip(" "):  # CommonMark strips one space each side
        span = span[1:-1]
    if table:
        assert re.split(r"(?<!\\)\|", rendered) == [rendered]  # no pipe GFM would split a cell on
        span = span.replace("\\|", "|")
    assert span == strip_control(text).replace("\n", "⏎")


def big_summary(episodes: int = 400, per_episode: int = 5, width: int = 2_000):
    reports = []
    for sid in range(episodes):
        mismatches = [
            Mismatch(
                session_id=sid,
                step_number=n,
                step_label=str(n),
                state="Result",
                expected="click[" + "x|`" * width + "]",
                predicted="click[" + "<y>" * width + "]",
                observation_excerpt="obs",
            )
            for n in range(per_episode)
        ]
        reports.append(
            EpisodeReport(
                session_id=sid,
                file="big.json",
                instruction="buy",
                steps_total=per_episode,
                steps_matched=0,
                accuracy=0.0,
                steps_recorded=per_episode,
                mismatches=mismatches,
                first_mismatch_step="0",
            )
        )
    return summarize(reports, mode="big", mismatch_policy="allow", files=[f"f{i}.json" for i in range(50)])


def test_markdown_is_capped_for_pull_request_comments(tmp_path):
    report = big_summary()
    store = AnnotationStore(tmp_path / "a.json")
    for sid in range(400):
        store.set_note(sid, None, "a long note " * 100)
    text = render_report(report, "md", store).decode()
    assert len(text) < MD_MAX_CHARS
    rows = md_table_rows(text, "| Session | Step |")
    assert 0 < len(rows) <= 200
    groups = md_table_rows(text, "| Count | State |")
    assert sum(int(row[0]) for row in groups) == report.total_mismatches  # one group (another cut short)
    more = re.search(r"… and (\d+) more mismatches", text)
    assert more and int(more.group(1)) == report.total_mismatches - len(rows)
    assert "more annotations" in text and "more files" in text


# --------------------------------------------------------------------------- CSV


def test_csv_rows_match_the_summary(summary, store):
    rows = parse_csv(render_report(summary, "csv", store))
    episodes = [r for r in rows if r["kind"] == "episode"]
    assert [int(r["session_id"]) for r in episodes] == [e.session_id for e in summary.episodes]
    for row, report in zip(episodes, summary.episodes, strict=True):
        assert int(row["mismatches"]) == len(report.mismatches)
        assert int(row["steps_total"]) == report.steps_total and int(row["steps_matched"]) == report.steps_matched
        assert float(row["accuracy"]) == pytest.approx(report.accuracy, abs=1e-6)
        assert row["first_expected"] == report.mismatches[0].expected
        assert row["first_predicted"] == report.mismatches[0].predicted
    steps = [r for r in rows if r["kind"] == "step"]
    assert sum(r["match"] == "false" for r in steps) == summary.total_mismatches
    assert not [r for r in rows if r["kind"] == "problem"]
    run = {r["name"]: r["value"] for r in rows if r["kind"] == "run"}
    assert run["mode"] == "heuristic" and run["episodes_run"] == str(summary.episodes_run)
    first = episodes[0]
    assert first["tags"] == "policy-bug;data-issue" and first["note"] == "episode-note-words"
    [annotated] = [r for r in steps if r["session_id"] == "0" and r["step"] == "1"]
    assert annotated["tags"] == "data-issue" and annotated["note"] == "step-note-words"


def test_csv_group_rows_and_intervals(summary):
    rows = parse_csv(render_report(summary, "csv"))
    groups = [r for r in rows if r["kind"] == "group"]
    assert sum(int(r["mismatches"]) for r in groups) == summary.total_mismatches
    expected = group_mismatches(summary)
    assert [(r["state"], r["expected_tool"], r["predicted_tool"], r["reason_kind"]) for r in groups] == [
        g.key for g in expected
    ]
    assert groups[0]["group_steps"].split(";") == [f"{a}:{b}" for a, b in expected[0].steps]
    run = {r["name"]: r["value"] for r in rows if r["kind"] == "run"}
    assert float(run["overall_accuracy_ci_low"]) <= summary.overall_accuracy <= float(run["overall_accuracy_ci_high"])
    assert "accuracy_by_state_ci_low[Search]" in run and "episodes_matched_ci_high" in run
    for row, report in zip([r for r in rows if r["kind"] == "episode"], summary.episodes, strict=True):
        assert float(row["accuracy_ci_low"]) <= report.accuracy <= float(row["accuracy_ci_high"])


def test_csv_neutralizes_formulas_and_keeps_hostile_text_as_data(hostile):
    report, store = hostile
    rows = parse_csv(render_report(report, "csv", store))
    for row in rows:
        for column, value in row.items():
            assert not value.startswith(("=", "+", "@", "\t")), (column, value)
            if value.startswith("-"):
                assert re.fullmatch(r"-[\d.]+", value), (column, value)  # only our own negative numbers
    by_session = {r["session_id"]: r for r in rows if r["kind"] == "episode"}
    assert by_session["3"]["instruction"].startswith("'=HYPERLINK(")
    assert by_session["1"]["tags"] == "'@evil-tag" and by_session["1"]["note"].startswith("'=cmd")
    assert by_session["1"]["first_expected"] == "search[" + strip_control(HOSTILE) + "]"
    [problem] = [r for r in rows if r["kind"] == "problem"]
    assert problem["session_id"] == "<script>" and problem["problem_field"] == "session_id"
    errors = [r["error"] for r in rows if r["kind"] == "step" and r["error"]]
    assert errors == ["RuntimeError: boom " + strip_control(HOSTILE)]


# --------------------------------------------------------------------------- HTML


def test_html_parses_and_matches_the_summary(summary, store):
    page = parse_html(render_report(summary, "html", store))
    classes = [set((attrs.get("class") or "").split()) for _, attrs in page.tags]
    assert sum("mismatch" in c for c in classes) == summary.total_mismatches
    rows = [attrs for tag, attrs in page.tags if tag == "tr" and (attrs.get("id") or "").startswith("s-")]
    assert len(rows) == summary.episodes_run
    assert [tag for tag, _ in page.tags].count("script") == 1
    assert not [attrs for _, attrs in page.tags for v in attrs.values() if v and "http" in v]  # self-contained
    text = "".join(page.text)
    assert "policy-bug" in text and "step-note-words" in text


def test_html_groups_open_their_steps_and_intervals(summary):
    data = render_report(summary, "html")
    page = parse_html(data)
    rows = [attrs for tag, attrs in page.tags if tag == "tr" and (attrs.get("id") or "").startswith("g-")]
    groups = group_mismatches(summary)
    assert len(rows) == len(groups)
    text = data.decode()
    counts = [int(n) for n in re.findall(r'<tr class="filterable" id="g-\d+"><td class="num">(\d+)</td>', text)]
    assert sum(counts) == summary.total_mismatches
    ids = {attrs.get("id") for _, attrs in page.tags}
    links = [attrs["href"][1:] for tag, attrs in page.tags if tag == "a" and attrs.get("href", "").startswith("#m-")]
    assert len(links) >= summary.total_mismatches and all(link in ids for link in links)  # every step a link
    assert "95% CI" in text and "Wilson" in text
    low, high = (f"{x * 100:.1f}" for x in wilson(summary.total_matched, summary.total_steps))
    assert f"95% CI {low}–{high}%" in text


def test_html_diff_rebuilds_expected_and_predicted(summary):
    data = render_report(summary, "html")
    page = parse_html(data)
    pairs = [("".join(page.actions[i]), "".join(page.actions[i + 1])) for i in range(0, len(page.actions), 2)]
    mismatches = [(m.expected, m.predicted) for e in summary.episodes for m in e.mismatches]
    assert pairs == mismatches
    assert b"<del>" in data and b"<ins>" in data


def test_html_escapes_hostile_text(hostile):
    report, store = hostile
    page = parse_html(render_report(report, "html", store))
    assert [tag for tag, _ in page.tags].count("script") == 1
    assert {tag for tag, _ in page.tags} <= {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "h1",
        "h2",
        "h3",
        "h4",
        "p",
        "span",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "ul",
        "li",
        "code",
        "div",
        "section",
        "dl",
        "dt",
        "dd",
        "del",
        "ins",
        "details",
        "summary",
        "strong",
        "br",
        "a",
        "input",
        "script",
    }
    text = "".join(page.text)
    assert "<script>alert(1)</script>" in text and "[bold red]x[/]" in text and "&amp;" in text
    cleaned = strip_control(HOSTILE)
    assert ("".join(page.actions[0]), "".join(page.actions[1])) == ("search[" + cleaned + "]", "click[" + cleaned + "]")
    assert "RuntimeError: boom" in text and "hostile <b>mode</b>" in text


# --------------------------------------------------------------------------- JUnit


def test_junit_counts_match_the_summary(summary, store):
    root = ET.fromstring(render_report(summary, "junit", store))
    assert root.tag == "testsuites"
    [suite] = root.findall("testsuite")
    assert suite.get("name") == "replay-tui"
    cases = suite.findall("testcase")
    assert len(cases) == summary.episodes_run + len(summary.problems) == int(suite.get("tests"))
    assert len(suite.findall(".//failure")) == summary.total_mismatches
    assert int(suite.get("failures")) == sum(1 for e in summary.episodes if e.mismatches)
    assert suite.get("errors") == "0"
    first = cases[0]
    assert first.get("classname") == "webshop_demonstrations_0-99" and first.get("name") == "session 0"
    failure = first.find("failure")
    mismatch = summary.episodes[0].mismatches[0]
    assert failure.get("type") == "mismatch"
    assert failure.get("message") == (
        f"step {mismatch.step_label} ({mismatch.state}): expected {mismatch.expected} got {mismatch.predicted}"
    )
    properties = {p.get("name"): p.get("value") for p in first.iter("property")}
    assert properties.pop("outcome") == "succeeded"  # the log's outcome: a property, never a failure
    properties = {name: value for name, value in properties.items() if not name.startswith("outcome_")}
    assert properties == {
        "tags": "policy-bug",
        "note": "episode-note-words",
        "step 1 tags": "data-issue",
        "step 1 note": "step-note-words",
    }
    suite_properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert suite_properties["mode"] == "heuristic" and suite_properties["mismatch_policy"] == "allow"


def test_junit_suite_properties_carry_intervals_and_groups(summary):
    suite = ET.fromstring(render_report(summary, "junit")).find("testsuite")
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    low, high = float(properties["overall_accuracy_ci_low"]), float(properties["overall_accuracy_ci_high"])
    assert low <= summary.overall_accuracy <= high
    assert "accuracy_by_state_ci_high[Result]" in properties
    groups = [v for k, v in properties.items() if k.startswith("mismatch_group[")]
    assert len(groups) == len(group_mismatches(summary))
    assert sum(int(v.split(" × ")[0]) for v in groups) == summary.total_mismatches


def hostile_calls_summary():
    """A run of tool calls whose tool names and states are hostile (Markdown, HTML, Rich markup)."""
    name = "<b>[red]evil|`x`</b>&amp;"
    mismatches = [
        Mismatch(
            session_id=1,
            step_number=n,
            step_label=str(n),
            state=name,
            expected=name + '({"q": 1})',
            predicted="other" + name + '({"q": 1})',
            reason=f"tool differs: expected {name!r}, got {'other' + name!r}",
            observation_excerpt="",
        )
        for n in range(3)
    ]
    report = EpisodeReport(
        session_id=1,
        episode_id="ep",
        file="x.json",
        instruction="i",
        steps_total=3,
        steps_matched=0,
        accuracy=0.0,
        steps_recorded=3,
        mismatches=mismatches,
        first_mismatch_step="0",
    )
    return summarize([report], mode="m", mismatch_policy="allow"), name


def test_hostile_tool_names_in_groups_are_escaped_in_every_format():
    report, name = hostile_calls_summary()
    [group] = group_mismatches(report)
    assert group.expected_tool == name and group.count == 3 and group.reason_kind == "tool differs"
    page = parse_html(render_report(report, "html"))
    assert "b" not in {tag for tag, _ in page.tags}
    assert name in "".join(page.text)
    text = render_report(report, "md").decode()
    [row] = md_table_rows(text, "| Count | State |")
    outside, _ = md_scan(text)
    assert not re.search(r"(?<!\\)<b>", outside) and row[0] == "3"
    rows = parse_csv_verdicts(render_report(report, "csv"))
    [csv_group] = [r for r in rows if r["kind"] == "group"]
    assert csv_group["expected_tool"] == name and csv_group["mismatches"] == "3"
    data = json.loads(render_report(report, "json"))
    assert data["mismatch_groups"][0]["expected_tool"] == name


def test_junit_holds_hostile_text_and_problems(hostile):
    report, store = hostile
    root = ET.fromstring(render_report(report, "junit", store))
    suite = root.find("testsuite")
    assert len(suite.findall("testcase")) == report.episodes_run + len(report.problems)
    assert len(suite.findall(".//failure")) == report.total_mismatches
    [error] = suite.findall(".//error")
    assert suite.get("errors") == "1" and "<script>" in error.get("message")
    failure = suite.find(".//failure")
    assert "<script>alert(1)</script>" in failure.get("message") and "\n" not in failure.get("message")
    assert "search[" + strip_control(HOSTILE) + "]" in failure.text
    assert any("boom" in (f.get("message") or "") for f in suite.iter("failure"))


# --------------------------------------------------------------------------- writing


@pytest.mark.parametrize("fmt", FORMATS)
def test_write_report_writes_the_rendered_bytes_atomically(tmp_path, summary, store, fmt):
    suffix = {"json": ".json", "md": ".md", "csv": ".csv", "html": ".html", "junit": ".xml"}[fmt]
    target = tmp_path / "out" / f"report{suffix}"
    target.parent.mkdir()
    target.write_text("old")
    assert write_report(target, summary, store) == target
    assert target.read_bytes() == render_report(summary, fmt, store)
    assert os.listdir(target.parent) == [target.name]


def test_write_report_format_override(tmp_path, summary):
    target = tmp_path / "report.txt"
    write_report(target, summary, fmt="md")
    assert target.read_bytes() == render_report(summary, "md")
    with pytest.raises(ExportError):
        write_report(tmp_path / "report.txt", summary)


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_files(tmp_path, summary, monkeypatch):
    target = tmp_path / "report.json"
    target.write_text("old")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fileio.os, "replace", broken_replace)
    with pytest.raises(ValueError) as info:  # an ExportError, which callers may catch as ValueError
        write_report(target, summary)
    assert isinstance(info.value, ExportError) and isinstance(info.value.__cause__, OSError)
    assert "No space left" in str(info.value) and "\n" not in str(info.value)
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["report.json"]


def test_an_unwritable_destination_is_an_export_error(tmp_path, summary):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ExportError):
        write_report(blocker / "report.json", summary)
