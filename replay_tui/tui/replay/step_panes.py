"""The stepper's panes: observation, prompt (messages), thinking and, for another format's episode,
the action and the screenshot, side by side, in a grid or one at a time.

A widget of its own so the stepper composes it and hands it a row to show instead of filling each
pane itself: what a pane holds for a seed step, a sub-event or another format's step, the display
lines kept per step (stepping back re-splits and re-wraps nothing), the screenshots decoded once
and which panes are shown live here. The screen keeps the keys, which pane is active, the tab bar
and the find box's matches.
"""

from __future__ import annotations

import io
import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.geometry import Size

from replay_tui.episodes.model import ToolCall, TrajectoryStep
from replay_tui.episodes.recorded import prompt_problem
from replay_tui.sanitize import one_line, strip_control
from replay_tui.sources import note_kind
from replay_tui.tui.replay.step_list import StepRow
from replay_tui.tui.widgets.log_panes import action_lines, message_lines, result_lines
from replay_tui.tui.widgets.shot_view import ShotView
from replay_tui.tui.widgets.text_pane import PaneLine, TextPane, lines_from_text

if TYPE_CHECKING:  # Pillow loads at the first screenshot, the runner at the first replay, not at the app's launch
    from PIL import Image

    from replay_tui.runner import StepResult

ROLE_STYLES = {"system": "bold magenta", "user": "bold cyan", "assistant": "bold green", "tool": "bold yellow"}
PANES = ("observation", "prompt", "thinking", "action")
"""The text panes, in the order find visits them (the action pane is shown for other formats only)."""
PANE_MIN_WIDTH = 24
"""Below this width per pane the panes are shown one at a time, as tabs (words are not cut)."""
GRID_MIN_HEIGHT = 32
"""Below this many rows the two rows of panes of another format's episode are tabs too (a 2x2 grid
in 24 rows leaves each pane four lines)."""


def model_output_lines(recorded: str | None, trace: dict[str, Any]) -> list[PaneLine]:
    """The thinking pane of a replayed step: the recorded thinking, then the replayed model's own
    output (reasoning, text, tool calls or failure), each under a header."""
    lines = [PaneLine("── recorded thinking ──", "bold")]
    lines += lines_from_text(recorded) if recorded else [PaneLine("(none recorded)", "dim")]
    model = trace.get("model") or trace.get("policy") or "the policy"
    lines += [PaneLine(""), PaneLine(f"── replayed model output ({one_line(str(model))}) ──", "bold magenta")]
    answer = trace.get("response")
    response: dict[str, Any] = answer if isinstance(answer, dict) else {}
    said = False
    if response.get("reasoning"):
        lines += [PaneLine("reasoning:", "dim"), *lines_from_text(str(response["reasoning"]))]
        said = True
    if response.get("content"):
        lines += lines_from_text(str(response["content"]))
        said = True
    for call in response.get("tool_calls") or ():
        if isinstance(call, dict):
            lines.append(PaneLine(one_line(f"→ {call.get('name')}({call.get('arguments') or ''})"), "bold green"))
            said = True
    failure = trace.get("failure")
    if isinstance(failure, dict):
        lines.append(PaneLine(one_line(f"✗ {failure.get('kind')}: {failure.get('message')}"), "bold red"))
        said = True
    if not said:
        lines.append(PaneLine("(the model answered nothing)", "dim"))
    lines.append(PaneLine("x: the whole request and response", "dim"))
    return lines


def prompt_lines(step: TrajectoryStep) -> tuple[list[PaneLine], str]:
    """A seed step's prompt as role-labelled lines, or the raw text with the parse error as placeholder."""
    recorded = step.prompt_text
    if not recorded:
        return [], "no prompt recorded"
    problem = prompt_problem(step)
    if problem is not None:
        warning = [PaneLine(f"⚠ prompt not parsed: {problem}", "bold red"), PaneLine("")]
        return warning + lines_from_text(recorded), ""
    lines: list[PaneLine] = []
    for number, message in enumerate(step.messages):
        if number:
            lines.append(PaneLine(""))
        role = strip_control(message.role)
        lines.append(PaneLine(f"── {role} ──", ROLE_STYLES.get(role, "bold")))
        lines.extend(lines_from_text(message.content))
    return lines, "empty prompt"


