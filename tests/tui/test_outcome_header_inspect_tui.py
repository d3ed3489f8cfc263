"""Issue 30's acceptance on the shared inspect_ai logs, in the app: opening each sample shows, in the
frame a user sees (not only in the widget's text), the sample's target, the model's answer and the
scorer's explanation as the file records them (read here with json and zstd, not by the reader)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from replay_tui.tui.replay.stepper import StepperScreen
from tests.core.test_report_outcomes import INSPECT_SHARED
from tests.formats.test_inspect_ai import raw_samples, resolved
from tests.tui.conftest import SIZE
from tests.tui.test_outcome_tui import screen_lines


def squash(text: str) -> str:
    return " ".join(text.split())


def recorded(sample: dict[str, Any]) -> dict[str, str]:
    """What the file says of a sample: its target, the model's answer (the output's completion, else
    the first scorer's answer) and the first scorer's explanation, those it records."""
    target = resolved(sample, sample.get("target"))
    first = next(iter((sample.get("scores") or {}).values()), {})
    completion = resolved(sample, (sample.get("output") or {}).get("completion"))
    found = {
        "target": "".join(target) if isinstance(target, list) else target,
        "answer": completion or first.get("answer"),
        "explanation": first.get("explanation"),
    }
    return {label: squash(text) for label, text in found.items() if isinstance(text, str) and squash(text)}


@pytest.mark.slow  # 22 samples opened one by one
async def test_each_samples_target_answer_and_explanation_are_on_screen(build) -> None:
    paths = list(INSPECT_SHARED)
    samples = {(path.name, str(s["id"]), s.get("epoch")): s for path in paths for s in raw_samples(path)[1]}
    app = build([str(path) for path in paths])
    shown = 0
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        refs = app.workspace.demos.refs
        assert len(refs) == len(samples)
        for ref in refs:
            app.open_episode(ref.session_id)
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, StepperScreen)
            extra = screen.trajectory.extra
            sample = samples[(Path(ref.file.name).name, str(extra["sample_id"]), extra.get("epoch"))]
            lines = screen_lines(app)
            top = squash(" ".join(lines[: next(n for n, line in enumerate(lines) if "recorded action" in line)]))
            for label, text in recorded(sample).items():
                assert f"{label} {text[:30]}" in top, (ref.file.name, label, text, top)
                shown += 1
            await pilot.press("escape")
            await pilot.pause()
    assert shown >= 2 * len(samples)
