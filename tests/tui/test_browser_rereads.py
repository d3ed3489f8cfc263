"""The browser builds a deferred outcome once per episode: a tau2 row's outcome reads its simulation
again (the reader keeps no outcome per episode). A row's outcome and reason cells used to build it
three times (the outcome tests spent most of their CPU there), and every sort by success or reason
and every ``f`` built every episode's again."""

from __future__ import annotations

import dataclasses
from collections import Counter

from replay_tui.formats.base import EpisodeSummary
from replay_tui.tui.replay.browser import BrowserScreen
from tests.tui.conftest import SIZE
from tests.tui.test_outcome_tui import TAU2_AIRLINE


def _count_builds(app) -> Counter[int]:
    """Wrap every episode's deferred outcome to count its builds by session id (before the app runs)."""
    built: Counter[int] = Counter()
    for ref in app.workspace.demos.refs:
        raw = ref.summary
        assert isinstance(raw, EpisodeSummary) and raw.deferred_outcome is not None

        def counted(build_outcome=raw.deferred_outcome, sid=ref.session_id):
            built[sid] += 1
            return build_outcome()

        ref.raw = ref.summary = dataclasses.replace(raw, deferred_outcome=counted)
    return built


async def test_a_row_reads_its_deferred_outcome_once(build):
    app = build([str(TAU2_AIRLINE)])
    built = _count_builds(app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        source = screen.source
        assert {"success", "reason"} <= {column.key for column in source.columns}
        cells = [[cell.plain for cell in source.cells(i)] for i in range(len(source))]
        assert len(cells) == 20 and any("✗" in row for row in cells) and any("✓" in row for row in cells)
        assert set(built) == {row.ref.session_id for row in source.rows}
        assert set(built.values()) == {1}


async def test_sorting_by_outcome_and_filtering_failures_build_no_outcome_again(build):
    app = build([str(TAU2_AIRLINE)])
    built = _count_builds(app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        shown = []
        for key in ("success", "reason"):
            for _ in range(len(screen.sort_keys)):
                if screen.sort_key == key:
                    break
                await pilot.press("s")
            assert screen.sort_key == key
            await pilot.press("S")  # reversed too
            await pilot.pause()
            shown.append([screen.source.rows[i].session_id for i in range(len(screen.source))])
        success = [column.key for column in screen.source.columns].index("success")
        marks = [screen.source.cells(i)[success].plain for i in range(len(screen.source))]
        assert {"✓", "✗"} <= set(marks)
        await pilot.press("f")  # failed only
        await pilot.pause()
        failed = [screen.source.cells(i)[success].plain for i in range(len(screen.source))]
        assert failed and set(failed) <= {"✗", "!"} and len(failed) < 20
        for _ in range(len(screen.source.outcome_filters())):  # through the other outcome filters, back to all
            if not screen.filters.outcome:
                break
            await pilot.press("f")
            await pilot.pause()
        assert not screen.filters.outcome and len(screen.source.rows) >= 20
    assert set(built.values()) == {1}, built
    assert all(sorted(ids) == sorted(shown[0]) for ids in shown)
