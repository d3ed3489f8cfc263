"""The compare view: two runs of the same recorded inputs, episode by episode and step by step.

:class:`CompareScreen` lists the episodes both runs replayed (A ✓/✗ and B ✓/✗: every step matched,
with the steps right of those compared; Δ: steps regressed −, fixed +, both wrong but different ≠),
filters them to regressions or fixes, and shows the summary figures (accuracies with Wilson 95 %
intervals, B − A with its bootstrap interval, McNemar's p). ``enter`` opens
:class:`CompareStepperScreen`, the side-by-side screen (:mod:`~replay_tui.tui.compare.side_by_side`)
filled with an episode's steps: the recorded action and each side's verdict, A's and B's predictions
in their panes with their diffs against the recording; ``]``/``[`` go from flip to flip across
episodes. ``M``
opens :class:`CompareGroupsScreen`: the regressions grouped by (state, expected tool, B's tool, reason
kind), sortable, each group listing its steps, each step opening the stepper there. ``e`` exports the
comparison in every report format.

The screens only display a :class:`~replay_tui.compare.Comparison` (made once, by the App's worker);
they change no App state, so they import nothing of the App.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from replay_tui.compare import FLIP_LABELS, Comparison, EpisodePair, StepPair, signed_pp
from replay_tui.diff import char_diff
from replay_tui.fileio import expand_home
from replay_tui.groups import MismatchGroup
from replay_tui.sanitize import one_line, strip_control
from replay_tui.stats import PairedStats, Rate
from replay_tui.tui.compare.screen import ComparisonScreen, ExportsComparison
from replay_tui.tui.compare.side_by_side import Position, SideBySideScreen, SideIds
from replay_tui.tui.replay.groups import GroupsSource, GroupsView
from replay_tui.tui.widgets.lazy_table import Column, LazyTable
from replay_tui.tui.widgets.text_pane import PaneLine, lines_from_text

EPISODE_COLUMNS = (
    Column("episode", "episode", 14),
    Column("instruction", "task", flex=True),
    Column("steps", "steps", 5, justify="right"),
    Column("a", "A", 8),
    Column("b", "B", 8),
    Column("delta", "Δ", 12),
)
STEP_COLUMNS = (
    Column("flip", "", 1),
    Column("label", "step", 5),
    Column("state", "state", 8),
    Column("a", "A", 1),
    Column("b", "B", 1),
    Column("expected", "recorded action", flex=True),
)
FILTERS = {"all": "all episodes", "regressed": "regressions", "fixed": "fixes", "flips": "any flip"}
FLIP_MARKS: dict[str, tuple[str, str]] = {
    "regressed": ("−", "bold red"),
    "fixed": ("+", "bold green"),
    "both_wrong_different": ("≠", "bold yellow"),
    "both_wrong_same": ("✗", "dim red"),
    "both_right": ("·", "dim"),
}


def _verdict_mark(verdict: str) -> Text:
    if verdict == "match":
        return Text("✓", style="green")
    if verdict == "equivalent":
        return Text("≈", style="bold yellow")
    return Text("✗", style="bold red")


def _rate(rate: Rate) -> str:
    return f"{rate.rate:.1%} [{rate.low:.1%}–{rate.high:.1%}]"


def _stats_line(name: str, stats: PairedStats) -> Text:
    text = Text()
    text.append(f"{one_line(name):<9}", style="bold")  # a state's name: a log's
    text.append(f" A {_rate(stats.a)}  B {_rate(stats.b)}  ")
    style = "bold red" if stats.high < 0 else ("bold green" if stats.low > 0 else "")
    text.append(f"B − A {signed_pp(stats.difference)} [{signed_pp(stats.low)}, {signed_pp(stats.high)}]", style=style)
    text.append(f"  McNemar p {stats.mcnemar_p:.3g} ({stats.a_only} ✓→✗, {stats.b_only} ✗→✓)", style="dim")
    return text


class ComparePathModal(ModalScreen[str | None]):
    """Ask for a report file to compare this session's results with; enter compares, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel", id="compare_path.cancel")]

    def __init__(self, default_dir: Path):
        super().__init__()
        self.default_dir = default_dir

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Compare with a run (A, the baseline)", style="bold"))
            yield Label(
                Text(
                    "this session's results are B; give a saved run or a --report-steps JSON report",
                    style="dim",
                )
            )
            yield Input(str(self.default_dir) + "/", placeholder="path/to/run.json", id="compare-path")
            yield Label(Text("enter compares · esc cancels", style="dim"))

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submit(self) -> None:
        value = self.query_one(Input).value.strip()
        if not value:
            self.notify("give a file path", severity="error")
            return
        try:
            self.dismiss(str(expand_home(value)))
        except OSError as exc:
            self.notify(f"{value}: {exc.strerror}", severity="error", markup=False)


