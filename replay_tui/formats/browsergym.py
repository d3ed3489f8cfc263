"""BrowserGym / AgentLab experiment folders as trajectories (one folder = one episode).

An experiment folder (``browsergym/experiments/loop.py``, AgentLab ``experiments/loop.py``) holds
``summary_info.json`` (``n_steps, cum_reward, cum_raw_reward, err_msg, stack_trace, terminated,
truncated, stats.*``), one ``step_<N>.pkl.gz`` per step (a pickled ``StepInfo {step, obs, reward,
raw_reward, terminated, truncated, action, agent_info, stats, profiling, task_info}``),
``exp_args.pkl``, and sometimes ``screenshot_step_<N>.png``.

**Pickles execute code when loaded.** By default (:data:`READER`) only ``summary_info.json`` is read:
the episode comes with its outcome, no steps, and a warning naming ``--allow-pickle``. With
``BrowserGymReader(allow_pickle=True)`` the step files go through :class:`SafeUnpickler`, whose
``find_class`` allows builtins containers, numpy array reconstruction,
``collections.OrderedDict``, ``datetime`` values and ``pathlib`` paths (as text), maps the
BrowserGym / AgentLab / langchain classes to a :class:`PickledObject` stand-in that only records
its state (their modules are never imported),
and refuses everything else with a problem naming the class ("refused to load pickle class
os.system: not on the allowlist"). ``exp_args.pkl`` (ExpArgs) is read the same way into
``metadata`` (agent, model, task_name, seed, max_steps, exp_id) and ``extra["exp_args"]``;
``goal_object.pkl.gz`` is never read.

Mapping of each ``StepInfo``: ``observation`` = URL + goal + last action error + an excerpt of the
accessibility tree; ``axtree`` = ``obs.axtree_txt`` (else a flattened ``obs.axtree_object``);
``screenshot`` = ``obs.screenshot`` (an ndarray, encoded as PNG) or ``screenshot_step_<N>.png``;
``messages`` = ``agent_info.chat_messages`` before the model's answer, ``content`` = that answer;
``thinking`` = ``agent_info.think``; ``action`` = the action string as a tool call (``click('20')``
→ ``click({"bid": "20"})``; BrowserGym's high-level action names its parameters, other calls keep
``{"args": [...]}`` plus keyword arguments) with ``action_text`` the raw string. A step's ``reward``
and ``done`` are those of the next StepInfo (BrowserGym stores a reward with the observation it
led to); the final StepInfo (no action) is a step without a call. Outcome: ``reward`` =
``cum_reward``, ``status`` = ``error`` / ``terminated`` / ``truncated`` / ``incomplete``,
``success`` = ``cum_reward > 0`` without an error, ``error`` = ``err_msg`` then ``stack_trace``,
``answer`` = the last ``send_msg_to_user`` text (or ``report_infeasible`` reason), ``scores`` =
summary_info verbatim.
"""

from __future__ import annotations

import ast
import gzip
import importlib
import io
import json
import pickle
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, ClassVar

from replay_tui.episodes.model import ChatMessage, Outcome, ToolCall, Trajectory, TrajectoryStep
from replay_tui.episodes.problems import LoadProblem
from replay_tui.fileio import NotARegularFile, open_regular
from replay_tui.formats.base import Detection, EpisodeSummary, ReadItem, strip_bom
from replay_tui.formats.reread import episode_at
from replay_tui.pyliteral import literal_eval, parse_expression

FORMAT = "browsergym"
SUMMARY = "summary_info.json"
ALLOW_HINT = "pass --allow-pickle (BrowserGymReader(allow_pickle=True)) to load them with a restricted unpickler"
AXTREE_EXCERPT_LINES = 40
MAX_DECOMPRESSED = 512 * 1024 * 1024
"""A step file larger than this once decompressed is refused (a gzip bomb is not a trajectory)."""
MAX_SCREENSHOT_BYTES = 64 * 1024 * 1024
"""A screenshot array larger than this (a 4K RGBA one is 33 MB) is not encoded: a 300-byte pickle can
describe a 40000x40000 array over one byte (zero strides) that would take 4.8 GB to encode."""
MAX_DEPTH = 64
"""Pickled values and summary_info.json are kept this deep; deeper levels become a marker."""
MAX_ARRAY_ITEMS = 10_000
"""An array kept as data (in ``extra``) is at most this big; a bigger one is described, not copied."""

