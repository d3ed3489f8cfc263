"""Shared builders for demo episodes in the exact contract, and paths to real example files."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

# -- isolation: the whole session, every worker, before any module fixture ---------------------------

# Every place the app (or a library it drives: Ray, Chromium, pip) may write on its own, pointed at a
# per-process temporary folder. The per-test ``_no_user_dirs`` below narrows this to each test's tmp_path.
ISOLATED_DIRS = {
    "HOME": "home",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_DATA_HOME": "home/.local/share",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_STATE_HOME": "home/.local/state",
    "REPLAY_TUI_RUNS_DIR": "runs",
    "REPLAY_TUI_CACHE_DIR": "llm-cache",
    # Ray's session folders (logs, sockets), else /tmp/ray for good; short: a socket path must fit in 107 bytes
    "RAY_TMPDIR": "ray",
}
# Settings of the user's that would change what the tests see (the model, the viewer, the graphics).
UNSET = ("REPLAY_TUI_MODEL", "REPLAY_TUI_VIEWER", "REPLAY_TUI_GRAPHICS")
# The user's real home, remembered by the first process (xdist workers inherit the redirected HOME):
# only for caches the user opts into, such as the official evaluator's side venv.
USER_HOME_ENV = "REPLAY_TUI_TESTS_USER_HOME"


def pytest_configure(config: pytest.Config) -> None:
    """Point HOME, every XDG_*_HOME and the app's own folders into a temporary folder for the session,
    so no test, module fixture or subprocess can write into the user's files."""
    os.environ.setdefault(USER_HOME_ENV, os.environ.get("HOME") or str(Path.home()))
    root = Path(tempfile.mkdtemp(prefix="replay-tui-tests-"))
    config.stash[_SESSION_ROOT] = root
    for name, relative in ISOLATED_DIRS.items():
        (root / relative).mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(root / relative)
    for name in UNSET:
        os.environ.pop(name, None)
    _quicker_pilot()


# Pilot waits after every key (twice) and every pause until the app looks idle: it sleeps in windows of
# textual._wait.SLEEP_GRANULARITY (20 ms) until one passes with almost no CPU used. A window must outlast the
# screen's update timer (textual.screen.UPDATE_PERIOD, 1/60 s), or a wait can end between a change and the
# frame that shows it, so both are shortened together: 10 ms windows over 8.3 ms frames
# (tests/tui/test_pilot_windows.py holds that). tests/tui with two workers: 410 -> 265 s, CPU 349 -> 308 s,
# every snapshot the same: what a test checks is unchanged, only how long Pilot idles before checking.
# (Both are module globals read at each use, so setting them here holds even though the textual-snapshot
# plugin has imported Textual already.)
PILOT_IDLE_WINDOW = 0.010
PILOT_UPDATE_PERIOD = 1 / 120


def _quicker_pilot() -> None:
    import textual._wait
    import textual.screen

    textual._wait.SLEEP_GRANULARITY = PILOT_IDLE_WINDOW
    textual._wait.SLEEP_IDLE = PILOT_IDLE_WINDOW / 20  # Textual's ratio of idle CPU to window
    textual.screen.UPDATE_PERIOD = PILOT_UPDATE_PERIOD  # type: ignore[misc]  # Final in Textual


def pytest_unconfigure(config: pytest.Config) -> None:
    root = config.stash.get(_SESSION_ROOT, None)
    if root is not None:
        shutil.rmtree(root, ignore_errors=True)


_SESSION_ROOT = pytest.StashKey[Path]()


# -- parallel runs (pytest-xdist, --dist loadgroup) -------------------------------------------------


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: a worker more than the cores. A Pilot test idles about 40 % of its wall time (it
    sleeps after every key until the app looks idle) and a Chromium or sandbox test waits on its
    pages, so two workers left the two cores a fifth idle; a third fills it. Same CPU in all (a cgroup
    counting Chromium's and Ray's too: 579 s against 594 s), pytest 392 -> 326 s on the 2-core machine."""
    return (os.cpu_count() or 1) + 1


# The fixtures that hold a real headless Chromium: one per worker (tests/visual/conftest.py), the sandbox
# test's bare one, the browsing session tests/verify/test_network.py records.
CHROMIUM_FIXTURES = frozenset({"renderer", "scorer", "bare_renderer", "recorded"})
SHARED_SCOPES = frozenset({"module", "class", "package"})


def _uses_shared_fixture(item: pytest.Item) -> bool:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(defs and defs[-1].scope in SHARED_SCOPES for defs in info.name2fixturedefs.values())


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the xdist_group marks added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the Chromium tests, keep the tests of one module that share a module-scoped fixture (a Ray,
    a recorded browser session, the official evaluator's verdicts, replays) on one worker, so it is
    built once, not once per chunk of tests each worker receives; then order the work (work_order).

    First of the hook's implementations: a worker's xdist plugin sends a test to its group's worker by a
    suffix it adds to the test's id from the xdist_group marks it sees; run after it, the marks added here
    were never seen, and a Ray or the official evaluator's verdicts were built on both workers."""
    for item in items:
        if CHROMIUM_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.chromium)
        if item.get_closest_marker("xdist_group") is None and _uses_shared_fixture(item):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items[:] = work_order(items)


