"""Run the released Design2Code ``visual_score.py`` side by side with replay-tui (bench only, nothing vendored).

Nothing of Design2Code's code is in this repository. :func:`prepare` copies the files the metric needs from a
checkout given on the command line into a temporary folder and patches the copies there, at run time:

* ``metrics/visual_score.py``: the ``IndentationError`` in ``visual_eval_v3_multi`` (line 458 at 7a575e4: the
  ``if len(predict_blocks) == 0:`` block is indented by 9 spaces, its ``elif`` by 12) is re-indented; nothing else;
* ``metrics/screenshot_single.py``: ``p.chromium.launch()`` gets ``executable_path`` (Debian's Chromium; the
  script expects Playwright's own download), nothing else (no sandbox flags, no network blocking: the bundled
  pages load only ``rick.jpg``);
* stand-ins for packages that are not installed here: ``torch`` and ``clip`` (CLIP is stubbed on both sides:
  ``calculate_clip_similarity_with_blocks`` returns 0.0 and replay-tui runs without CLIP, so neither side spends
  time on it), ``matplotlib``, ``sklearn`` and ``tqdm`` (imported, unused on this path), and ``colormath`` when
  it is missing: its CIEDE2000 chain as :mod:`replay_tui.visual.color` computes it (tested there to agree with
  python-colormath 3.0.0); an installed colormath is used as it is.

Getting the script::

    git clone https://github.com/NoviScl/Design2Code /tmp/Design2Code     # tested at 7a575e4 (2024-11-01)
    python bench/bench_visual.py --d2c-script /tmp/Design2Code/Design2Code/metrics/visual_score.py

The metric runs as the README says (``visual_eval_v3_multi([[pred.html], ref.html])``), in a Python process of its
own, so its module-level state (and its ``os.system`` screenshots: a new Python process and a new Chromium for each
of the six screenshots of a pair) stays out of the benchmark's process. It rewrites the generated page in place
and writes its PNGs beside the pages, so every pair is copied into a folder of its own first.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# the files visual_score.py reaches (its imports and its os.system calls), relative to the Design2Code package
NEEDED = (
    "__init__.py",
    "metrics/__init__.py",
    "metrics/visual_score.py",
    "metrics/ocr_free_utils.py",
    "metrics/screenshot_single.py",
    "data_utils/__init__.py",
    "data_utils/dedup_post_gen.py",
)
TESTED_SHA256 = "visual_score.py at NoviScl/Design2Code 7a575e4"

STUBS = {
    "torch/__init__.py": """
class _Cuda:
    @staticmethod
    def is_available():
        return False


cuda = _Cuda()


class no_grad:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
""",
    "clip/__init__.py": """
def load(name, device="cpu"):
    return None, None  # CLIP is stubbed: calculate_clip_similarity_with_blocks is replaced by the driver
""",
    "matplotlib/__init__.py": "",
    "matplotlib/pyplot.py": """
def __getattr__(name):
    return lambda *args, **kwargs: None
""",
    "sklearn/__init__.py": "",
    "sklearn/metrics/__init__.py": "",
    "sklearn/metrics/pairwise.py": """
def cosine_similarity(*args, **kwargs):
    raise NotImplementedError("stub: only CLIP uses it")
""",
    "tqdm/__init__.py": """
def tqdm(iterable=None, *args, **kwargs):
    return iterable
""",
}

COLORMATH_SHIM = {
    "colormath/__init__.py": "",
    "colormath/color_objects.py": """
class sRGBColor:
    def __init__(self, r, g, b, is_upscaled=False):
        self.rgb = (r, g, b) if is_upscaled else (r * 255.0, g * 255.0, b * 255.0)


class LabColor:
    def __init__(self, l, a, b):
        self.lab = (l, a, b)
""",
    "colormath/color_conversions.py": """
from replay_tui.visual.color import srgb_to_lab
from colormath.color_objects import LabColor


def convert_color(color, target):
    assert target is LabColor
    return LabColor(*srgb_to_lab(color.rgb))
""",
    "colormath/color_diff.py": """
from replay_tui.visual.color import delta_e_colormath


def delta_e_cie2000(lab1, lab2):
    return delta_e_colormath(lab1.lab, lab2.lab)
""",
}

DRIVER = r"""
import json, os, sys, time
sys.path[:0] = [os.environ["D2C_STUBS"], os.environ["D2C_ROOT"]]
os.chdir(os.path.join(os.environ["D2C_ROOT"], "Design2Code"))  # it runs "python3 metrics/screenshot_single.py"
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    from Design2Code.metrics import visual_score as vs
vs.calculate_clip_similarity_with_blocks = lambda *args, **kwargs: 0.0  # CLIP stubbed
out = []
for pred, ref in json.loads(sys.stdin.read()):
    log = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(log):
        result = vs.visual_eval_v3_multi([[pred], ref])
    seconds = time.perf_counter() - started
    sum_areas, final, (block, text, position, color, clip) = result[0]
    out.append({"seconds": seconds, "final": final, "block": block, "text": text, "position": position,
                "color": color, "clip": clip, "log": log.getvalue()[-2000:]})
