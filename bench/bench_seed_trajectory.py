"""Benchmark: what a seed demo file's Trajectory costs to build (issue 29, groundwork for step 5).

Run by hand (not in CI):

    python bench/bench_seed_trajectory.py                 # bench/data/bench_100mb.json (bench_keys writes it)
    python bench/bench_seed_trajectory.py --size-mb 20    # a smaller file, generated once

Prints (1) one TrajectoryStep made five ways (microseconds each: pydantic validation, the
``model_copy`` of a default step that ``formats/webshop_demos/fast._step`` uses, ``model_construct``, a bare
``__new__`` that sets the fields' dict, and a ``msgspec.Struct`` of the same fields), then
(2) ``fast_trajectory`` over every clean episode of the file, with the cyclic GC on and paused
(CPU seconds, best of --runs), and its profile by part: the steps' and calls' copies, the outcome
(the done page's purchase parsed), the sub-events' fields.

Measured on the 2-core VM (shared, load 2-4), November 2026, on the 100 MB file (3,648 clean
episodes, 40,032 steps): one step 8.9 us validated, 7.1 us copied, 582 us ``model_construct`` (it
inspects every default factory's signature on each call: why it was slower than validating),
4.2 us ``__new__`` + dict, 0.8 us a Struct; ``fast_trajectory`` 1.4-1.8 s, of it (profile of 1,368
episodes) the copies 46 %, the outcome 19 % (``_purchased`` 16 %), the sub-events' fields 13 %.
The ``__new__`` + dict constructor took the whole build from 1.66 to 1.41 s (same dumps). The
larger cost is the cyclic GC walking the growing trajectories: the same build under
``gc_paused`` took 0.82-0.91 s against 1.75-2.15 s with it on (in a profile the copies' own time
swells for that reason: a collection runs inside them).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import sys
import time
import timeit
from pathlib import Path
from typing import Any

import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from replay_tui.episodes.model import TrajectoryStep  # noqa: E402
from replay_tui.formats.webshop_demos import synth  # noqa: E402
from replay_tui.formats.webshop_demos.fast import _STEP, fast_trajectory  # noqa: E402
from replay_tui.gcpause import gc_paused  # noqa: E402
from replay_tui.sources import open_sources  # noqa: E402

VALUES: dict[str, Any] = {
    "index": 3,
    "label": "3",
    "observation": "WebShop [SEP] Instruction: [SEP] i need a long clip-in hair extension " * 20,
    "thinking": "Search for the product.",
    "action_text": "search[long clip-in hair extension]",
    "tool_result": "page",
    "reward": 0.0,
    "done": False,
    "state": "search",
    "available_actions": ["search"],
    "extra": {"llm_prompt": "[]"},
    "kind": "decision",
}


class StructStep(msgspec.Struct, gc=False):
    """The same fields as a Struct (what a typed step without pydantic would cost)."""

    index: int
    label: str = ""
    observation: str = ""
    thinking: str = ""
    action_text: str = ""
    tool_result: str | None = None
    reward: float | None = None
    done: bool = False
    state: str | None = None
    available_actions: list[str] | None = None
    extra: dict[str, Any] = {}
    kind: str | None = None


DEFAULTS = dict(_STEP.__dict__)


def bare_new(values: dict[str, Any]) -> TrajectoryStep:
    """A step made as ``model_construct`` makes one, without its per-call default-factory checks."""
    step = TrajectoryStep.__new__(TrajectoryStep)
    fresh = {"messages": [], "tools": [], "other_actions": [], "extra": {}, "warnings": []}
    object.__setattr__(step, "__dict__", {**DEFAULTS, **fresh, **values})
    object.__setattr__(step, "__pydantic_fields_set__", set(values))
    object.__setattr__(step, "__pydantic_extra__", None)
    object.__setattr__(step, "__pydantic_private__", None)
    return step


def one_step() -> None:
    fresh = {"messages": [], "tools": [], "other_actions": [], "extra": {}, "warnings": []}
    ways = {
        "validated": lambda: TrajectoryStep(**VALUES),
        "model_copy (webshop_demos.fast today)": lambda: _STEP.model_copy(update={**fresh, **VALUES}),
        "model_construct": lambda: TrajectoryStep.model_construct(**VALUES),
        "__new__ + fields' dict": lambda: bare_new(VALUES),
        "msgspec.Struct": lambda: StructStep(**VALUES),
    }
    assert bare_new(VALUES) == TrajectoryStep(**VALUES)
    print("one step:")
    for name, make in ways.items():
        number = 200 if name == "model_construct" else 20000
        print(f"  {name:<32} {timeit.timeit(make, number=number) / number * 1e6:8.1f} us")


def whole_file(path: Path, runs: int) -> None:
    demos = open_sources([path])
    demo = demos.files[0]
    fasts = [fast for fast in (demo.read_fast(ref) for ref in demo.episodes) if fast is not None]
    for paused in (False, True):
        best = float("inf")
        steps = 0
        for _ in range(runs):
            start = time.process_time()
            with gc_paused() if paused else contextlib.nullcontext():
                built = [fast_trajectory(fast) for fast in fasts]
            best = min(best, time.process_time() - start)
            steps = sum(len(trajectory.steps) for trajectory in built)
            del built
        how = "the cyclic GC paused (gcpause.gc_paused)" if paused else "the cyclic GC on"
        print(f"fast_trajectory, {how}: {len(fasts):,} clean episodes, {steps:,} steps: {best:.2f} s CPU")
    profile = cProfile.Profile()
    profile.runcall(lambda: [fast_trajectory(fast) for fast in fasts])
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats("fast.py|model.py|main.py", 10)
    print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    path = HERE / "data" / f"bench_{args.size_mb}mb.json"
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        print(f"generating {path} ...", flush=True)
        synth.write_demo_file(path, start=0, count=1, seed=7, quirk_rate=0.1, target_bytes=args.size_mb * 2**20)
    one_step()
    whole_file(path, args.runs)


if __name__ == "__main__":
    main()