_STEP_FILE = re.compile(r"^step_(\d+)\.pkl\.gz$")
_READ_FILE = re.compile(r"^(summary_info\.json|exp_args\.pkl|step_\d+\.pkl\.gz|screenshot_step_\d+\.(png|jpe?g))$")


def reads(name: str) -> bool:
    """Whether the reader reads a file of this name in an experiment folder (what a run's fingerprint
    hashes; companions such as a 20 GiB trace archive it does not read)."""
    return _READ_FILE.match(name) is not None


_FOLDER_NAME = re.compile(
    r"^(?P<date>\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d)_(?P<agent>.+?)_on_(?P<task>.+?)_(?P<seed>\d+)(?:_[0-9a-f]{6})?$"
)

ACTION_PARAMETERS: dict[str, tuple[str, ...]] = {
    "noop": ("wait_ms",),
    "send_msg_to_user": ("text",),
    "report_infeasible": ("reason",),
    "scroll": ("delta_x", "delta_y"),
    "fill": ("bid", "value"),
    "select_option": ("bid", "options"),
    "click": ("bid", "button", "modifiers"),
    "dblclick": ("bid", "button", "modifiers"),
    "hover": ("bid",),
    "press": ("bid", "key_comb"),
    "focus": ("bid",),
    "clear": ("bid",),
    "drag_and_drop": ("from_bid", "to_bid"),
    "upload_file": ("bid", "file"),
    "mouse_move": ("x", "y"),
    "mouse_up": ("x", "y", "button"),
    "mouse_down": ("x", "y", "button"),
    "mouse_click": ("x", "y", "button"),
    "mouse_dblclick": ("x", "y", "button"),
    "mouse_drag_and_drop": ("from_x", "from_y", "to_x", "to_y"),
    "mouse_upload_file": ("x", "y", "file"),
    "keyboard_down": ("key",),
    "keyboard_up": ("key",),
    "keyboard_press": ("key",),
    "keyboard_type": ("text",),
    "keyboard_insert_text": ("text",),
    "goto": ("url",),
    "go_back": (),
    "go_forward": (),
    "new_tab": (),
    "tab_close": (),
    "tab_focus": ("index",),
}
"""BrowserGym's high-level action set (``browsergym/core/action/functions.py``): parameter names
in order, so a recorded ``click('20')`` becomes ``click({"bid": "20"})``."""


# -- the restricted unpickler -------------------------------------------------------------------


class PickledObject:
    """A stand-in for a BrowserGym / AgentLab object: it records what the pickle gave it, nothing more.

    ``pickle_class`` names the original class (``module.name``); ``fields()`` is its state, whether
    the pickle set it as ``__dict__`` state, dict items (a dict subclass) or list items.
    """

    pickle_class: ClassVar[str] = "?"

    def __new__(cls, *args: Any, **kwargs: Any) -> PickledObject:
        self = object.__new__(cls)
        self.__dict__.update(_args=args, _kwargs=kwargs, _state=None, _items={}, _list=[])
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        self.__dict__["_state"] = state

    def __setitem__(self, key: Any, value: Any) -> None:
        self.__dict__["_items"][key] = value

    def append(self, value: Any) -> None:
        self.__dict__["_list"].append(value)

    def extend(self, values: Any) -> None:
        self.__dict__["_list"].extend(values)

    def fields(self) -> dict[str, Any]:
        state = self.__dict__["_state"]
        found: dict[str, Any] = {}
        if isinstance(state, tuple) and len(state) == 2:  # (__dict__, __slots__ state)
            for part in state:
                if isinstance(part, dict):
                    found.update(part)
        elif isinstance(state, dict):
            found.update(state)
        found.update(self.__dict__["_items"])
        found.update(self.__dict__["_kwargs"])
        return found

    @property
    def items_list(self) -> list[Any]:
        return list(self.__dict__["_list"])

    def __repr__(self) -> str:
        return f"<{self.pickle_class} (stand-in)>"


