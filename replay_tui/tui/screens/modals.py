"""Modal dialogs with typed results: tag, note, export, replay settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, OptionList, RadioButton, RadioSet, Select, TextArea
from textual.widgets.option_list import Option

from replay_tui.export import FORMATS
from replay_tui.fileio import same_file
from replay_tui.matching import MATCH_POLICIES, MATCH_STATES, POLICY_DESCRIPTIONS, MatchSettings
from replay_tui.policies.registry import POLICY_MODES
from replay_tui.workspace import ReplaySettings

FORMAT_SUFFIX = {"json": ".json", "md": ".md", "csv": ".csv", "html": ".html", "junit": ".xml"}
FORMAT_HELP = {
    "json": "JSON — the full report, deterministic",
    "md": "Markdown — fits a pull-request comment",
    "csv": "CSV — one row per episode",
    "html": "HTML — one self-contained file",
    "junit": "JUnit XML — one test case per episode",
}


class TagModal(ModalScreen[str | None]):
    """Pick a label to toggle on the target (number keys or enter); escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel", id="tag.cancel")]

    def __init__(self, target: str, labels: list[str], current: list[str]):
        super().__init__()
        self.target = target
        self.labels = labels
        self.current = set(current)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(f"Tag {self.target}", style="bold"))
            options = []
            for number, label in enumerate(self.labels, start=1):
                mark = "✓" if label in self.current else " "
                key = str(number) if number < 10 else " "
                options.append(Option(Text(f"{key}  [{mark}] {label}"), id=label))
            yield OptionList(*options, id="tag-options")
            yield Label(Text("number or enter toggles · esc cancels", style="dim"))

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_key(self, event) -> None:
        if event.key.isdigit() and event.key != "0":
            index = int(event.key) - 1
            if index < len(self.labels):
                event.stop()
                self.dismiss(self.labels[index])

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


class NoteModal(ModalScreen[str | None]):
    """Write a note; ctrl+s saves, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save", id="note.save"),
        Binding("escape", "dismiss(None)", "Cancel", id="note.cancel"),
    ]

    def __init__(self, target: str, note: str):
        super().__init__()
        self.target = target
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(f"Note on {self.target}", style="bold"))
            yield TextArea(self.note, id="note-text", soft_wrap=True)
            yield Label(Text("ctrl+s saves · esc cancels", style="dim"))

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)


class ExportModal(ModalScreen[tuple[str, Path] | None]):
    """Choose a report format and a path; enter exports, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel", id="export.cancel")]

    def __init__(self, default_dir: Path, fmt: str = "md", inputs: Sequence[Path] = ()):
        super().__init__()
        self.default_dir = default_dir
        self.fmt = fmt
        self.inputs = list(inputs)
        """Files the report must never replace (the logs being debugged, the annotations)."""
        self._confirmed: Path | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Export the replay report", style="bold"))
            yield OptionList(*(Option(FORMAT_HELP[f], id=f) for f in FORMATS), id="export-format")
            yield Input(str(self.default_dir / f"replay-report{FORMAT_SUFFIX[self.fmt]}"), id="export-path")
            yield Label(Text("↑/↓ format · enter exports · esc cancels", style="dim"))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = FORMATS.index(self.fmt)
        options.focus()

    @on(OptionList.OptionHighlighted)
    def _format_changed(self, event: OptionList.OptionHighlighted) -> None:
        fmt = event.option.id or "md"
        self.fmt = fmt
        path_input = self.query_one("#export-path", Input)
        path = Path(path_input.value or "replay-report")
        path_input.value = str(path.with_suffix(FORMAT_SUFFIX[fmt]))

    @on(OptionList.OptionSelected)
    @on(Input.Submitted)
    def _submit(self) -> None:
        value = self.query_one("#export-path", Input).value.strip()
        if not value:
            self.notify("give a file path", severity="error")
            return
        path = Path(value).expanduser()
        if any(same_file(path, source) for source in self.inputs):
            message = f"{path} is one of the files being debugged: choose another path"
            self.notify(message, severity="error", markup=False)
            return
        if path.exists() and self._confirmed != path:
            self._confirmed = path  # a second enter on the same path overwrites
            message = f"{path} exists: enter again to overwrite it, or edit the path"
            self.notify(message, severity="warning", markup=False)
            return
        self.dismiss((self.fmt, path))


