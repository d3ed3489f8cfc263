"""The renderer's page copies (``.NAME.visual-<hex>.html`` beside the user's HTML) never outlive the
command: SIGTERM runs the cleanup, and a copy a killed process left is removed on the next render."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from replay_tui.visual.examples import example_pair
from replay_tui.visual.render import remove_stale_copies

ROOT = Path(__file__).resolve().parents[2]


def copies(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".visual-" in p.name)


def test_stale_copies_of_earlier_processes_go_and_others_stay(tmp_path: Path) -> None:
    old = tmp_path / ".page.visual-0123456789ab.html"
    fresh = tmp_path / ".other.visual-abcdef012345.html"
    mine = tmp_path / "page.html"
    for path in (old, fresh, mine):
        path.write_text("<p>x</p>")
    os.utime(old, (time.time() - 3600, time.time() - 3600))  # from before this process started
    assert remove_stale_copies(tmp_path) == 1
    assert copies(tmp_path) == [fresh.name] and mine.exists()


def test_sigterm_during_a_render_leaves_no_copy(tmp_path: Path) -> None:
    ref, pred = example_pair("11202", "move")
    folder = tmp_path / "pages"
    folder.mkdir()
    ref_html = folder / "ref.html"
    pred_html = folder / "pred.html"
    shutil.copy(ref, ref_html)
    shutil.copy(pred, pred_html)
    proc = subprocess.Popen(
        [sys.executable, "-m", "replay_tui", "visual", str(ref_html), str(pred_html)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not copies(folder) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    seen = copies(folder)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert seen, "the renderer never wrote its copy (the test saw nothing to clean)"
    assert copies(folder) == [], err
    assert proc.returncode in (128 + signal.SIGTERM, 0), err


def test_a_render_in_progress_does_not_add_a_page(tmp_path: Path, monkeypatch) -> None:
    """Another process listing the pages while a render keeps its copy beside one (CI: one xdist worker
    rendered the bundled pages while another counted them and found 7 ids, 3 of them copies)."""
    from replay_tui.visual import examples
    from replay_tui.visual.batch import bundled_pairs

    folder = tmp_path / "examples"
    shutil.copytree(examples.EXAMPLES_DIR, folder)
    ids = examples.example_ids()
    (folder / "ref" / ".11202.visual-0123456789ab.html").write_text("<p>a copy</p>")
    (folder / "move" / ".11202.visual-0123456789ab.html").write_text("<p>a copy</p>")
    monkeypatch.setattr(examples, "EXAMPLES_DIR", folder)
    assert examples.example_ids() == ids
    assert len(bundled_pairs()) == len(ids) * len(examples.VARIANTS)