class PickleRefused(pickle.UnpicklingError):
    """A pickle asked for a class that is not on the allowlist."""

    def __init__(self, module: str, name: str):
        self.qualname = f"{module}.{name}"
        super().__init__(f"refused to load pickle class {self.qualname}: not on the allowlist")


STAND_IN_MODULES = ("browsergym.", "agentlab.", "langchain_core.messages", "langchain.schema")
"""Classes (CamelCase names) from these packages become :class:`PickledObject` stand-ins (never imported)."""

_BUILTINS = frozenset({"list", "dict", "set", "frozenset", "tuple", "bytearray", "bytes", "complex", "slice"})


_DATETIME = frozenset({"datetime", "date", "time", "timedelta", "timezone"})
_PATHS = frozenset({"Path", "PosixPath", "WindowsPath", "PurePath", "PurePosixPath", "PureWindowsPath"})


def _posix_path_text(*parts: Any) -> str:
    return str(PurePosixPath(*(str(part) for part in parts)))


def _windows_path_text(*parts: Any) -> str:
    return str(PureWindowsPath(*(str(part) for part in parts)))


def _numpy_reconstruct() -> Any:
    try:
        return importlib.import_module("numpy._core.multiarray")._reconstruct
    except ImportError:  # numpy < 2
        return importlib.import_module("numpy.core.multiarray")._reconstruct


def _numpy_scalar() -> Any:
    try:
        return importlib.import_module("numpy._core.multiarray").scalar
    except ImportError:  # numpy < 2
        return importlib.import_module("numpy.core.multiarray").scalar


class SafeUnpickler(pickle.Unpickler):
    """Unpickles BrowserGym step files without running their code: an explicit allowlist only."""

    def __init__(self, file: Any):
        super().__init__(file)
        self._stand_ins: dict[str, type[PickledObject]] = {}

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if (module, name) == ("collections", "OrderedDict"):
            return super().find_class(module, name)
        if module in ("numpy.core.multiarray", "numpy._core.multiarray"):
            if name == "_reconstruct":
                return _numpy_reconstruct()
            if name == "scalar":
                return _numpy_scalar()
        if module == "numpy" and name in ("ndarray", "dtype"):
            return getattr(importlib.import_module("numpy"), name)
        if module == "_codecs" and name == "encode":  # protocol 2's way to write bytes
            return super().find_class(module, name)
        if module == "datetime" and name in _DATETIME:
            return super().find_class(module, name)
        if module == "pathlib" and name in _PATHS:  # a path becomes its text; nothing touches the disk
            return _windows_path_text if "Windows" in name else _posix_path_text
        if module.startswith(STAND_IN_MODULES) and name.isidentifier() and name[:1].isupper():
            key = f"{module}.{name}"
            if key not in self._stand_ins:
                self._stand_ins[key] = type(name, (PickledObject,), {"pickle_class": key, "__module__": __name__})
            return self._stand_ins[key]
        raise PickleRefused(module, name)


def load_pickle(data: bytes) -> Any:
    """``data`` unpickled by :class:`SafeUnpickler` (raises :class:`PickleRefused` on a foreign class)."""
    return SafeUnpickler(io.BytesIO(data)).load()


# -- the reader ---------------------------------------------------------------------------------