class EpisodesSource:
    """The episodes of a comparison, filtered; cells made on demand."""

    columns: Sequence[Column] = EPISODE_COLUMNS

    def __init__(self, comparison: Comparison, filter_name: str = "all"):
        self.comparison = comparison
        self.rows: list[EpisodePair] = []
        self.apply(filter_name)

    def apply(self, filter_name: str) -> None:
        episodes = self.comparison.episodes
        if filter_name == "regressed":
            episodes = [e for e in episodes if e.regressed]
        elif filter_name == "fixed":
            episodes = [e for e in episodes if e.fixed]
        elif filter_name == "flips":
            episodes = [e for e in episodes if e.shown]
        self.rows = list(episodes)

    def __len__(self) -> int:
        return len(self.rows)

    def row_style(self, index: int) -> str:
        row = self.rows[index]
        return "" if row.shown else "dim"

    def cells(self, index: int) -> Sequence[Text]:
        row = self.rows[index]

        def run(matched: bool, right: int) -> Text:
            mark = Text("✓ " if matched else "✗ ", style="green" if matched else "bold red")
            return mark.append(f"{right}/{row.steps}", style="")

        delta = Text()
        for name, sign, style in (
            ("regressed", "−", "bold red"),
            ("fixed", "+", "bold green"),
            ("both_wrong_different", "≠", "yellow"),
        ):
            count = row.flips.get(name, 0)
            if count:
                delta.append(f"{sign}{count} ", style=style)
        return [
            Text(strip_control(row.episode)),
            Text(one_line(row.instruction)),
            Text(str(row.steps)),
            run(row.matched_a, row.right_a),
            run(row.matched_b, row.right_b),
            delta,
        ]