# What usually takes longest, by marker: xdist hands out work in collection order (`--no-loadscope-reorder`
# in pyproject.toml), so a 40 s test collected last no longer keeps one worker busy while the other idles.
WEIGHTS = (("slow", 0), ("parity", 1), ("chromium", 1))
PLAIN = 2
# Rough seconds per test, to spread the Pilot tests over the heavy work (see work_order).
HEAVY_COST, PILOT_COST = 4, 2


def _weight(item: pytest.Item) -> int:
    return min((weight for name, weight in WEIGHTS if item.get_closest_marker(name)), default=PLAIN)


def _unit(item: pytest.Item) -> str:
    """The unit xdist's loadgroup scheduler sends to one worker: the item's xdist_group, else the item."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "@" + "_".join(sorted(names)) if names else item.nodeid


def unit_weight(unit: list[pytest.Item]) -> int:
    """A unit weighs what its heaviest test does."""
    return min(map(_weight, unit))


def unit_kind(unit: list[pytest.Item]) -> str:
    """``heavy`` (a marked unit), ``pilot`` (a plain unit of tests/tui: an app driven by Pilot or a real
    terminal, which sleeps in 20 ms windows after every key until the app looks idle, so it leaves about
    40 % of its core idle), else ``plain``."""
    if unit_weight(unit) < PLAIN:
        return "heavy"
    return "pilot" if all(item.nodeid.startswith("tests/tui/") for item in unit) else "plain"


def work_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """Units (groups whole, in their own order): the heavy ones (by their heaviest marker, then by their
    number of tests, larger first, as xdist's own reordering does) with the Pilot units spread evenly
    among them, then the other plain units, so short tests end the run and no worker idles at the end.
    Spread, because two Pilot tests at once leave the cores ~40 % idle (a run with them all at the end
    idled for a third of its time), while Chromium's threads and Ray's processes fill a Pilot test's
    idle core. Deterministic, so every worker collects the same order."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(_unit(item), []).append(item)
    ranked = sorted(units.values(), key=lambda unit: (unit_weight(unit), -len(unit)))
    kinds: dict[str, list[list[pytest.Item]]] = {"heavy": [], "pilot": [], "plain": []}
    for unit in ranked:
        kinds[unit_kind(unit)].append(unit)
    heavy, pilot, rest = kinds["heavy"], kinds["pilot"], kinds["plain"]
    heavy_total = HEAVY_COST * sum(map(len, heavy)) or 1
    pilot_total = PILOT_COST * sum(map(len, pilot)) or 1
    merged: list[list[pytest.Item]] = []
    done_heavy = done_pilot = 0.0
    while heavy or pilot:  # take from the list that is behind its share of the time
        if heavy and (not pilot or done_heavy / heavy_total <= done_pilot / pilot_total):
            unit = heavy.pop(0)
            done_heavy += HEAVY_COST * len(unit)
        else:
            unit = pilot.pop(0)
            done_pilot += PILOT_COST * len(unit)
        merged.append(unit)
    return [item for unit in merged + rest for item in unit]


# -- what each test costs (opt in: REPLAY_TUI_TEST_COSTS=FILE) -----------------------------------------

# Wall time misleads on a busy 2-core machine; CPU time (the worker's own and its reaped subprocesses')
# says which tests make the suite slow. One tab-separated line per test phase, appended by every worker.
COSTS_ENV = "REPLAY_TUI_TEST_COSTS"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):  # type: ignore[no-untyped-def]
    target = os.environ.get(COSTS_ENV)
    if not target:
        yield
        return
    import resource
    import time

    def sample() -> tuple[float, float, float]:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.monotonic(), own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime

    started = time.time()
    before = sample()
    yield
    after = sample()
    wall, own, children = (b - a for a, b in zip(before, after, strict=True))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "-")
    with open(target, "a", encoding="utf-8") as out:  # start time and worker: a timeline of the run
        out.write(f"{item.nodeid}\t{wall:.3f}\t{own:.3f}\t{children:.3f}\t{started:.3f}\t{worker}\n")


@pytest.fixture(scope="session")
def renderer():  # type: ignore[no-untyped-def]
    """One headless Chromium for the worker's whole session (starting one costs about 2 s of CPU): the visual
    tests' and the local side of the Ray tests' (tests/visual/conftest.py builds its scorers on it)."""
    from replay_tui.visual.render import Renderer, RenderError, find_chromium

    try:
        find_chromium()
    except RenderError as exc:  # CI installs Debian's chromium; a bare dev machine may not have it
        pytest.skip(str(exc))
    r = Renderer(timeout_ms=15_000)
    r.start()
    yield r
    r.close()


DATA = Path(__file__).parent / "data"
SHARED_EXAMPLE = DATA / "synthetic_webshop_demonstrations_3-4.json"