class BrowserGymReader:
    name = FORMAT
    label = "BrowserGym / AgentLab experiment folders"
    description = (
        "observation = url + goal + axtree excerpt, axtree = obs.axtree_txt, screenshot = obs.screenshot "
        "(PNG), prompt = agent_info.chat_messages, thinking = agent_info.think, action = the action string "
        "as a tool call (click('20') -> click(bid)); outcome = summary_info.json; step pickles only with "
        "--allow-pickle (restricted unpickler)"
    )

    def __init__(self, allow_pickle: bool = False):
        self.allow_pickle = allow_pickle

    def allowing_pickles(self) -> BrowserGymReader:
        """This reader with the step pickles read (restricted unpickler): what ``--allow-pickle`` asks for."""
        return BrowserGymReader(allow_pickle=True)

    def sniff(self, path: Path, head: bytes) -> Detection:
        if path.is_dir():
            has_summary = (path / SUMMARY).is_file()
            has_steps = any(_STEP_FILE.match(p.name) for p in path.iterdir())
            if has_summary and has_steps:
                return Detection.yes("experiment folder (summary_info.json and step_*.pkl.gz)")
            if has_steps:
                return Detection.yes("experiment folder with step_*.pkl.gz (no summary_info.json)", 0.9)
            if has_summary and _looks_like_summary((path / SUMMARY).read_bytes()[:65536]):
                return Detection.yes("experiment folder with summary_info.json (no step files)", 0.9)
            if _experiment_folders(path):
                return Detection.yes("a study folder of experiment folders", 0.8)
            return Detection.no("a folder without summary_info.json or step_*.pkl.gz")
        if path.name == SUMMARY and _looks_like_summary(head):
            return Detection.yes("summary_info.json of an experiment folder", 0.9)
        return Detection.no("neither an experiment folder nor its summary_info.json")

    def read(self, path: Path) -> Iterator[ReadItem]:
        for folder, index in _experiments(path):
            yield from _Experiment(folder, index, self.allow_pickle).read()

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every experiment's summary, in :meth:`read`'s order, one experiment (its step pickles'
        screenshots) held at a time; ``locator`` = (its folder, its index in the study)."""
        for folder, index in _experiments(path):
            for item in _Experiment(folder, index, self.allow_pickle).read():
                yield item if isinstance(item, LoadProblem) else EpisodeSummary.of(item, index, (folder, index))

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The experiment ``summary`` points at, its folder read again."""
        folder, index = summary.locator
        return episode_at(_Experiment(folder, index, self.allow_pickle).read(), 0, summary, folder.name)


READER = BrowserGymReader()
"""The safe default: summary_info.json only, step pickles named but not loaded."""


def _experiments(path: Path) -> list[tuple[Path, int]]:
    """The experiment folders ``path`` holds (a study's, in order), or itself (or the folder of the
    summary_info.json given)."""
    folder = path.parent if path.is_file() else path
    if path.is_dir() and not (folder / SUMMARY).is_file() and not _step_files(folder):
        children = _experiment_folders(folder)
        if children:
            return [(child, index) for index, child in enumerate(children)]
    return [(folder, 0)]


def _looks_like_summary(head: bytes) -> bool:
    return head.lstrip()[:1] == b"{" and b'"cum_reward"' in head and b'"n_steps"' in head


def _step_files(folder: Path) -> list[tuple[int, Path]]:
    found = []
    for child in folder.iterdir():
        match = _STEP_FILE.match(child.name)
        if match:
            found.append((int(match.group(1)), child))
    return sorted(found)


def _experiment_folders(folder: Path) -> list[Path]:
    return sorted(
        child
        for child in folder.iterdir()
        if child.is_dir() and ((child / SUMMARY).is_file() or any(_STEP_FILE.match(p.name) for p in child.iterdir()))
    )


def _fields(value: Any) -> dict[str, Any]:
    if isinstance(value, PickledObject):
        return value.fields()
    return value if isinstance(value, dict) else {}