class CompareScreen(ComparisonScreen[Comparison, EpisodePair]):
    """The episodes two runs share, with their flips; the figures above them."""

    DEFAULT_CSS = """
    CompareScreen #compare-title { height: auto; padding: 0 1; }
    CompareScreen #compare-stats { height: auto; padding: 0 1; border-bottom: hkey $panel; }
    CompareScreen #compare-episodes { height: 1fr; }
    CompareScreen #compare-status { height: 1; padding: 0 1; background: $panel; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("minus", "filter('regressed')", "Regressions", id="compare.regressions"),
        Binding("plus", "filter('fixed')", "Fixes", id="compare.fixes"),
        Binding("d", "filter('flips')", "Any flip", show=False, id="compare.flips"),
        Binding("right_square_bracket", "next_change(1)", "Next flip", id="compare.next_flip"),
        Binding("left_square_bracket", "next_change(-1)", "Prev flip", show=False, id="compare.prev_flip"),
        Binding("M", "groups", "Regression groups", show=False, id="compare.groups"),
        Binding("e", "export", "Export comparison", id="compare.export"),
        Binding("escape", "back", "Back", id="compare.back"),
    ]

    PREFIX = "compare"
    TABLE_ID = "compare-episodes"
    NO_FURTHER = "no further episode with a flip"

    def __init__(self, comparison: Comparison, export_dir: Path | None = None, *, out_dir: Path | None = None):
        super().__init__(comparison, export_dir, out_dir=out_dir, id="compare")

    def make_source(self) -> EpisodesSource:
        return EpisodesSource(self.comparison, self.filter_name)

    def changed(self, row: EpisodePair) -> bool:
        return bool(row.shown)

    def current_episode(self) -> EpisodePair | None:
        return self.current_row()

    def update_title(self) -> None:
        c = self.comparison
        text = Text()
        text.append("compare ", style="bold")
        text.append("A ", style="bold")
        text.append(strip_control(c.a.name), style="cyan")
        text.append(f" ({strip_control(c.a.mode)})  →  ", style="dim")
        text.append("B ", style="bold")
        text.append(strip_control(c.b.name), style="cyan")
        text.append(f" ({strip_control(c.b.mode)})", style="dim")
        text.append("\n")
        flips = c.flips
        text.append(f"{flips['regressed']} regressed ✓→✗  ", style="bold red" if flips["regressed"] else "dim")
        text.append(f"{flips['fixed']} fixed ✗→✓  ", style="bold green" if flips["fixed"] else "dim")
        text.append(f"{flips['both_wrong_different']} both wrong, different  ", style="yellow")
        text.append(f"{len(self.source)}/{len(c.episodes)} episodes", style="bold")
        if self.filter_name != "all":
            text.append(f"  filter: {FILTERS[self.filter_name]}", style="cyan")
        self.query_one("#compare-title", Static).update(text)
        status = Text(one_line(c.overlap.describe()), style="")
        if c.warnings:
            status.append("  ⚠ " + one_line(" · ".join(c.warnings)), style="yellow")
        self.query_one("#compare-status", Static).update(status)

    def stats_text(self) -> Text:
        c = self.comparison
        text = _stats_line("steps", c.overall)
        if c.accepted.a.right != c.overall.a.right or c.accepted.b.right != c.overall.b.right:
            text.append("\n").append_text(_stats_line("≈ steps", c.accepted))
        text.append("\n").append_text(_stats_line("episodes", c.episodes_stats))
        return text

    # -- actions ----------------------------------------------------------------------------
    @on(LazyTable.Selected, "#compare-episodes")
    def _open(self, event: LazyTable.Selected) -> None:
        episode = self.source.rows[event.index]
        stepper = CompareStepperScreen(
            self.comparison, episode.episode, export_dir=self.export_dir, out_dir=self.out_dir
        )
        self.app.push_screen(stepper)

    def action_groups(self) -> None:
        """The regressions in groups (state, expected tool, B's tool, reason kind)."""
        self.app.push_screen(CompareGroupsScreen(self.comparison, export_dir=self.export_dir, out_dir=self.out_dir))

    def action_back(self) -> None:
        self.app.pop_screen()


class RegressionGroupsSource(GroupsSource):
    """A comparison's regression groups: the predicted tool is B's."""

    columns: Sequence[Column] = (
        Column("count", "count", 6, justify="right"),
        Column("state", "state", 16),
        Column("tools", "expected → B's tool", 32),
        Column("reason", "reason", 42),
        Column("sample", "sample reason", flex=True),
    )


def _step_key(key: Sequence[str]) -> tuple[str, str]:
    """A group's step, ``[episode, step_label]`` (a list once read back from JSON), as a tuple."""
    return (str(key[0]), str(key[1]))


class RegressionStepsSource:
    """The steps of one regression group: where, what was recorded, A's and B's predictions."""

    columns: Sequence[Column] = (
        Column("episode", "episode", 14),
        Column("step", "step", 6),
        Column("expected", "expected", flex=True),
        Column("a", "A", flex=True),
        Column("b", "B", flex=True),
    )

    def __init__(self, group: MismatchGroup | None, steps: dict[tuple[str, str], StepPair]):
        self.keys: list[tuple[str, str]] = [_step_key(k) for k in group.steps] if group is not None else []
        self.steps = steps

    def __len__(self) -> int:
        return len(self.keys)

    def row_style(self, index: int) -> str:
        return ""

    def cells(self, index: int) -> Sequence[Text]:
        episode, label = self.keys[index]
        step = self.steps.get((episode, label))

        def prediction(predicted: str, error: str | None, style: str) -> Text:
            if error and not predicted.strip():
                return Text(f"policy error: {one_line(error)}", style="italic red")
            return Text(one_line(predicted), style=style)

        if step is None:
            return [Text(one_line(episode)), Text(one_line(label)), Text(""), Text(""), Text("")]
        return [
            Text(one_line(episode)),
            Text(one_line(label)),
            Text(one_line(step.expected), style="green"),
            prediction(step.predicted_a, step.error_a, "green" if step.right_a else "red"),
            prediction(step.predicted_b, step.error_b, "green" if step.right_b else "red"),
        ]


class CompareGroupsScreen(GroupsView):
    """A comparison's regressions in groups: enter on a group lists its steps, enter on a step opens
    the compare stepper at that step."""

    PREFIX = "cmp-"
    NO_GROUP = ("No step regressed.", "green")
    DEFAULT_CSS = """
    CompareGroupsScreen #cmp-groups-title { height: auto; padding: 0 1; }
    CompareGroupsScreen #cmp-group-list { height: 1fr; }
    CompareGroupsScreen #cmp-group-detail { height: auto; padding: 0 1; border-top: hkey $panel; }
    CompareGroupsScreen #cmp-group-steps { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort", "Sort", id="compare_groups.sort"),
        Binding("S", "reverse_sort", "Reverse", show=False, id="compare_groups.reverse_sort"),
        Binding("escape", "back", "Back", id="compare_groups.back"),
    ]

    def __init__(self, comparison: Comparison, *, export_dir: Path | None = None, out_dir: Path | None = None):
        super().__init__(id="compare-groups")
        self.comparison = comparison
        self.export_dir = export_dir or Path.cwd()
        self.out_dir = out_dir
        self.groups = list(comparison.regression_groups)
        self.steps: dict[tuple[str, str], StepPair] = {(s.episode, s.step_label): s for s in comparison.steps}

    def on_mount(self) -> None:
        self.rebuild()
        self.group_table.focus()

    def groups_source(self, groups: list[MismatchGroup]) -> GroupsSource:
        return RegressionGroupsSource(groups)

    def steps_source_for(self, group: MismatchGroup | None) -> RegressionStepsSource:
        return RegressionStepsSource(group, self.steps)

    def open_step(self, key: Any) -> None:
        episode, label = key
        self.app.push_screen(
            CompareStepperScreen(
                self.comparison, episode, step_label=label, export_dir=self.export_dir, out_dir=self.out_dir
            )
        )

    def update_title(self) -> None:
        c = self.comparison
        text = Text()
        text.append("regression groups  ", style="bold")
        text.append("A ", style="bold")
        text.append(one_line(c.a.name), style="cyan")
        text.append(" → ", style="dim")
        text.append("B ", style="bold")
        text.append(one_line(c.b.name), style="cyan")
        text.append("  ")
        regressions = sum(g.count for g in self.groups)
        if not regressions:
            text.append("No step regressed.", style="green")
        else:
            groups = len(self.groups)
            text.append(
                f"{regressions} {'regression' if regressions == 1 else 'regressions'} ✓→✗ in {groups} "
                f"{'group' if groups == 1 else 'groups'}",
                style="bold red",
            )
        self.sort_title(text)


class StepsSource:
    """The aligned steps of one episode of a comparison."""

    columns: Sequence[Column] = STEP_COLUMNS

    def __init__(self, steps: list[StepPair]):
        self.rows = steps

    def __len__(self) -> int:
        return len(self.rows)

    def row_style(self, index: int) -> str:
        flip = self.rows[index].flip
        return "bold red" if flip == "regressed" else ""

    def cells(self, index: int) -> Sequence[Text]:
        step = self.rows[index]
        mark, style = FLIP_MARKS[step.flip]
        return [
            Text(mark, style=style),
            Text(strip_control(step.step_label)),
            Text(strip_control(step.state)),
            _verdict_mark(step.verdict_a),
            _verdict_mark(step.verdict_b),
            Text(one_line(step.expected)),
        ]


def _verdict_words(verdict: str, error: str | None) -> tuple[str, str]:
    """A side's verdict on a step in words, and its style."""
    if error:
        return "✗ policy error", "bold red"
    if verdict == "match":
        return "✓ match", "bold green"
    if verdict == "equivalent":
        return "≈ equivalent", "bold yellow"
    return "✗ mismatch", "bold red"


def side_lines(expected: str, predicted: str, verdict: str, error: str | None, reason: str) -> list[PaneLine]:
    """One side's step: its verdict, its prediction, what differs from the recording (−recorded
    +predicted, chunk by chunk), and why the judge said so."""
    words, style = _verdict_words(verdict, error)
    lines = [PaneLine(words, style)]
    if error:
        lines += [PaneLine(""), PaneLine("policy error", "bold"), *lines_from_text(error, "red")]
    if predicted.strip() or not error:
        lines += [PaneLine(""), PaneLine("predicted", "bold")]
        lines += lines_from_text(predicted, "green" if verdict == "match" else "")
    if verdict != "match" and not error:
        lines += [PaneLine(""), PaneLine("against the recording (−recorded +predicted)", "bold")]
        for chunk in char_diff(strip_control(expected), strip_control(predicted), cleanup=True):
            if chunk.op == "insert":
                lines += [PaneLine(f"+{line}", "bold green") for line in chunk.text.split("\n")]
            elif chunk.op == "delete":
                lines += [PaneLine(f"−{line}", "red") for line in chunk.text.split("\n")]
    if reason and verdict != "match":
        lines += [PaneLine(""), PaneLine("why", "bold"), *lines_from_text(reason, "yellow")]
    return lines


class CompareStepperScreen(ExportsComparison[Comparison], SideBySideScreen):
    """One episode of a comparison: its steps, the recorded action, A's and B's predictions in their
    panes; ``]``/``[`` go from flip to flip across episodes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right_square_bracket", "next_divergence(1)", "Next flip", id="compare_stepper.next_flip"),
        Binding("left_square_bracket", "next_divergence(-1)", "Prev flip", id="compare_stepper.prev_flip"),
        Binding("e", "export", "Export comparison", id="compare_stepper.export"),
        Binding("escape", "back", "Back", id="compare_stepper.back"),
    ]
    IDS = SideIds(title="cmp-title", rows="cmp-steps", where="cmp-detail", a="cmp-a", b="cmp-b")
    DIVERGENCE = "flip"
    NO_DIVERGENCE = "the runs agree on every step"

    def __init__(
        self,
        comparison: Comparison,
        episode: str,
        *,
        step_label: str | None = None,
        export_dir: Path | None = None,
        out_dir: Path | None = None,
    ):
        super().__init__(id="compare-stepper")
        self.comparison = comparison
        self.export_dir = export_dir or Path.cwd()
        self.out_dir = out_dir
        self.episode = episode
        self.start_label = step_label
        """The step to open at; None: the episode's first flip."""
        self.by_episode: dict[str, list[StepPair]] = {}
        for step in comparison.steps:
            self.by_episode.setdefault(step.episode, []).append(step)
        self.episode_names = list(dict.fromkeys([*(pair.episode for pair in comparison.episodes), *self.by_episode]))
        """The episodes in the comparison's order (any with steps but no pair after them): ``]``/``[``'s."""
        self.episode_order = {name: number for number, name in enumerate(self.episode_names)}
        self.flips: list[Position] = sorted(
            (self.episode_order[name], index)
            for name, steps in self.by_episode.items()
            for index, step in enumerate(steps)
            if step.shown
        )
        """Every flip in episode and step order: (episode position, step position)."""
        self.source = StepsSource(self.by_episode.get(episode, []))

    def on_mount(self) -> None:
        steps = self.by_episode.get(self.episode, [])
        first = next((i for i, step in enumerate(steps) if step.shown), 0)
        if self.start_label is not None:
            first = next((i for i, step in enumerate(steps) if step.step_label == self.start_label), first)
        self.landed = True  # opened on a flip (or a chosen step): ] goes on to the next one
        self.load_episode(self.episode, cursor=first)
        self.rows_table.focus()

    def load_episode(self, episode: str, cursor: int = 0) -> None:
        self.episode = episode
        self.source = StepsSource(self.by_episode.get(episode, []))
        self.rows_table.set_source(self.source, cursor=cursor)
        self.update_title()
        self.show_row()

    def current_step(self) -> StepPair | None:
        if not len(self.source):
            return None
        step: StepPair = self.source.rows[self.rows_table.cursor]
        return step

    def update_title(self) -> None:
        pair = next((e for e in self.comparison.episodes if e.episode == self.episode), None)
        text = Text()
        text.append("episode ", style="dim")
        text.append(strip_control(self.episode) + "  ", style="bold cyan")
        if pair is not None:
            text.append(f"A {pair.right_a}/{pair.steps}  ", style="green" if pair.matched_a else "red")
            text.append(f"B {pair.right_b}/{pair.steps}  ", style="green" if pair.matched_b else "red")
            text.append(f"{pair.regressed} regressed  {pair.fixed} fixed", style="bold")
            text.append("\n")
            text.append(one_line(pair.instruction), style="italic")
        self.query_one(f"#{self.IDS.title}", Static).update(text)

    # -- the side-by-side parts -------------------------------------------------------------
    def divergences(self) -> list[Position]:
        return self.flips

    def position(self) -> Position:
        return (self.episode_order.get(self.episode, -1), self.rows_table.cursor)

    def go_to(self, position: Position) -> None:
        episode = self.episode_names[position[0]]
        if episode != self.episode:
            self.load_episode(episode, cursor=position[1])
        else:
            self.rows_table.set_cursor(position[1])

    def show_row(self) -> None:
        step = self.current_step()
        a_pane, b_pane = self.panes
        if step is None:
            self.where.update(Text("no aligned steps", style="dim"))
            a_pane.set_lines([], placeholder="no steps")
            b_pane.set_lines([], placeholder="no steps")
            return
        text = Text()
        text.append(f"step {strip_control(step.step_label)} ", style="bold")
        text.append(f"({strip_control(step.state)})  ", style="dim")
        mark, style = FLIP_MARKS[step.flip]
        text.append(f"{mark} {FLIP_LABELS[step.flip]}", style=style)
        number = self.divergence_number()
        where = f"flip {number + 1} of {len(self.flips)}" if number is not None else f"{len(self.flips)} flips"
        text.append(f"   {where} · ]/[ next/previous flip", style="dim")
        text.append("\n")
        text.append(f"{'expected':<10} ", style="dim")
        text.append(one_line(step.expected), style="bold")
        for label, verdict, error in (("A", step.verdict_a, step.error_a), ("B", step.verdict_b, step.error_b)):
            words, style = _verdict_words(verdict, error)
            text.append(f"\n{label:<10} ", style="dim").append(words, style=style)
        self.where.update(text)
        a_pane.set_lines(side_lines(step.expected, step.predicted_a, step.verdict_a, step.error_a, step.reason_a))
        b_pane.set_lines(side_lines(step.expected, step.predicted_b, step.verdict_b, step.error_b, step.reason_b))
