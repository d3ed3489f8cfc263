"""The app on an inspect_ai log without tool calls (multiple choice): each sample's reply is one
decision, shown as the step's action, and a stub replay in the app judges it (a ✓, not nothing)."""

from __future__ import annotations

from replay_tui.tui.replay.stepper import StepperScreen
from tests.conftest import DATA
from tests.tui.conftest import SIZE, wait_replay
from tests.tui.test_formats_tui import assert_shown, browser_rows, header

CHOICE = DATA / "formats" / "inspect_ai" / "answers_choice.eval"


async def test_a_multiple_choice_sample_is_one_judged_decision_in_the_app(build):
    app = build([str(CHOICE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        calls = header(app).index("calls")
        assert [row[calls] for row in browser_rows(app)] == ["1", "1"]  # the answer is what a replay judges
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        assert_shown(app, "action", "ANSWER: B")
        await pilot.press("r")
        await wait_replay(app, pilot)
        (verdict,) = app.step_results[0].values()
        assert verdict.match and verdict.state == "answer" and verdict.expected == "ANSWER: B"
        assert screen.source.cells(0)[0].plain == "✓"


def _samples(path):
    """Each sample of an .eval as JSON, in member order, read with the standard library and zstd."""
    import json
    import struct
    import zipfile

    from backports import zstd

    data = path.read_bytes()
    found = []
    for info in zipfile.ZipFile(path).infolist():
        if info.filename.startswith("samples/"):
            name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
            start = info.header_offset + 30 + name_len + extra_len
            raw = data[start : start + info.compress_size]
            found.append(json.loads(zstd.decompress(raw) if info.compress_type == 93 else raw))
    return found


async def test_the_stepper_header_names_each_samples_target_answer_and_explanation(build):
    """Issue 30's acceptance on an inspect_ai log written by inspect_ai: opening a sample shows what the
    log says of it, target, the model's answer and the scorer's explanation, as the file has them."""
    path = DATA / "formats" / "inspect_ai" / "answers_qa.eval"
    samples = {str(sample["id"]): sample for sample in _samples(path)}
    app = build([str(path)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert len(browser_rows(app)) == len(samples)
        for index in range(len(samples)):
            app.open_episode(index)
            await pilot.pause()
            screen = app.screen
            assert isinstance(screen, StepperScreen)
            sample = samples[str(screen.trajectory.id)]
            (score,) = sample["scores"].values()
            shown = " ".join(str(screen.query_one("#outcome-detail").render()).split())
            assert f"target {sample['target']}" in shown, shown
            assert f"answer {' '.join(sample['output']['completion'].split())}" in shown, shown
            assert f"explanation {' '.join(score['explanation'].split())}" in shown, shown
            await pilot.press("escape")
            await pilot.pause()


async def test_a_plain_answer_step_shows_no_empty_log_line(build):
    """A step without a tool call has no call text of its own: the detail says what is expected
    (the reply), and no 'log shows' line with nothing after it."""
    app = build([str(DATA / "formats" / "inspect_ai" / "mmlu-summary-choices.eval")])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        lines = app.screen.query_one("#step-detail").render().plain.splitlines()
        assert "expected   ANSWER: C" in lines
        assert not [line for line in lines[1:] if not line[11:].strip()], lines  # a label with nothing after it