class _Experiment:
    """One experiment folder; collects its problems."""

    def __init__(self, folder: Path, index: int, allow_pickle: bool):
        self.folder = folder
        self.index = index
        self.allow_pickle = allow_pickle
        self.problems: list[LoadProblem] = []
        self.exp_args_plain: dict[str, Any] | None = None

    def problem(self, message: str, file: str | None = None, field: str | None = None, warning: bool = False) -> None:
        self.problems.append(
            LoadProblem(
                file=f"{self.folder.name}/{file}" if file else self.folder.name,
                message=message,
                index=self.index,
                field=field,
                severity="warning" if warning else "error",
            )
        )

    def read(self) -> Iterator[ReadItem]:
        try:
            trajectory = self.build()
        except OSError as exc:
            self.problem(f"cannot read: {exc.strerror or exc}")
            trajectory = None
        if trajectory is not None:
            yield trajectory
        yield from self.problems

    def summary(self) -> dict[str, Any] | None:
        path = self.folder / SUMMARY
        if not path.is_file():
            self.problem("no summary_info.json: the experiment did not finish", warning=True)
            return None
        try:
            data = json.loads(strip_bom(path.read_bytes()))
        except (ValueError, UnicodeDecodeError) as exc:
            self.problem(f"not JSON: {exc}", file=SUMMARY)
            return None
        except RecursionError:  # the json module nests a Python call per level
            self.problem("nested too deeply to read (past the interpreter's recursion limit)", file=SUMMARY)
            return None
        if not isinstance(data, dict):
            self.problem("not a JSON object", file=SUMMARY)
            return None
        plain = _plain(data)
        return plain if isinstance(plain, dict) else None

    def build(self) -> Trajectory | None:
        summary = self.summary()
        metadata: dict[str, Any] = {}
        match = _FOLDER_NAME.match(self.folder.name)
        if match:
            metadata.update(
                agent=match.group("agent"),
                task_name=match.group("task"),
                seed=int(match.group("seed")),
                started=match.group("date"),
            )
        files = _step_files(self.folder)
        steps: list[TrajectoryStep] = []
        task = ""
        if files and not self.allow_pickle:
            self.problem(
                f"{len(files)} step files (step_*.pkl.gz) are Python pickles and were not read: {ALLOW_HINT}",
                warning=True,
            )
        if self.allow_pickle:
            self.exp_args(metadata)
        if files and self.allow_pickle:
            infos = [(number, self.load_step(number, path)) for number, path in files]
            loaded = [(number, info) for number, info in infos if info is not None]
            for position, (number, info) in enumerate(loaded):
                following = loaded[position + 1][1] if position + 1 < len(loaded) else None
                try:
                    steps.append(self.step(len(steps), number, info, following))
                except RecursionError:  # a walker missed a depth cap: the step is named, the rest stays
                    self.problem("nested too deeply to map (RecursionError)", file=f"step_{number}.pkl.gz")
                    continue
                obs = _fields(info.get("obs"))
                if not task and isinstance(obs.get("goal"), str):
                    task = obs["goal"]
                model = _fields(_fields(_fields(info.get("agent_info")).get("extra_info")).get("chat_model_args"))
                if "model" not in metadata and isinstance(model.get("model_name"), str):
                    metadata["model"] = model["model_name"]
        if summary is None and not steps and not files:
            return None
        return Trajectory(
            id=self.folder.name,
            format=FORMAT,
            task=task or str(metadata.get("task_name", "")),
            metadata=metadata,
            steps=steps,
            outcome=_outcome(summary, steps),
            extra={
                key: value
                for key, value in (("summary_info", summary), ("exp_args", self.exp_args_plain))
                if value is not None
            },
        )

    def exp_args(self, metadata: dict[str, Any]) -> None:
        """``exp_args.pkl`` (ExpArgs: agent_args, env_args...) into ``metadata``; a refusal is a warning."""
        path = self.folder / "exp_args.pkl"
        if not path.is_file():
            return
        try:
            value = load_pickle(path.read_bytes()[: MAX_DECOMPRESSED + 1])
        except PickleRefused as exc:
            self.problem(f"{exc} (experiment settings not shown)", file=path.name, warning=True)
            return
        except Exception as exc:
            self.problem(f"cannot unpickle: {type(exc).__name__}: {exc}", file=path.name, warning=True)
            return
        plain = _plain(value)
        if not isinstance(plain, dict):
            return
        self.exp_args_plain = plain
        agent, env = _fields(plain.get("agent_args")), _fields(plain.get("env_args"))
        model = _fields(agent.get("chat_model_args"))
        found = {
            "agent": agent.get("agent_name"),
            "model": model.get("model_name"),
            "task_name": env.get("task_name"),
            "seed": env.get("task_seed"),
            "max_steps": env.get("max_steps"),
            "exp_id": plain.get("exp_id"),
        }
        metadata.update({key: value for key, value in found.items() if value is not None})

    def load_step(self, number: int, path: Path) -> dict[str, Any] | None:
        try:
            with open_regular(path) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as handle:
                data = handle.read(MAX_DECOMPRESSED + 1)
        except NotARegularFile as exc:
            self.problem(f"{exc.strerror}; not read", file=path.name)
            return None
        except (OSError, EOFError) as exc:
            self.problem(f"not a readable gzip file: {exc}", file=path.name)
            return None
        if len(data) > MAX_DECOMPRESSED:
            self.problem(f"larger than {MAX_DECOMPRESSED:,} bytes once decompressed; not read", file=path.name)
            return None
        try:
            value = load_pickle(data)
        except PickleRefused as exc:
            self.problem(str(exc), file=path.name)
            return None
        except Exception as exc:  # a broken pickle is a problem, never a traceback
            self.problem(f"cannot unpickle: {type(exc).__name__}: {exc}", file=path.name)
            return None
        info = _fields(value)
        if not info:
            self.problem(f"not a StepInfo (a {type(value).__name__})", file=path.name)
            return None
        info.setdefault("step", number)
        return info

    def step(self, index: int, number: int, info: dict[str, Any], following: dict[str, Any] | None) -> TrajectoryStep:
        name = f"step_{number}.pkl.gz"
        obs = _fields(info.get("obs"))
        agent_info = _fields(info.get("agent_info"))
        axtree = obs.get("axtree_txt") if isinstance(obs.get("axtree_txt"), str) else None
        if axtree is None and isinstance(obs.get("axtree_object"), dict):
            axtree = flatten_axtree(obs["axtree_object"]) or None
        messages, content = _discussion(agent_info.get("chat_messages"))
        raw_action = info.get("action")
        action_text = raw_action if isinstance(raw_action, str) else ""
        action = parse_action(action_text) if action_text.strip() else None
        if following is not None:
            reward = _number(following.get("reward"))
            done = bool(following.get("terminated")) or bool(following.get("truncated"))
        else:
            reward = None
            done = bool(info.get("terminated")) or bool(info.get("truncated")) or action is None
        think = agent_info.get("think")
        extra: dict[str, Any] = {
            "step": info.get("step"),
            "reward_on_arrival": _number(info.get("reward")),
            "raw_reward_on_arrival": _number(info.get("raw_reward")),
            "terminated": info.get("terminated"),
            "truncated": info.get("truncated"),
        }
        for key in ("last_action", "last_action_error", "focused_element_bid", "open_pages_urls"):
            if obs.get(key):
                extra[key] = _plain(obs[key])
        for key in ("stats", "task_info"):
            if info.get(key):
                extra[key] = _plain(info[key])
        if agent_info.get("stats"):
            extra["agent_stats"] = _plain(agent_info["stats"])
        return TrajectoryStep(
            index=index,
            label=str(number),
            observation=_observation(obs, axtree),
            screenshot=self.screenshot(number, obs.get("screenshot"), name),
            axtree=axtree,
            messages=messages,
            thinking=think if isinstance(think, str) else "",
            content=content,
            action=action,
            action_text=action_text,
            reward=reward,
            done=done,
            extra=extra,
            kind="decision",
        )

    def screenshot(self, number: int, array: Any, name: str) -> bytes | None:
        if array is not None and hasattr(array, "shape"):
            try:
                return png_bytes(array)
            except ScreenshotTooLarge as exc:
                self.problem(f"screenshot not encoded: {exc}", file=name, field="obs.screenshot", warning=True)
            except Exception as exc:
                self.problem(f"screenshot not an image: {type(exc).__name__}: {exc}", file=name, field="obs.screenshot")
        for suffix in ("png", "jpg", "jpeg"):
            path = self.folder / f"screenshot_step_{number}.{suffix}"
            if path.is_file():
                return path.read_bytes()
        return None