print(json.dumps(out))
"""


class D2CUnavailable(RuntimeError):
    """The script could not be prepared (the reason is the message)."""


def fix_indentation(source: str) -> tuple[str, int]:
    """Re-indent the mis-indented ``if``/``elif`` block of ``visual_eval_v3_multi``; return the text and the line
    number that raised (1-based). The block's ``if`` has 9 spaces, its body 16, its ``elif`` 12: they become
    8, 12 and 8."""
    lines = source.split("\n")
    starts = [k for k, line in enumerate(lines) if line.startswith("         if len(predict_blocks) == 0:")]
    if not starts:
        raise D2CUnavailable("visual_score.py: the mis-indented block was not found (another version?)")
    number = starts[0]
    end = number + 1
    while end < len(lines) and lines[end].strip():
        end += 1
    for k in range(number, end):
        text = lines[k].lstrip(" ")
        indent = len(lines[k]) - len(text)
        new_indent = {9: 8, 12: 8, 16: 12}.get(indent, indent - 4 if indent >= 16 else indent)
        lines[k] = " " * new_indent + text
    return "\n".join(lines), number + 1


def prepare(script: Path, workdir: Path, chromium: str) -> dict:
    """Copy and patch the metric into ``workdir``; return what was done (for the benchmark's output)."""
    script = Path(script).resolve()
    package = script.parents[1]
    if script.name != "visual_score.py" or package.name != "Design2Code":
        raise D2CUnavailable(f"{script}: expected <checkout>/Design2Code/metrics/visual_score.py")
    root = workdir / "d2c"
    for name in NEEDED:
        source = package / name
        if not source.is_file():
            raise D2CUnavailable(f"{source} is missing (visual_score.py needs it; give a whole checkout)")
        target = root / "Design2Code" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    metrics = root / "Design2Code" / "metrics"
    original = (metrics / "visual_score.py").read_text(encoding="utf-8")
    try:
        compile(original, "visual_score.py", "exec")
        fixed_line = None
        patched = original
    except IndentationError:
        patched, fixed_line = fix_indentation(original)
    compile(patched, "visual_score.py", "exec")
    (metrics / "visual_score.py").write_text(patched, encoding="utf-8")
    shot = (metrics / "screenshot_single.py").read_text(encoding="utf-8")
    if "browser = p.chromium.launch()" not in shot:
        raise D2CUnavailable("screenshot_single.py: 'browser = p.chromium.launch()' not found (another version?)")
    shot = shot.replace("browser = p.chromium.launch()", f"browser = p.chromium.launch(executable_path={chromium!r})")
    (metrics / "screenshot_single.py").write_text(shot, encoding="utf-8")
    stubs = workdir / "stubs"
    files = dict(STUBS)
    try:
        import colormath  # noqa: F401

        colour = "python-colormath (installed)"
    except ImportError:
        files.update(COLORMATH_SHIM)
        colour = "colormath shim (replay_tui.visual.color's colormath chain)"
    for name, text in files.items():
        target = stubs / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text.lstrip("\n"), encoding="utf-8")
    return {
        "root": str(root),
        "stubs": str(stubs),
        "script_sha256": hashlib.sha256(original.encode("utf-8")).hexdigest(),
        "indentation_fixed_at_line": fixed_line,
        "colour": colour,
    }


def run_pairs(prepared: dict, pairs: list[tuple[Path, Path]], workdir: Path) -> list[dict]:
    """Score ``(ref, pred)`` pairs with the original, one after another; per pair its seconds and scores."""
    jobs = []
    for k, (ref, pred) in enumerate(pairs):
        folder = workdir / f"pair{k}"
        for side, page in (("ref", ref), ("pred", pred)):
            (folder / side).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(page, folder / side / Path(page).name)
            for extra in Path(page).parent.glob("*.jpg"):  # the placeholder image the pages use
                shutil.copyfile(extra, folder / side / extra.name)
        jobs.append((str(folder / "pred" / Path(pred).name), str(folder / "ref" / Path(ref).name)))
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")  # its "python3"
    env["D2C_ROOT"], env["D2C_STUBS"] = prepared["root"], prepared["stubs"]
    repo = str(Path(__file__).resolve().parents[1])  # the colormath shim imports replay_tui
    env["PYTHONPATH"] = repo + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    done = subprocess.run(
        [sys.executable, "-c", DRIVER], input=json.dumps(jobs), capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise D2CUnavailable(f"the original metric failed: {done.stderr.strip()[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