class SettingsModal(ModalScreen[ReplaySettings | None]):
    """Policy, mismatch policy and item steps for the next replay."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="settings.cancel"),
        Binding("ctrl+s", "save", "Apply", id="settings.save"),
    ]

    def __init__(self, settings: ReplaySettings):
        super().__init__()
        self.settings = settings

    def compose(self) -> ComposeResult:
        s = self.settings
        # the body scrolls (it may be taller than the terminal); Apply and Cancel stay below it
        with Vertical(classes="dialog"):
            yield Label(Text("Replay settings", style="bold"))
            with VerticalScroll(classes="dialog-body", can_focus=False):
                with RadioSet(id="policy"):
                    for mode in POLICY_MODES:
                        yield RadioButton(mode.label, value=s.mode == mode.name, id=f"mode-{mode.name}")
                yield Input(
                    s.policy_spec or s.graph_spec or "",
                    placeholder="policy spec (custom) or graph spec (langgraph)",
                    id="policy-spec",
                )
                llm = s.llm or {}
                with Horizontal(classes="llm-row"):
                    yield Input(
                        str(llm.get("base_url") or ""),
                        placeholder="base URL, e.g. http://127.0.0.1:8000/v1",
                        id="llm-base-url",
                    )
                    yield Input(str(llm.get("model") or ""), placeholder="model", id="llm-model")
                with RadioSet(id="mismatch"):
                    yield RadioButton("stop at the first mismatch", value=s.mismatch == "stop", id="mismatch-stop")
                    yield RadioButton(
                        "allow: force the recorded action, go on", value=s.mismatch == "allow", id="mismatch-allow"
                    )
                yield Checkbox("replay item-page actions as steps", value=s.item_steps, id="item-steps")
                yield Label(Text("matching per state (≈: a tolerated difference)", style="dim"))
                with Horizontal(classes="match-row"):
                    for state in MATCH_STATES:
                        yield Label(state)
                        yield Select(
                            [(name, name) for name in MATCH_POLICIES],
                            value=s.matching.policy_for(state),
                            allow_blank=False,
                            compact=True,
                            id=f"match-{state}",
                            tooltip="\n".join(POLICY_DESCRIPTIONS.values()),
                        )
            with Horizontal(classes="buttons"):
                yield Button("Apply", variant="primary", id="apply")
                yield Button("Cancel", id="cancel")

    @on(Button.Pressed, "#apply")
    def action_save(self) -> None:
        mode = (self.query_one("#policy", RadioSet).pressed_button or RadioButton(id="mode-stub")).id or "mode-stub"
        mismatch = (self.query_one("#mismatch", RadioSet).pressed_button or RadioButton(id="mismatch-stop")).id
        spec = self.query_one("#policy-spec", Input).value.strip() or None
        mode_name = mode.removeprefix("mode-")
        if mode_name in ("custom", "langgraph") and not spec:
            self.notify(f"{mode_name} mode needs a spec (module:attr or file.py:attr)", severity="error")
            return
        llm = dict(self.settings.llm or {})
        base_url = self.query_one("#llm-base-url", Input).value.strip()
        model = self.query_one("#llm-model", Input).value.strip()
        if base_url:
            llm["base_url"] = base_url
        if model:
            llm["model"] = model
        if mode_name == "llm" and not llm.get("model"):
            self.notify("llm mode needs a model name", severity="error")
            return
        self.dismiss(
            replace(
                self.settings,
                mode=mode_name,
                policy_spec=spec if mode_name == "custom" else self.settings.policy_spec,
                graph_spec=spec if mode_name == "langgraph" else self.settings.graph_spec,
                llm=llm or None,
                mismatch=(mismatch or "mismatch-stop").removeprefix("mismatch-"),  # type: ignore[arg-type]
                item_steps=self.query_one("#item-steps", Checkbox).value,
                matching=self._matching(),
            )
        )

    def _matching(self) -> MatchSettings:
        """The chosen policy per state; states not shown keep the current default."""
        chosen = {state: str(self.query_one(f"#match-{state}", Select).value) for state in MATCH_STATES}
        current = self.settings.matching
        by_state: dict[str, str] = {s: p for s, p in current.by_state if s not in chosen}
        by_state.update(chosen)
        return MatchSettings.build(current.default, by_state)

    @on(Button.Pressed, "#cancel")
    def _cancel(self) -> None:
        self.dismiss(None)
