"""Modal dialogs with typed results: tag, note, export, replay settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
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
from replay_tui.fileio import expand_home, inside, same_file
from replay_tui.matching import MATCH_POLICIES, MATCH_STATES, POLICY_DESCRIPTIONS, MatchSettings
from replay_tui.policies.registry import POLICY_MODES
from replay_tui.sanitize import one_line, strip_control
from replay_tui.workspace import ReplaySettings

FORMAT_SUFFIX = {"json": ".json", "md": ".md", "csv": ".csv", "html": ".html", "junit": ".xml"}
FORMAT_HELP = {
    "json": "JSON — the full report, deterministic",
    "md": "Markdown — fits a pull-request comment",
    "csv": "CSV — one row per episode",
    "html": "HTML — one self-contained file",
    "junit": "JUnit XML — one test case per episode",
}


LABEL_CHARS = 40
"""The longest label the tag dialog creates."""


def label_name(text: str) -> str:
    """A new label as typed, made a tag: control characters gone, spaces joined with ``-`` (tags are
    shown space-separated), cut at :data:`LABEL_CHARS`."""
    return "-".join(strip_control(text).split())[:LABEL_CHARS]


class TagModal(ModalScreen[list[str] | None]):
    """Toggle any number of labels on the target, or create one; returns the target's tags.

    Number keys and space toggle (the dialog stays open), tab goes to the new-label field, enter
    saves, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="tag.cancel"),
        Binding("ctrl+s", "save", "Save", id="tag.save"),
    ]

    def __init__(self, target: str, labels: list[str], current: list[str]):
        super().__init__()
        self.target = target
        self.labels = list(labels)
        self.current = set(current)
        self.order = list(current)  # the target's tags, in the order they were set

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(f"Tag {one_line(self.target)}", style="bold"))
            yield OptionList(*(Option(self._prompt(label), id=label) for label in self.labels), id="tag-options")
            yield Input(placeholder="new label (enter adds and sets it)", id="tag-new")
            yield Label(Text("number or space toggles · tab: new label · enter saves · esc cancels", style="dim"))

    def _prompt(self, label: str) -> Text:
        number = self.labels.index(label) + 1
        key = str(number) if number < 10 else " "
        return Text(f"{key}  [{'✓' if label in self.current else ' '}] {one_line(label)}")  # a sidecar's label

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def toggle(self, label: str) -> None:
        if label in self.current:
            self.current.discard(label)
            self.order.remove(label)
        else:
            self.current.add(label)
            self.order.append(label)
        self.query_one(OptionList).replace_option_prompt(label, self._prompt(label))

    def on_key(self, event) -> None:
        options = self.query_one(OptionList)
        if self.focused is not options:
            return
        if event.key.isdigit() and event.key != "0":
            index = int(event.key) - 1
            if index < len(self.labels):
                event.stop()
                self.toggle(self.labels[index])
        elif event.key == "space" and options.highlighted is not None:
            event.stop()
            self.toggle(self.labels[options.highlighted])

    @on(OptionList.OptionSelected)
    def _selected(self) -> None:
        self.action_save()

    @on(Input.Submitted, "#tag-new")
    def _new_label(self, event: Input.Submitted) -> None:
        event.stop()
        name = label_name(event.value)
        event.input.value = ""
        options = self.query_one(OptionList)
        if not name:
            options.focus()
            return
        if name not in self.labels:
            self.labels.append(name)
            options.add_option(Option(self._prompt(name), id=name))
        if name not in self.current:
            self.toggle(name)
        options.highlighted = self.labels.index(name)
        options.focus()

    def action_save(self) -> None:
        self.dismiss(list(self.order))


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
            yield Label(Text(f"Note on {one_line(self.target)}", style="bold"))
            yield TextArea(strip_control(self.note), id="note-text", soft_wrap=True)  # a sidecar's text
            yield Label(Text("ctrl+s saves · esc cancels", style="dim"))

    def on_mount(self) -> None:
        area = self.query_one(TextArea)
        area.focus()
        area.move_cursor(area.document.end)

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        # unedited, the note stays as the sidecar has it (the sequences stripped for the editor included)
        self.dismiss(self.note if text == strip_control(self.note) else text)


@dataclass(frozen=True)
class ExportChoice:
    """What the export dialog returns: the format, the path, and whether only the shown episodes go."""

    fmt: str
    path: Path
    only_shown: bool = False


