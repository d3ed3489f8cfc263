"""The browser builds a deferred outcome once per row it shows: a tau2 row's outcome reads its
simulation again (the reader keeps no outcome per episode), and the row's outcome and reason cells
used to build it three times (the outcome tests spent most of their CPU there)."""

from __future__ import annotations

import dataclasses

from replay_tui.formats.base import EpisodeSummary
from replay_tui.tui.replay.browser import BrowserScreen
from tests.tui.conftest import SIZE
from tests.tui.test_outcome_tui import TAU2_AIRLINE


async def test_a_row_reads_its_deferred_outcome_once(build):
    app = build([str(TAU2_AIRLINE)])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BrowserScreen)
        source = screen.source
        assert {"success", "reason"} <= {column.key for column in source.columns}
        built: list[int] = []
        for row in source.rows:
            raw = row.ref.raw
            assert isinstance(raw, EpisodeSummary) and raw.deferred_outcome is not None

            def counted(build_outcome=raw.deferred_outcome, sid=row.ref.session_id):
                built.append(sid)
                return build_outcome()

            row.ref.raw = dataclasses.replace(raw, deferred_outcome=counted)
        cells = [[cell.plain for cell in source.cells(i)] for i in range(len(source))]
        assert len(cells) == 20 and any("✗" in row for row in cells) and any("✓" in row for row in cells)
        assert sorted(built) == sorted(row.ref.session_id for row in source.rows)