class ScreenshotTooLarge(ValueError):
    """A screenshot array whose pixels would take more than :data:`MAX_SCREENSHOT_BYTES` to encode."""


def png_bytes(array: Any) -> bytes:
    """An RGB(A)/grey ndarray as PNG bytes (Pillow); its size is checked from its shape first, before
    anything is copied (strides can make a huge array out of one byte)."""
    import numpy as np
    from PIL import Image

    data = np.asarray(array)
    if data.size > MAX_SCREENSHOT_BYTES:  # uint8 once converted: one byte per element
        shape = "x".join(str(n) for n in data.shape)
        raise ScreenshotTooLarge(f"a {shape} array is over {MAX_SCREENSHOT_BYTES:,} bytes")
    if data.dtype != np.uint8:
        data = np.clip(data, 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(data).save(buffer, format="PNG")
    return buffer.getvalue()


def flatten_axtree(tree: dict[str, Any]) -> str:
    """``obs.axtree_object`` (CDP ``Accessibility.getFullAXTree`` nodes) as indented ``[bid] role 'name'`` lines."""
    nodes = tree.get("nodes")
    if not isinstance(nodes, list):
        return ""
    by_id = {str(node.get("nodeId")): node for node in nodes if isinstance(node, dict)}
    roots = [node for node in by_id.values() if str(node.get("parentId")) not in by_id]
    lines: list[str] = []
    seen: set[int] = set()  # each node once: a tree that refers back to an ancestor ends there
    stack: list[tuple[dict[str, Any], int]] = [(root, 0) for root in reversed(roots)]
    while stack and len(lines) < 5000:
        node, depth = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        role = _fields(node.get("role")).get("value", "")
        name = _fields(node.get("name")).get("value", "")
        shown = depth
        if (not node.get("ignored") and role not in ("none", "generic", "")) or name:
            bid = node.get("browsergym_id")
            lines.append("\t" * min(depth, MAX_DEPTH) + (f"[{bid}] " if bid else "") + f"{role} {name!r}")
        else:
            shown = depth - 1
        children = node.get("childIds")
        if isinstance(children, list):
            stack.extend((by_id[str(child)], shown + 1) for child in reversed(children) if str(child) in by_id)
    return "\n".join(lines)


def _observation(obs: dict[str, Any], axtree: str | None) -> str:
    parts = []
    if obs.get("url"):
        parts.append(f"URL: {obs['url']}")
    if obs.get("goal"):
        parts.append(f"Goal: {obs['goal']}")
    if obs.get("last_action_error"):
        parts.append(f"Last action error: {obs['last_action_error']}")
    if axtree:
        lines = axtree.splitlines()
        excerpt = "\n".join(lines[:AXTREE_EXCERPT_LINES])
        if len(lines) > AXTREE_EXCERPT_LINES:
            excerpt += f"\n… ({len(lines) - AXTREE_EXCERPT_LINES} more lines)"
        parts.append(excerpt)
    return "\n\n".join(parts)


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            fields = _fields(part)
            if isinstance(fields.get("text"), str):
                texts.append(fields["text"])
            elif fields.get("type") in ("image_url", "image"):
                texts.append("[image]")
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts)
    return "" if content is None else str(_plain(content))