class ExportModal(ModalScreen[ExportChoice | None]):
    """Choose a report format and a path (and, under a filter, only the episodes shown); enter
    exports, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss(None)", "Cancel", id="export.cancel")]

    def __init__(
        self,
        default_dir: Path,
        fmt: str = "md",
        inputs: Sequence[Path] = (),
        *,
        shown: str | None = None,
        out_dir: Path | None = None,
    ):
        super().__init__()
        self.default_dir = default_dir
        self.out_dir = out_dir
        """The one folder a report may go to (``--out-dir``, a served app), or None: anywhere."""
        self.fmt = fmt if fmt in FORMATS else "md"
        self.inputs = list(inputs)
        """Files the report must never replace (the logs being debugged, the annotations)."""
        self.shown = shown
        """The browser's active filter, said as the checkbox label (None: no filter, no checkbox)."""
        self._confirmed: Path | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text("Export the replay report", style="bold"))
            yield OptionList(*(Option(FORMAT_HELP[f], id=f) for f in FORMATS), id="export-format")
            yield Input(str(self.default_dir / f"replay-report{FORMAT_SUFFIX[self.fmt]}"), id="export-path")
            if self.shown is not None:
                yield Checkbox(Text(self.shown), id="export-shown")  # the filter as typed: not markup
            keys = "↑/↓ format · " + ("tab, space: only the shown episodes · " if self.shown is not None else "")
            yield Label(Text(keys + "enter exports · esc cancels", style="dim"))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = FORMATS.index(self.fmt)
        options.focus()

    def on_key(self, event) -> None:
        if event.key == "enter" and isinstance(self.focused, Checkbox):  # enter exports anywhere in the dialog
            event.stop()
            event.prevent_default()
            self._submit()

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
        try:
            path = expand_home(value)
        except OSError as exc:
            self.notify(f"{value}: {exc.strerror}", severity="error", markup=False)
            return
        if self.out_dir is not None:
            path = self.out_dir / path  # a relative path goes under it
            if not inside(path, self.out_dir) or path.resolve() == self.out_dir.resolve():
                message = f"{value} is outside {self.out_dir}: this app exports only under that folder (--out-dir)"
                self.notify(message, severity="error", markup=False)
                return
        if any(same_file(path, source) for source in self.inputs):
            message = f"{path} is one of the files being debugged: choose another path"
            self.notify(message, severity="error", markup=False)
            return
        if path.exists() and self._confirmed != path:
            self._confirmed = path  # a second enter on the same path overwrites
            message = f"{path} exists: enter again to overwrite it, or edit the path"
            self.notify(message, severity="warning", markup=False)
            return
        shown = self.query("#export-shown").results(Checkbox)
        self.dismiss(ExportChoice(self.fmt, path, any(box.value for box in shown)))


class SettingsModal(ModalScreen[ReplaySettings | None]):
    """Policy, mismatch policy and item steps for the next replay."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel", id="settings.cancel"),
        Binding("ctrl+s", "save", "Apply", id="settings.save"),
    ]

    def __init__(self, settings: ReplaySettings, *, locked: bool = False):
        super().__init__()
        self.settings = settings
        self.locked = locked
        """A served app (``--out-dir``): the policy spec and the LLM base URL stay those of the command
        line, so a browser can neither load code from a path nor send the API key to a URL it types."""

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
                    disabled=self.locked,
                )
                llm = s.llm or {}
                with Horizontal(classes="llm-row"):
                    yield Input(
                        str(llm.get("base_url") or ""),
                        placeholder="base URL, e.g. http://127.0.0.1:8000/v1",
                        id="llm-base-url",
                        disabled=self.locked,
                    )
                    yield Input(str(llm.get("model") or ""), placeholder="model", id="llm-model")
                if self.locked:
                    yield Label(Text("served: the spec and the base URL are the ones serve was given", style="dim"))
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
        if self.locked:
            spec = self.settings.graph_spec if mode_name == "langgraph" else self.settings.policy_spec
        if mode_name in ("custom", "langgraph") and not spec:
            self.notify(f"{mode_name} mode needs a spec (module:attr or file.py:attr)", severity="error")
            return
        llm = dict(self.settings.llm or {})
        base_url = self.query_one("#llm-base-url", Input).value.strip()
        model = self.query_one("#llm-model", Input).value.strip()
        if base_url and not self.locked:
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
