"""A comparison's headline weighs the regressions against the fixes and says in words whether the
difference is significant (issue 34, item 3): a candidate better by many points with a few
regressions is not headed ❌ like one that got worse."""

from __future__ import annotations

from replay_tui.compare import compare_runs
from replay_tui.export.comparison import render_comparison
from tests.core.test_compare import demo_info, make_report

WRONG = "click[Wrong]"


def _rows(regressed: int, fixed: int, same: int = 10) -> list[tuple[int, str, str, str, str, str]]:
    """One episode per step: ``regressed`` right in A only, ``fixed`` in B only, ``same`` in both."""
    rows = []
    kinds = ["regressed"] * regressed + ["fixed"] * fixed + ["same"] * same
    for session, kind in enumerate(kinds, start=1):
        expected = f"click[B{session:03d}]"
        a = WRONG if kind == "fixed" else "="
        b = WRONG if kind == "regressed" else "="
        rows.append((session, "0", "Result", expected, a, b))
    return rows


def _headline(regressed: int, fixed: int) -> str:
    rows = _rows(regressed, fixed)
    comparison = compare_runs(
        make_report(rows, 4), make_report(rows, 5), a_info=demo_info(), b_info=demo_info(), resamples=200
    )
    markdown = render_comparison(comparison, "md").decode()
    return next(line for line in markdown.splitlines() if line.startswith("**"))


def test_a_significantly_better_candidate_with_regressions_is_not_headed_as_a_failure() -> None:
    line = _headline(regressed=2, fixed=30)
    assert not line.startswith("**❌")
    assert "B is better (+" in line and "with 2 regressions" in line and "McNemar p = " in line


def test_a_significantly_worse_candidate_is_headed_as_a_failure() -> None:
    line = _headline(regressed=30, fixed=2)
    assert line.startswith("**❌ B is worse (−")


def test_no_regression_and_no_significant_difference_say_so() -> None:
    assert _headline(regressed=0, fixed=3).startswith("**✅ No regression")
    assert _headline(regressed=3, fixed=4).startswith("**⚠️ Regressions, no significant difference")