def _discussion(value: Any) -> tuple[list[ChatMessage], str]:
    """AgentLab's Discussion (or a plain list of messages) as the prompt, and the model's answer."""
    if isinstance(value, PickledObject):
        raw = value.fields().get("messages")
        entries = raw if isinstance(raw, list) else value.items_list
    elif isinstance(value, list):
        entries = value
    else:
        return [], ""
    messages = []
    for entry in entries:
        fields = _fields(entry)
        role = fields.get("role")
        if not isinstance(role, str):
            kind = getattr(entry, "pickle_class", "")
            role = "system" if "System" in kind else "assistant" if "AI" in kind else "user"
        messages.append(ChatMessage(role=role, content=_message_text(fields.get("content"))))
    content = ""
    if messages and messages[-1].role == "assistant":
        content = messages.pop().content
    return messages, content


def _literal(node: ast.expr) -> Any:
    value = literal_eval(node)
    if isinstance(value, tuple):
        return list(value)
    return value


def parse_action(text: str) -> ToolCall:
    """A BrowserGym action string as a tool call; what does not parse keeps its text under ``code``."""
    try:
        tree = parse_expression(text.strip())
    except SyntaxError:
        tree = None
    if tree is not None and isinstance(tree.body, ast.Call) and isinstance(tree.body.func, ast.Name):
        call = tree.body
        name = call.func.id if isinstance(call.func, ast.Name) else ""
        try:
            args = [_literal(arg) for arg in call.args]
            kwargs = {kw.arg: _literal(kw.value) for kw in call.keywords if kw.arg is not None}
        except (ValueError, TypeError, SyntaxError, RecursionError):
            return ToolCall(name=name, raw_arguments=text.strip()[len(name) + 1 : -1])
        if len(call.keywords) != len(kwargs):  # **spread
            return ToolCall(name=name, raw_arguments=text.strip()[len(name) + 1 : -1])
        params = ACTION_PARAMETERS.get(name)
        arguments: dict[str, Any] = {}
        if params is not None and len(args) <= len(params):
            arguments.update(zip(params, args, strict=False))
        elif args:
            arguments["args"] = args
        arguments.update(kwargs)
        return ToolCall(name=name, arguments=arguments)
    first = re.search(r"([A-Za-z_]\w*)\s*\(", text)
    return ToolCall(name=first.group(1) if first else "python", arguments={"code": text})


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _plain(value: Any, depth: int = 0, path: frozenset[int] = frozenset()) -> Any:
    """JSON-friendly copy: stand-ins as their fields, arrays as lists, the rest as text. At most
    :data:`MAX_DEPTH` levels (a pickle can nest thousands), a value inside itself as a marker (a
    pickle can hold cycles), a big array described rather than copied."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if depth >= MAX_DEPTH:
        return f"<nested deeper than {MAX_DEPTH} levels>"
    if id(value) in path:
        return "<cycle>"
    inner = path | {id(value)}
    if isinstance(value, PickledObject):
        fields = value.fields()
        return {"__class__": value.pickle_class, **{str(k): _plain(v, depth + 1, inner) for k, v in fields.items()}}
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1, inner) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1, inner) for v in value]
    if hasattr(value, "tolist"):
        size = getattr(value, "size", 0)
        if isinstance(size, int) and size > MAX_ARRAY_ITEMS:
            return f"<array of shape {getattr(value, 'shape', '?')}>"
        return _plain(value.tolist(), depth, path)
    return str(value)


def _outcome(summary: dict[str, Any] | None, steps: list[TrajectoryStep]) -> Outcome:
    """``summary_info.json`` (``loop.py: save_summary_info``) as the outcome: ``cum_reward``, the
    run's ``err_msg`` then ``stack_trace`` as the error, ``terminated``/``truncated`` as the status,
    and the agent's last ``send_msg_to_user`` text (or ``report_infeasible`` reason) as its answer."""
    answer = _final_message(steps)
    if summary is None:
        return Outcome(status="incomplete", answer=answer)
    reward = _number(summary.get("cum_reward"))
    message = summary.get("err_msg")
    trace = summary.get("stack_trace")
    error = None
    if message:
        error = _error_head(str(message).strip())
        if isinstance(trace, str) and trace.strip():
            error = f"{error}\n\n{trace.strip()}"
    if error:
        status = "error"
    elif summary.get("terminated"):
        status = "terminated"
    elif summary.get("truncated"):
        status = "truncated"
    else:
        status = "incomplete"
    success = None if reward is None else (reward > 0 and not error)
    return Outcome(reward=reward, success=success, status=status, error=error, answer=answer, scores=dict(summary))


_UNCAUGHT = re.compile(
    r"\AException uncaught by agent or environment in task (?P<task>.*?)\.\n(?P<type>\w+):\n(?P<message>.*)\Z", re.S
)
"""``loop.py``'s message for an exception that ended the run (task, exception type, message)."""


def _error_head(message: str) -> str:
    """``err_msg`` with ``Type: message`` first when it is ``loop.py``'s uncaught-exception text
    (whose first line only says that something broke), then the text as logged."""
    found = _UNCAUGHT.match(message)
    if found is None:
        return message
    first = found["message"].strip().splitlines()[0] if found["message"].strip() else ""
    return f"{found['type']}: {first}\n{message}" if first else f"{found['type']}\n{message}"


def _final_message(steps: list[TrajectoryStep]) -> str | None:
    """What the agent last told the user (``send_msg_to_user``) or why it gave up
    (``report_infeasible``): a web task's final answer."""
    for step in reversed(steps):
        call = step.action
        if call is None or call.name not in ("send_msg_to_user", "report_infeasible"):
            continue
        value = call.arguments.get("text", call.arguments.get("reason"))
        if isinstance(value, str):
            return value
        return call.raw_arguments
    return None