SEARCH_OBS = "Current observation:\nWebShop\nInstruction: \n{instr}\n[button] Search [button_]"
RESULT_OBS = (
    "Current observation:\nInstruction:\n{instr}\n[button] Back to Search [button_]\n"
    "Page {page} (Total results: 50)\n{prev}[button] Next > [button_]\n"
    "[button] B09C337K8S [button_]\nClip in Hair Extensions, 22 Inch Long Straight\n$19.99 to $29.99\n"
    "[button] B08XYZ1234 [button_]\nWig Cap 2 Pack\n$5.99"
)
ITEM_OBS = (
    "Instruction:\n{instr}\n[button] Back to Search [button_]\n[button] < Prev [button_]\ncolor\n"
    "  [button] natural black [button_]\n  [button] dark brown | black [button_]\n"
    "Clip in Hair Extensions, 22 Inch Long Straight\nPrice: $19.99 to $29.99\nRating: N.A.\n"
    "[button] Description [button_]\n[button] Features [button_]\n[button] Reviews [button_]\n"
    "[button] Buy Now [button_]\n"
)
INSTRUCTION = "i need a long clip-in hair extension which is natural looking, and price lower than 40.00 dollars"


def search_step(number: int = 0, keywords: str = "long clip-in hair extension", **overrides: Any) -> dict:
    step = {
        "step_number": number,
        "observation_before_llm": SEARCH_OBS.format(instr=INSTRUCTION),
        "llm_prompt": repr(
            [
                {"role": "system", "content": "You shop."},
                {"role": "user", "content": SEARCH_OBS.format(instr=INSTRUCTION)},
            ]
        ),
        "llm_thinking": "Search for the product.",
        "llm_action_name": "Search",
        "llm_action_arguments": {"keywords": keywords, "max_price": "40.00"},
        "state": "Search",
        "available_actions": ["Search"],
        "action_executed_in_env": f"search[{keywords}]",
        "observation_after_action": RESULT_OBS.format(instr=INSTRUCTION, page=1, prev="").split("\n", 1)[1],
        "reward": 0.0,
        "done": False,
    }
    step.update(overrides)
    return step


def result_step(
    number: int,
    name: str = "select_item",
    arguments: dict | None = None,
    action: str | None = None,
    page: int = 1,
    **overrides: Any,
) -> dict:
    arguments = {"item_id": "B09C337K8S"} if arguments is None and name == "select_item" else (arguments or {})
    if action is None:
        action = {
            "select_item": f"click[{arguments.get('item_id')}]",
            "Next": "click[Next >]",
            "Prev": "click[< Prev]",
            "Back_to_Search": "click[Back to Search]",
        }[name]
    prev = "[button] < Prev [button_]\n" if page > 1 else ""
    observation = RESULT_OBS.format(instr=INSTRUCTION, page=page, prev=prev)
    step = {
        "step_number": number,
        "observation_before_llm": observation,
        "llm_prompt": repr([{"role": "user", "content": observation}]),
        "llm_thinking": "Pick the clip-in extension.",
        "llm_action_name": name,
        "llm_action_arguments": arguments,
        "state": "Result",
        "available_actions": ["select_item", "Next", "Back_to_Search"] + (["Prev"] if page > 1 else []),
        "action_executed_in_env": action,
        "observation_after_action": ITEM_OBS.format(instr=INSTRUCTION),
        "reward": 0.0,
        "done": False,
    }
    step.update(overrides)
    return step


def item_action(name: str, arguments: dict | None = None, *, reward: float = 0.0, done: bool = False) -> dict:
    return {
        "type": "item_page_action",
        "llm_action": {"name": name, "arguments": arguments or {}},
        "observation_before_action": ITEM_OBS.format(instr=INSTRUCTION),
        "available_options": ["Description", "Features", "Reviews", "Buy_Now", "Prev"],
        "reward": reward,
        "done": done,
        "observation_after_action": "Thank you for shopping with us!" if done else ITEM_OBS.format(instr=INSTRUCTION),
    }


def episode(session_id: Any, trajectory: list, **overrides: Any) -> dict:
    data = {
        "session_id": session_id,
        "instruction": INSTRUCTION,
        "trajectory": trajectory,
        "final_reward": 1.0,
        "success": True,
        "completed_by_backup": False,
    }
    data.update(overrides)
    return data


def good_episode(session_id: int) -> dict:
    return episode(
        session_id,
        [
            search_step(0),
            result_step(1, "Next"),
            result_step(2, page=2),
            item_action("Description"),
            {
                "type": "detail_exploration",
                "detail": "description",
                "action": "click[description]",
                "observation": "Soft hair.",
            },
            item_action("Buy_Now", reward=1.0, done=True),
            {
                "type": "agent_buy",
                "action": "click[Buy Now]",
                "observation_after_action": "Thank you",
                "reward": 1.0,
                "done": True,
            },
        ],
    )


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


@pytest.fixture
def demo_file(tmp_path: Path) -> Path:
    """Three good episodes (sessions 10, 11, 12) in one file."""
    return write_json(tmp_path / "webshop_demonstrations_10-12.json", [good_episode(i) for i in (10, 11, 12)])


@pytest.fixture(autouse=True)
def _no_user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep every test away from the user's config and data directories (and the user's runs folder)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("REPLAY_TUI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
