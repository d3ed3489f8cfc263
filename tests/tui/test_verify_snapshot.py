"""The verify browser on answers whose network checks ran on traces: a failing check's offending
request, the field that differs and both values beside the table's network column."""

from __future__ import annotations

from replay_tui.tui.verify.app import VerifyApp
from tests.tui.conftest import SIZE
from tests.tui.test_verify_app import make_network_report


def test_verify_network_snapshot(snap_compare):
    report, tasks = make_network_report()
    assert snap_compare(VerifyApp(report, tasks), terminal_size=SIZE, press=["j"])
