"""Every report format stays byte-identical across refactors of the exporters (issue 29).

The golden files under ``tests/data/report_goldens/`` were rendered by the code before the export
package was split out; regenerate them only on purpose, with
``python -m tests.core.test_report_goldens`` from the repository root, and read the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replay_tui.compare import agreement_matrix, compare_outcomes, compare_runs, repeat_runs
from replay_tui.env import OfflineWebshopEnv
from replay_tui.examples import example_path
from replay_tui.export import FORMATS, render_report
from replay_tui.export.comparison import render_agreement, render_comparison
from replay_tui.export.outcomes import FORMATS as OUTCOME_FORMATS
from replay_tui.export.outcomes import render as render_outcomes
from replay_tui.formats.webshop_demos.index import open_demos
from replay_tui.pairing import load_pair
from replay_tui.policies import HeuristicPolicy, StubPolicy
from replay_tui.repeat import run_repeats
from replay_tui.runner import Runner, SummaryReport

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT / "tests" / "data" / "report_goldens"
TAU2 = "tests/data/compare_pairs/tau2"
SUFFIX = {"json": "json", "md": "md", "csv": "csv", "html": "html", "junit": "xml"}
PAIRS = ("pair1", "pair2", "pair3")


EPISODES = range(12)
"""The bundled example's first episodes (enough for mismatches of every state, small goldens)."""


def _example() -> Path:
    """The bundled example by a path relative to the repository root, so no report names a folder."""
    return Path("replay_tui") / "examples" / example_path().name


def _replay(mode: str, mismatch: str) -> SummaryReport:
    env = OfflineWebshopEnv(open_demos(_example()), mismatch_policy=mismatch)
    policy = StubPolicy() if mode == "stub" else HeuristicPolicy()
    return Runner(env, policy, mode=mode).run_all(EPISODES)


def _info(run: str) -> dict[str, object]:
    name = example_path().name
    return {"name": run, "demo_files": [{"name": name, "path": name, "sha256": "ab" * 32}]}


def render_all() -> dict[str, bytes]:
    """Every report of the four kinds, by golden file name (run from the repository root)."""
    out: dict[str, bytes] = {}
    runs: dict[str, SummaryReport] = {}
    for mode in ("stub", "heuristic"):
        for mismatch in ("stop", "allow"):
            summary = runs[f"{mode}_{mismatch}"] = _replay(mode, mismatch)
            for fmt in FORMATS:
                out[f"run_{mode}_{mismatch}.{SUFFIX[fmt]}"] = render_report(summary, fmt)
            out[f"run_{mode}_{mismatch}_titled.md"] = render_report(summary, "md", title="A <b>title</b>")
    comparison = compare_runs(
        runs["stub_allow"], runs["heuristic_allow"], a_info=_info("stub"), b_info=_info("heuristic"), resamples=500
    )
    for fmt in FORMATS:
        out[f"compare_stub_heuristic.{SUFFIX[fmt]}"] = render_comparison(comparison, fmt)
    for pair in PAIRS:
        a, b = sorted(str(p.relative_to(ROOT)) for p in (ROOT / TAU2).glob(f"{pair}_*.json"))
        outcomes = compare_outcomes(load_pair([a, b]), resamples=500)
        for fmt in OUTCOME_FORMATS:
            out[f"logs_{pair}.{SUFFIX[fmt]}"] = render_outcomes(outcomes, fmt)
    repeat = run_repeats(HeuristicPolicy, open_demos(_example()), EPISODES, repeats=2, mode="heuristic")
    out["repeat_heuristic.json"] = repeat.to_json()
    loaded = repeat_runs(repeat.model_dump(mode="json"), "repeat.json")
    agreement = agreement_matrix([run.summary for run in loaded], [run.info for run in loaded])
    for fmt in ("json", "md", "csv", "html"):
        out[f"repeat_agreement.{SUFFIX[fmt]}"] = render_agreement(agreement, fmt)
    return out


@pytest.fixture(scope="module")
def rendered() -> dict[str, bytes]:
    here = Path.cwd()
    os.chdir(ROOT)
    try:
        return render_all()
    finally:
        os.chdir(here)


def test_every_golden_is_rendered(rendered: dict[str, bytes]) -> None:
    assert sorted(rendered) == sorted(path.name for path in GOLDENS.iterdir())


@pytest.mark.parametrize("name", sorted(path.name for path in GOLDENS.iterdir()))
def test_report_is_byte_identical_to_its_golden(rendered: dict[str, bytes], name: str) -> None:
    assert rendered[name] == (GOLDENS / name).read_bytes(), name


if __name__ == "__main__":
    os.chdir(ROOT)
    GOLDENS.mkdir(parents=True, exist_ok=True)
    for name, data in render_all().items():
        (GOLDENS / name).write_bytes(data)