def sub_event_fields(step: TrajectoryStep) -> dict[str, Any]:
    """A sub-event's fields as its entry has them (an item-page action's call, options, reward and
    done, then the rest of its record in the file's order), without its observations and its type
    (the pane's title: :attr:`TrajectoryStep.event`)."""
    fields: dict[str, Any] = {}
    if step.kind == "item":
        call = step.action if step.action is not None else ToolCall(name="")
        fields = {
            "llm_action": {"name": call.name, "arguments": dict(call.arguments)},
            "available_options": step.available_actions,
            "reward": step.reward,
            "done": step.done,
        }
    fields.update(step.extra)
    return {key: value for key, value in fields.items() if not key.startswith("observation") and key != "type"}


class StepPanes(Horizontal):
    """The panes of the step under the cursor; :meth:`show_step` fills them for a row."""

    PANE_LINES_KEPT: ClassVar[int] = 32
    """Pane texts kept as display lines (per step and pane), so stepping back re-splits and re-wraps nothing."""

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self.general = False
        """An episode of another format: its steps' own fields, the action pane, a 2x2 grid."""
        self._pane_lines: OrderedDict[tuple[object, ...], tuple[list[PaneLine], Any]] = OrderedDict()
        self._images: dict[int, Image.Image | None] = {}
        self._thinking_shown: tuple[int, int | None] | None = None
        """(row position, id of the trace) the thinking pane shows: a verdict arriving for it redraws it."""

    def compose(self) -> ComposeResult:
        shot = ShotView(id="shot")
        shot.display = False
        yield shot
        yield TextPane("observation", id="observation")
        yield TextPane("prompt", id="prompt")
        yield TextPane("thinking", id="thinking")
        action = TextPane("action", id="action")
        action.display = False
        yield action

    def pane(self, name: str) -> TextPane:
        return self.query_one(f"#{name}", TextPane)

    @property
    def shot(self) -> ShotView:
        return self.query_one("#shot", ShotView)

    def set_general(self) -> None:
        """The episode is of another format (set once it is loaded)."""
        self.general = True
        self.add_class("general")
        self.pane("prompt").border_title = "messages"
        self.shot.border_title = "screenshot"

    # -- layout -----------------------------------------------------------------------------
    def names(self, *, with_shot: bool) -> list[str]:
        """The panes this episode shows, in tab order (``shot``: the screenshot)."""
        names = ["observation", "prompt", "thinking"]
        if self.general:
            names.append("action")
        if with_shot:
            names.insert(0, "shot")
        return names

    def wants_tabs(self, width: int, height: int, *, with_shot: bool) -> bool:
        """Whether the panes, given ``width`` x ``height`` cells, are shown one at a time: each
        would be narrower than PANE_MIN_WIDTH, or another format's grid lower than GRID_MIN_HEIGHT."""
        columns = (2 if self.general else 3) + (1 if with_shot else 0)
        return width // columns < PANE_MIN_WIDTH or (self.general and height < GRID_MIN_HEIGHT)

    def tab_titles(self, names: Sequence[str]) -> list[str]:
        """The tab bar's titles of ``names``: the panes' own titles without their counts."""
        return [
            "screenshot" if name == "shot" else str(self.pane(name).border_title).split(" (")[0]  # "messages (3)"
            for name in names
        ]

    def show_only(self, names: Sequence[str], *, tabbed: bool, active: str, with_shot: bool) -> None:
        """Show the panes ``names`` side by side, or only ``active`` when ``tabbed``."""
        self.set_class(tabbed, "tabbed")
        self.set_class(with_shot, "with-shot")
        for name in (*PANES, "shot"):
            self.query_one(f"#{name}").display = name in names and (not tabbed or name == active)

    def sizes(self) -> dict[str, Size]:
        """The shown text panes' content sizes (see TextPane.size_hint)."""
        panes = [self.pane(name) for name in PANES]
        return {pane.id or "": pane.content_region.size for pane in panes if pane.display}

    def hint_sizes(self, sizes: dict[str, Size]) -> None:
        for name, size in sizes.items():
            self.pane(name).size_hint = size  # see TextPane.size_hint

    def forget_lines(self) -> None:
        """The episode changed (``--follow``): the kept display lines are stale."""
        self._pane_lines.clear()

    # -- find -------------------------------------------------------------------------------
    def find(self, query: str) -> None:
        for name in PANES:
            self.pane(name).find(query)

    def matches(self) -> list[tuple[str, int]]:
        """The matches the panes hold for the current query, as (pane, number), in pane order."""
        return [(name, number) for name in PANES for number in range(len(self.pane(name).matches))]

    def show_match(self, pane: str, number: int) -> None:
        for name in PANES:
            self.pane(name).show_match(number if name == pane else -1)

    # -- content ----------------------------------------------------------------------------
    def show_step(
        self, row: StepRow | None, verdict: StepResult | None, *, problem: bool, after: bool, trace: bool
    ) -> None:
        """Fill the panes for ``row`` (``after``: the observation after the action; ``trace``: the
        policy call in place of the thinking; ``problem``: the episode could not be loaded)."""
        observation, prompt, thinking = self.pane("observation"), self.pane("prompt"), self.pane("thinking")
        if problem:
            observation.set_text(None, placeholder="this episode could not be loaded")
            prompt.set_text(None)
            thinking.set_text(None)
            return
        if row is None:
            for pane in (observation, prompt, thinking, self.pane("action")):
                pane.set_text(None, placeholder="no steps")
            self.show_screenshot(None)
            return
        entry = row.entry
        if self.general:
            self.show_general(row, entry, verdict, after=after, trace=trace)
        elif row.decision:
            observation.set_title("observation after action" if after else "observation")
            observation.set_lines(
                self.text_lines(
                    ("observation", row.position, after), (entry.tool_result or "") if after else entry.observation
                ),
                placeholder="empty observation",
            )
            lines, placeholder = self.pane_lines(("prompt", row.position), lambda: prompt_lines(entry))
            prompt.set_lines(lines, placeholder=placeholder)
            self.show_thinking(row, verdict)
            if trace:
                self.show_trace(verdict)
        else:  # a sub-event: an item-page action's pages before and after, another event's page
            if entry.tool_result is not None:
                text = (entry.tool_result or "") if after else entry.observation
                observation.set_title("observation after action" if after else "observation")
            else:
                text = entry.observation
                observation.set_title(f"{entry.event or ''} observation")
            observation.set_lines(
                self.text_lines(("observation", row.position, after), text),
                placeholder="no observation in this event",
            )
            prompt.set_text(None, placeholder="sub-events carry no prompt")
            fields = sub_event_fields(entry)
            thinking.set_title("event fields")
            thinking.set_text("\n".join(f"{k}: {v}" for k, v in fields.items()), placeholder="no fields")
        if (row.decision or self.general) and not trace:
            thinking.set_title("thinking")

    def pane_lines(
        self, key: tuple[object, ...], make: Callable[[], tuple[list[PaneLine], Any]]
    ) -> tuple[list[PaneLine], Any]:
        """``make()`` (the lines of a pane and what goes with them), kept under ``key``: showing the
        same step again passes the panes the same lists, whose wrapped rows they keep."""
        cached = self._pane_lines.get(key)
        if cached is None:
            cached = self._pane_lines[key] = make()
            while len(self._pane_lines) > self.PANE_LINES_KEPT:
                self._pane_lines.popitem(last=False)
        else:
            self._pane_lines.move_to_end(key)
        return cached

    def text_lines(self, key: tuple[object, ...], text: str | None) -> list[PaneLine]:
        """``text`` as display lines (none for no text), kept under ``key``."""
        lines, _ = self.pane_lines(key, lambda: (lines_from_text(text) if text else [], None))
        return lines

    def show_general(
        self, row: StepRow, step: TrajectoryStep, verdict: StepResult | None, *, after: bool, trace: bool
    ) -> None:
        """The panes of a step of another format: observation (or the tool result, o), the messages,
        the thinking (or the policy call, x), the action pane and the screenshot."""
        observation = self.pane("observation")
        shown = step.tool_result if after else step.observation
        lines, _ = self.pane_lines(("observation", row.position, after), lambda: (result_lines(shown), None))
        if after:
            observation.set_title("observation after action (tool result)")
            observation.set_lines(lines, placeholder="no tool result recorded")
        else:
            observation.set_title("observation")
            observation.set_lines(lines, placeholder="empty observation")
        prompt = self.pane("prompt")
        lines, last = self.pane_lines(("prompt", row.position), lambda: message_lines(step.messages))
        prompt.set_title(f"messages ({len(step.messages)})" if step.messages else "messages")
        prompt.set_lines(lines, placeholder="no messages recorded", top_line=last)
        self.show_thinking(row, verdict)
        if trace:
            self.show_trace(verdict)
        action = self.pane("action")
        action.set_title(
            "action" if step.action is not None else f"{'step' if row.decision else note_kind(step)} (no call)"
        )
        lines, _ = self.pane_lines(("action", row.position), lambda: (action_lines(step), None))
        action.set_lines(lines, placeholder="no action, text or tool result at this step")
        self.show_screenshot(row)

    def show_trace(self, verdict: StepResult | None) -> None:
        """The policy's own account of this step: request, response, tokens, latency, failure."""
        pane = self.pane("thinking")
        pane.set_title("policy call")
        if verdict is None or not verdict.trace:
            pane.set_text(None, placeholder="no policy call recorded for this step (x: thinking)")
            return
        pane.set_text(json.dumps(verdict.trace, indent=2, ensure_ascii=False, default=str))

    def show_thinking(self, row: StepRow, verdict: StepResult | None) -> None:
        """The recorded thinking, and below it what the replayed model said for this step (its
        reasoning, text and tool call) when a model answered it; x shows the whole request."""
        pane = self.pane("thinking")
        recorded = row.entry.thinking
        trace = verdict.trace if verdict is not None else None
        self._thinking_shown = (row.position, id(trace) if trace else None)
        if not trace or not ("response" in trace or "failure" in trace):
            pane.set_lines(self.text_lines(("thinking", row.position), recorded), placeholder="no thinking recorded")
            return
        key = ("thinking+model", row.position, id(verdict))
        lines, _ = self.pane_lines(key, lambda: (model_output_lines(recorded, trace), None))
        pane.set_lines(lines)

    def refresh_thinking(self, row: StepRow, verdict: StepResult | None) -> None:
        """A verdict arrived: show the replayed model's output under the step's thinking (only that
        pane, and only when its call is new; the other panes keep their scroll)."""
        trace = verdict.trace if verdict is not None else None
        if self._thinking_shown != (row.position, id(trace) if trace else None):
            self.show_thinking(row, verdict)

    # -- screenshot -------------------------------------------------------------------------
    def screenshot(self, row: StepRow) -> Image.Image | None:
        """The step's screenshot as an image (decoded once); None when it has none or it does not decode."""
        if row.position in self._images:
            return self._images[row.position]
        step = row.entry if self.general else None
        image = None
        if step is not None and step.screenshot:
            try:
                from PIL import Image

                with Image.open(io.BytesIO(step.screenshot)) as opened:
                    opened.load()
                    image = opened.copy()
            except Exception:  # a log's bytes: anything PIL raises means "not an image we can show"
                image = None
        self._images[row.position] = image
        return image

    def show_screenshot(self, row: StepRow | None) -> None:
        shot = self.shot
        if not shot.display:
            return
        step = row.entry if row is not None and self.general else None
        image = self.screenshot(row) if row is not None else None
        if image is not None:
            shot.border_title = f"screenshot {image.width}×{image.height}"
        elif step is not None and step.screenshot:
            shot.border_title = "screenshot (not an image this viewer reads)"
        else:
            shot.border_title = "screenshot (none at this step)"
        if shot.image is not image:
            shot.set_image(image)
