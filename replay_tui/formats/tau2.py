"""tau2-bench simulation results (``tau2 run`` output) as trajectories: one per simulation run.

Layouts read:

- the monolithic results file ``Results {timestamp, info, tasks[], simulations[]}`` (text runs);
- the "dir" layout (voice runs, newer tau2): ``results.json`` holding ``info`` and ``tasks`` with
  one ``simulations/<id>.json`` file per run, given as the folder or as its ``results.json``;
- a single ``SimulationRun`` file (``simulations/<id>.json``); its ``results.json`` is used for the
  task and the run's ``info`` when it sits in the parent folder.

Mapping (schema: ``src/tau2/data_model/{simulation,message}.py`` upstream):

- each simulation run → a Trajectory: id ``<task_id>#<trial>`` (the run id when the trial is
  missing or repeats), task = the matched task's ``user_scenario.instructions.reason_for_call``
  (else the instructions text, the description's purpose, the ticket), metadata = domain,
  agent/user implementation and model, task id, trial, run id, seed, costs, duration;
- each assistant message the agent **model** wrote → a step. Its prompt is what tau2's ``LLMAgent``
  sent: the system prompt (rebuilt from the ``LLMAgent`` template and ``info.environment_info.policy``)
  and the messages the agent saw before it — assistant messages, the user simulator's text messages,
  the tool results of the agent's own calls. The user simulator's tool calls and their results
  (dual-control domains such as telecom) never reach the agent: they stay out of the prompt and
  are kept in the next step's ``extra["user_side"]``;
- action = the message's first tool call (the others, and their results, in ``extra``), content =
  its text, tool_result = the tool message answering that call, observation = the last user or
  tool message the agent saw, thinking = a provider's ``reasoning_content`` in ``raw_data`` if any;
- assistant text to the user (no tool call) is a step with ``action = None``: tau2 does not judge
  it as an action (its ``ACTION`` checks compare tool calls only; what the agent says is judged by
  ``COMMUNICATE``/``NL_ASSERTION`` checks over the whole conversation), so no synthetic
  ``respond`` call is invented. The orchestrator's scripted greeting (the first assistant message,
  no ``raw_data``/``usage``) is no model decision: it is in every prompt but is not a step;
- an agent message's ``timestamp``, ``usage`` (prompt/completion tokens) and ``cost`` → the step's
  ``timestamp`` and ``usage``; ``info.agent_info.llm`` → every step's and the episode's ``model``;
  the run's ``agent_cost`` → the episode's ``usage.cost`` (the user simulator's cost is not the agent's);
- outcome (:mod:`replay_tui.formats.tau2_outcome`): reward, success as tau2 counts it, status =
  ``termination_reason``, one check per DB check, env assertion, action check, NL assertion and
  communicate check, the task's reference actions (with ``compare_args`` and requestor), the
  agent's last reply as the answer, ``reward_info`` verbatim in ``scores``; the user simulator's
  own tool calls are the trajectory's ``side_calls``, a message's further calls each step's
  ``other_actions``.

Full-duplex (voice) runs store ``ticks`` instead of ``messages``: they are flattened the way
tau2's ``SimulationRun.get_messages`` does (consecutive text chunks of one speaker merged), and a
run whose ticks carry no text and no tool call (audio only) loads with 0 steps and a warning.

Parsing: orjson on the whole file up to :data:`WHOLE_FILE_LIMIT` (results files are MBs; ``tau2``
itself loads them whole with pydantic); a bigger file is memory-mapped and split into runs by one
scan over its strings and brackets, each run parsed alone by orjson, so memory holds one run. A
truncated file (JSON error) goes the split way too: its complete runs load, the cut one is a
problem. Trajectories are built one run at a time; a malformed run is a LoadProblem (file, index,
run id, field) while the others load.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from replay_tui.episodes.model import (
    ChatMessage,
    MessageView,
    SideCall,
    TokenUsage,
    ToolCall,
    Trajectory,
    TrajectoryStep,
)
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats.base import HEAD_BYTES, Detection, EpisodeSummary, ReadItem, strip_bom
from replay_tui.formats.reread import CHANGED, changed, deferred, episode_at, indexed
from replay_tui.formats.tau2_outcome import BadField as _Bad
from replay_tui.formats.tau2_outcome import kind_of as _kind
from replay_tui.formats.tau2_outcome import run_outcome

AGENT_INSTRUCTION = """
You are a customer service agent that helps the user according to the <policy> provided below.
In each turn you can either:
- Send a message to the user.
- Make a tool call.
You cannot do both at the same time.

Try to be helpful and always follow the policy. Always make sure you generate valid JSON only.
""".strip()
"""tau2's ``tau2.agent.llm_agent.AGENT_INSTRUCTION`` (unchanged since its first release, 2025-06)."""

SYSTEM_PROMPT = """
<instructions>
{agent_instruction}
</instructions>
<policy>
{domain_policy}
</policy>
""".strip()
"""tau2's ``LLMAgent`` system prompt template."""

WHOLE_FILE_LIMIT = 64 * 1024 * 1024
"""Results files up to this size are parsed whole by orjson (fastest); bigger ones are mapped and
split into runs, each parsed alone (memory: one run, not the file), about 3x slower."""

_TEMPLATE_AGENTS = frozenset({"llm_agent"})
"""Agent implementations whose system prompt is :data:`SYSTEM_PROMPT` (others: the policy alone)."""

_RESULTS_KEYS = re.compile(rb'"(agent_info|user_info|environment_info)"\s*:')
_SIMULATIONS = re.compile(rb'"simulations"\s*:')
_TASKS = re.compile(rb'"(user_scenario|evaluation_criteria)"\s*:')
_RUN_KEYS = re.compile(rb'"(task_id|termination_reason|reward_info|ticks|trial)"\s*:')
_MESSAGES = re.compile(rb'"(messages|ticks)"\s*:')

_FIELDS_SKIPPED = ("messages", "ticks", "reward_info")


class Tau2Reader:
    name = "tau2"
    label = "tau2-bench simulation results"
    description = (
        "episode = simulation run (task from tasks[], outcome = reward_info + termination_reason); "
        "step = assistant message; prompt = LLMAgent system prompt + the messages the agent saw; "
        "action = first tool call, tool_result = its tool message; text replies are steps without action"
    )

    # -- detection -------------------------------------------------------------------------

    def sniff(self, path: Path, head: bytes) -> Detection:
        if path.is_dir():
            results = path / "results.json"
            if not results.is_file():
                return Detection.no("a folder without results.json")
            try:
                with results.open("rb") as handle:
                    head = handle.read(HEAD_BYTES)
            except OSError as exc:
                return Detection.no(f"results.json unreadable: {exc.strerror or exc}")
            found = self._sniff_head(head)
            if found.score > 0:
                return Detection.yes(f"tau2 experiment folder: {found.reason}")
            return found
        return self._sniff_head(head)

    def _sniff_head(self, head: bytes) -> Detection:
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text[:1] != b"{":
            return Detection.no("not a JSON object")
        header = {m.group(1) for m in _RESULTS_KEYS.finditer(head)}
        if len(header) >= 2 and b'"info"' in head:
            if _SIMULATIONS.search(head) or _TASKS.search(head):
                return Detection.yes("tau2 Results: info{agent_info, user_info, environment_info}, tasks, simulations")
            return Detection(0.8, "tau2-like info{agent_info, user_info, environment_info}")
        run = {m.group(1) for m in _RUN_KEYS.finditer(head)}
        if {b"task_id", b"termination_reason"} <= run and _MESSAGES.search(head):
            return Detection(0.9, "a tau2 SimulationRun (task_id, termination_reason, messages/ticks)")
        if _SIMULATIONS.search(head):
            return Detection(0.2, "a simulations field but no tau2 info header (agent_info/user_info)")
        return Detection.no("no tau2 fields (info.agent_info/user_info, simulations, termination_reason)")

    # -- reading ---------------------------------------------------------------------------

    def read(self, path: Path) -> Iterator[ReadItem]:
        if path.is_dir():
            yield from self._read_dir(path, path / "results.json")
            return
        try:
            big = path.stat().st_size > WHOLE_FILE_LIMIT
        except OSError:
            big = False
        split = _split_results(path) if big else None
        if split is not None:
            yield from split
            return
        data, problem = _load(path)
        if problem is not None:
            # a truncated results file still holds complete runs: the splitter finds them
            split = _split_results(path) if not big and problem.message.startswith("not valid JSON") else None
            yield from split if split is not None else [problem]
            return
        if not isinstance(data, dict):
            yield LoadProblem(file=path.name, message=f"not a tau2 results file: the top level is {_kind(data)}")
            return
        if "simulations" not in data and ("task_id" in data or "ticks" in data):
            yield from self._read_single_run(path, data)
            return
        if "simulations" not in data:
            if (path.parent / "simulations").is_dir():
                yield from self._read_dir(path.parent, path, data)
                return
            index = data.get("simulation_index")
            count = f" ({len(index)} runs in its simulation_index)" if isinstance(index, list) else ""
            yield LoadProblem(
                file=path.name,
                field="simulations",
                message=(
                    "a tau2 'dir'-layout results.json (voice/experiment runs): its simulations are stored "
                    f"as separate files in a simulations/ folder beside it, which is absent{count}; "
                    "open the experiment folder or a simulations/<id>.json file"
                ),
            )
            return
        context = _Context.from_results(data)
        simulations = data.get("simulations")
        if not isinstance(simulations, list):
            yield LoadProblem(
                file=path.name, field="simulations", message=f"expected a list of runs, got {_kind(simulations)}"
            )
            return
        if not simulations:
            yield LoadProblem(
                file=path.name,
                field="simulations",
                severity="warning",
                message=f"0 simulation runs (the file holds {len(context.tasks)} tasks: an aborted or unstarted run)",
            )
            return
        for index, run in enumerate(simulations):
            yield _convert(path.name, index, run, context)

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every run's summary, in :meth:`read`'s order, one run held at a time: a results file is
        mapped and split (whatever its size), ``locator`` = the run's bytes (its outcome, the
        reference's checks, built again from them when asked); a ``dir`` layout's
        locator is the run's file; anything else is read whole again by :meth:`load`."""
        nth = 0
        for item, where in self._located(path):
            if isinstance(item, LoadProblem):
                yield item
                continue
            if isinstance(where, _RunAt):
                yield deferred(item, nth, where, partial(_load_span, path, where, nth))
            else:
                yield EpisodeSummary.of(item, nth, where if where is not None else nth)
            nth += 1

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The run ``summary`` points at, converted with its file's context again."""
        where = summary.locator
        found: ReadItem
        if isinstance(where, _RunAt):
            found = _load_span(path, where, summary.record)
        elif isinstance(where, _RunFile):
            data, problem = _load(where.results)
            run, problem = (None, problem) if problem is not None else _load(where.run)
            if problem is not None:
                return problem
            context = _Context.from_results(data if isinstance(data, dict) else {})
            name = f"{where.run.parent.parent.name}/simulations/{where.run.name}"
            found = _convert(name, summary.record, run, context)
        else:
            return episode_at(self.read(path), where, summary, path.name)
        if isinstance(found, Trajectory) and not indexed(found, summary):
            return changed(path.name, summary)
        return found

    def _located(self, path: Path) -> Iterator[tuple[ReadItem, _RunAt | _RunFile | None]]:
        """What :meth:`read` yields, each episode with where it lives (None: in a file read whole)."""
        if path.is_dir():
            yield from self._located_dir(path, path / "results.json")
            return
        mapped = _mapped(path)
        if mapped is not None and mapped[1].complete:
            yield from _located_runs(path, *mapped)
            return
        if mapped is not None:
            mapped[0].close()
        for item in self.read(path):
            yield item, None

    def _read_dir(self, folder: Path, results: Path, data: Any = None) -> Iterator[ReadItem]:
        for item, _ in self._located_dir(folder, results, data):
            yield item

    def _located_dir(self, folder: Path, results: Path, data: Any = None) -> Iterator[tuple[ReadItem, _RunFile | None]]:
        if data is None:
            data, problem = _load(results)
            if problem is not None:
                yield problem, None
                return
        context = _Context.from_results(data if isinstance(data, dict) else {})
        files = sorted((folder / "simulations").glob("*.json"))
        if not files:
            yield LoadProblem(file=folder.name, field="simulations", message="no simulations/*.json files"), None
            return
        for index, file in enumerate(files):
            run, problem = _load(file)
            if problem is not None:
                yield problem.model_copy(update={"index": index}), None
                continue
            for item in _convert_with_warnings(f"{folder.name}/simulations/{file.name}", index, run, context):
                yield item, _RunFile(results, file)

    def _read_single_run(self, path: Path, run: dict[str, Any]) -> Iterator[ReadItem]:
        context = _Context.from_results({})
        sibling = path.parent.parent / "results.json"
        if path.parent.name == "simulations" and sibling.is_file():
            data, _ = _load(sibling)
            if isinstance(data, dict):
                context = _Context.from_results(data)
        yield from _convert_with_warnings(path.name, 0, run, context)


READER = Tau2Reader()


# -- the results file, one run at a time ---------------------------------------------------

_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
"""A JSON string (escapes skipped) or a bracket: all a splitter needs to track nesting."""
_BRACKET = re.compile(rb'(?:[^"\[\]{}]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+([\[\]{}])', re.S)
"""Everything up to the next bracket outside a string, and that bracket: inside a run only the
brackets are counted (one match a bracket, not a token a string: 3x faster on a results file)."""
_COLON = re.compile(rb"\s*:")
_WANTED = (b'"info"', b'"tasks"', b'"simulations"')
_OPEN = re.compile(rb"(?:\xef\xbb\xbf)?\s*\{")


@dataclass
class _Layout:
    """Where a results file's top-level values are, and each run's bytes inside ``simulations``."""

    values: dict[bytes, tuple[int, int]] = field(default_factory=dict)
    runs: list[tuple[int, int]] = field(default_factory=list)
    runs_start: int | None = None
    complete: bool = False


def _scan(buffer: mmap.mmap) -> _Layout | None:
    """One pass over the file's strings and brackets (not a parse): the spans of the top-level
    ``info``, ``tasks`` and ``simulations`` values and of each run. None when the top level is not an
    object whose ``simulations`` is a list (the whole-file path then says exactly what is wrong)."""
    first = _OPEN.match(buffer)
    if first is None:
        return None
    layout = _Layout()
    depth = 0
    key: bytes | None = None
    value_start = 0
    run_start = 0
    in_runs = False
    pos = first.end() - 1
    while True:
        if depth >= 3:  # inside a run (or a header value): only its brackets matter
            inner = _BRACKET.match(buffer, pos)
            if inner is None:
                break
            pos = inner.end()
            if inner.group(1) in (b"[", b"{"):
                depth += 1
                continue
            depth -= 1
            if in_runs and depth == 2:
                layout.runs.append((run_start, pos))
            continue
        match = _TOKEN.search(buffer, pos)
        if match is None:
            break
        pos = match.end()
        token = match.group()
        char = token[:1]
        if char == b'"':
            colon = _COLON.match(buffer, match.end()) if depth == 1 else None
            if colon is not None:
                key = token
                value_start = colon.end()
            elif in_runs and depth == 2:
                layout.runs.append((match.start(), match.end()))
            continue
        if char in b"[{":
            depth += 1
            if depth == 2 and key == b'"simulations"':
                if char != b"[":
                    return None
                in_runs = True
                layout.runs_start = match.end()
            elif in_runs and depth == 3:
                run_start = match.start()
            continue
        depth -= 1
        if in_runs and depth == 2:
            layout.runs.append((run_start, match.end()))
        elif depth == 1 and key in _WANTED:
            layout.values[key] = (value_start, match.end())
            in_runs = False
        elif depth == 0:
            layout.complete = True
            break
    if layout.runs_start is None:
        return None
    return layout


def _split_results(path: Path) -> Iterator[ReadItem] | None:
    """The monolithic results file read one run at a time (the file mapped, never a whole-file
    object): None when the file does not look like one, for :func:`_load` to explain."""
    mapped = _mapped(path)
    if mapped is None:
        return None
    return _runs(path, *mapped)


def _mapped(path: Path) -> tuple[mmap.mmap, _Layout] | None:
    """The file mapped and its layout scanned (None: not a results file the splitter reads)."""
    buffer = _map(path)
    if isinstance(buffer, LoadProblem):
        return None
    try:
        layout = _scan(buffer)
    except Exception:
        layout = None
    if layout is None or (not layout.complete and not layout.runs):
        buffer.close()
        return None
    return buffer, layout


def _map(path: Path) -> mmap.mmap | LoadProblem:
    try:
        with path.open("rb") as handle:
            if path.stat().st_size == 0:
                return LoadProblem(file=path.name, message="empty file")
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError) as exc:
        return LoadProblem(file=path.name, message=f"cannot read: {exc}")


@dataclass(frozen=True, slots=True)
class _RunAt:
    """Where an indexed run is: its bytes, and the top-level values its context comes from (one
    dict shared by every run of the file)."""

    begin: int
    end: int
    header: dict[bytes, tuple[int, int]] = field(compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class _RunFile:
    """An indexed run of the ``dir`` layout: its ``simulations/`` file and the results file."""

    results: Path
    run: Path


def _runs(path: Path, buffer: mmap.mmap, layout: _Layout) -> Iterator[ReadItem]:
    for item, _ in _located_runs(path, buffer, layout):
        yield item


def _header(path: Path, buffer: mmap.mmap, values: dict[bytes, tuple[int, int]]) -> tuple[_Context, list[LoadProblem]]:
    """The context of every run: the ``info`` and ``tasks`` values parsed alone."""
    header: dict[str, Any] = {}
    problems = []
    for key in (b'"info"', b'"tasks"'):
        if key in values:
            begin, end = values[key]
            try:
                header[key.decode().strip('"')] = orjson.loads(buffer[begin:end])
            except orjson.JSONDecodeError as exc:
                name = key.decode().strip('"')
                problems.append(LoadProblem(file=path.name, field=name, message=f"not valid JSON: {exc}"))
    return _Context.from_results(header), problems


def _located_runs(path: Path, buffer: mmap.mmap, layout: _Layout) -> Iterator[tuple[ReadItem, _RunAt | None]]:
    """The runs of a split results file, each with its bytes' span (what an index's locator holds)."""
    with buffer:
        context, problems = _header(path, buffer, layout.values)
        for problem in problems:
            yield problem, None
        spans = _with_gaps(buffer, layout)
        if not spans and layout.complete:
            aborted = f"0 simulation runs (the file holds {len(context.tasks)} tasks: an aborted or unstarted run)"
            yield LoadProblem(file=path.name, field="simulations", severity="warning", message=aborted), None
            return
        for index, (begin, end) in enumerate(spans):
            try:
                run = orjson.loads(buffer[begin:end])
            except orjson.JSONDecodeError as exc:
                yield LoadProblem(file=path.name, index=index, field=None, message=f"not valid JSON: {exc}"), None
                continue
            yield _convert(path.name, index, run, context), _RunAt(begin, end, layout.values)
        if not layout.complete:
            yield (
                LoadProblem(
                    file=path.name,
                    index=len(spans),
                    field="simulations",
                    message=(
                        f"the file ends inside simulations[{len(spans)}] (truncated?): "
                        f"the {len(spans)} complete runs before it loaded"
                    ),
                ),
                None,
            )


def _with_gaps(buffer: mmap.mmap, layout: _Layout) -> list[tuple[int, int]]:
    """Each element's span, with the bare values between containers (numbers, null, true) counted."""
    spans: list[tuple[int, int]] = []
    cursor = layout.runs_start or 0
    if b'"simulations"' in layout.values:
        end_of_list = layout.values[b'"simulations"'][1] - 1
    else:  # truncated: what follows the last complete run is no run
        end_of_list = layout.runs[-1][1] if layout.runs else cursor
    for begin, end in [*layout.runs, (end_of_list, end_of_list)]:
        offset = cursor
        for piece in buffer[cursor:begin].split(b","):
            if piece.strip():
                spans.append((offset, offset + len(piece)))
            offset += len(piece) + 1
        if begin < end:
            spans.append((begin, end))
        cursor = end
    return spans


def _load_span(path: Path, where: _RunAt, index: int) -> ReadItem:
    """One run of a results file again, from its bytes and its file's ``info`` and ``tasks``."""
    mapped = _map(path)
    if isinstance(mapped, LoadProblem):
        return mapped
    with mapped:
        context, problems = _header(path, mapped, where.header)
        if problems:
            return problems[0]
        try:
            run = orjson.loads(mapped[where.begin : where.end])
        except orjson.JSONDecodeError:
            return LoadProblem(file=path.name, index=index, message=CHANGED)
    return _convert(path.name, index, run, context)


# -- helpers -------------------------------------------------------------------------------


def _load(path: Path) -> tuple[Any, LoadProblem | None]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}")
    try:
        return orjson.loads(strip_bom(raw)), None
    except orjson.JSONDecodeError as exc:
        return None, LoadProblem(file=path.name, message=f"not valid JSON: {exc}")


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


class _Context:
    """What a results file says about all its runs: tasks by id, models, domain, system prompt."""

    def __init__(self, info: dict[str, Any], tasks: dict[str, Any]) -> None:
        self.info = info
        self.tasks = tasks
        agent = _object(info.get("agent_info"))
        user = _object(info.get("user_info"))
        env = _object(info.get("environment_info"))
        self.metadata: dict[str, Any] = {
            key: value
            for key, value in {
                "domain": env.get("domain_name"),
                "agent": agent.get("implementation"),
                "agent_model": agent.get("llm"),
                "user": user.get("implementation"),
                "user_model": user.get("llm"),
                "git_commit": info.get("git_commit"),
            }.items()
            if value is not None
        }
        llm = agent.get("llm")
        self.agent_model = llm if isinstance(llm, str) and llm else None
        """The agent's model (``info.agent_info.llm``): every agent message's."""
        policy = env.get("policy")
        self.system: ChatMessage | None = None
        self.system_source = ""
        if isinstance(policy, str) and policy:
            if agent.get("implementation") in _TEMPLATE_AGENTS or not agent.get("implementation"):
                content = SYSTEM_PROMPT.format(agent_instruction=AGENT_INSTRUCTION, domain_policy=policy)
                self.system_source = "tau2 LLMAgent template + info.environment_info.policy"
            else:
                content = policy
                self.system_source = (
                    f"info.environment_info.policy alone (agent {agent.get('implementation')!r} "
                    "builds its own prompt around it)"
                )
            self.system = ChatMessage(role="system", content=content)

    @classmethod
    def from_results(cls, data: dict[str, Any]) -> _Context:
        info = _object(data.get("info"))
        tasks: dict[str, Any] = {}
        if isinstance(data.get("tasks"), list):
            for task in data["tasks"]:
                if isinstance(task, dict) and task.get("id") is not None:
                    tasks[str(task["id"])] = task
        return cls(info, tasks)


def _task_text(task: dict[str, Any]) -> str:
    scenario = task.get("user_scenario")
    instructions = scenario.get("instructions") if isinstance(scenario, dict) else None
    if isinstance(instructions, dict):
        for key in ("reason_for_call", "task_instructions"):
            if isinstance(instructions.get(key), str) and instructions[key].strip():
                return str(instructions[key]).strip()
    elif isinstance(instructions, str) and instructions.strip():
        return instructions.strip()
    description = task.get("description")
    if isinstance(description, dict) and isinstance(description.get("purpose"), str) and description["purpose"]:
        return str(description["purpose"])
    if isinstance(task.get("ticket"), str):
        return str(task["ticket"])
    return ""


def _convert_with_warnings(file: str, index: int, run: Any, context: _Context) -> Iterator[ReadItem]:
    item = _convert(file, index, run, context)
    yield item
    if isinstance(item, Trajectory) and not item.steps and item.extra.get("mode") == "full_duplex":
        yield LoadProblem(
            file=file,
            index=index,
            session_id=item.extra.get("run_id"),
            field="ticks",
            severity="warning",
            message=(
                f"full-duplex voice run: its {item.extra.get('ticks', 0)} ticks carry no text and no tool call "
                "(audio only), so it has no steps to show"
            ),
        )


def _convert(file: str, index: int, run: Any, context: _Context) -> ReadItem:
    run_id = run.get("id") if isinstance(run, dict) else None
    try:
        if not isinstance(run, dict):
            raise _Bad(None, f"a simulation run must be an object, got {_kind(run)}")
        return _trajectory(run, context)
    except _Bad as bad:
        return LoadProblem(file=file, index=index, session_id=run_id, field=bad.field, message=bad.message)
    except Exception as exc:  # a reader never raises: anything unexpected names the run
        return LoadProblem(file=file, index=index, session_id=run_id, message=f"{type(exc).__name__}: {exc}")


def _trajectory(run: dict[str, Any], context: _Context) -> Trajectory:
    task_id = run.get("task_id")
    if not isinstance(task_id, (str, int)) or isinstance(task_id, bool):
        raise _Bad("task_id", f"expected a task id, got {_kind(task_id)}")
    trial = run.get("trial")
    if trial is not None and (not isinstance(trial, int) or isinstance(trial, bool)):
        raise _Bad("trial", f"expected an integer trial, got {_kind(trial)}")
    run_id = run.get("id")

    if run.get("messages") is not None:
        messages = run["messages"]
        if not isinstance(messages, list):
            raise _Bad("messages", f"expected a list of messages, got {_kind(messages)}")
        field_prefix = "messages"
    elif run.get("ticks") is not None:
        messages = _messages_from_ticks(run["ticks"])
        field_prefix = "ticks(flattened)"
    else:
        raise _Bad("messages", "the run has neither messages nor ticks")
    steps, side_calls = _steps(messages, context, field_prefix, greeting=run.get("messages") is not None)

    task = context.tasks.get(str(task_id))
    outcome = run_outcome(run, task, steps)
    metadata = dict(context.metadata)
    metadata.update(task_id=str(task_id), trial=trial, run_id=run_id)
    for key in ("seed", "mode", "agent_cost", "user_cost", "duration"):
        if run.get(key) is not None:
            metadata[key] = run[key]
    extra: dict[str, Any] = {key: value for key, value in run.items() if key not in _FIELDS_SKIPPED}
    extra["run_id"] = run_id
    if run.get("ticks") is not None and isinstance(run["ticks"], list):
        extra["ticks"] = len(run["ticks"])
    if task is not None:
        extra["task"] = task
    if context.system is not None:
        extra["system_prompt_source"] = context.system_source
    return Trajectory(
        id=f"{task_id}#{trial}" if trial is not None else str(run_id or task_id),
        format="tau2",
        task=_task_text(task) if task is not None else "",
        metadata=metadata,
        steps=steps,
        outcome=outcome,
        side_calls=side_calls,
        model=context.agent_model,
        usage=TokenUsage.of(cost=run.get("agent_cost")),
        extra=extra,
    )


def _tool_calls(raw: Any, field: str) -> list[ToolCall]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _Bad(field, f"expected a list of tool calls, got {_kind(raw)}")
    calls = []
    for position, call in enumerate(raw):
        where = f"{field}[{position}]"
        if not isinstance(call, dict):
            raise _Bad(where, f"expected a tool call object, got {_kind(call)}")
        name = call.get("name")
        if not isinstance(name, str) or not name:
            raise _Bad(f"{where}.name", f"expected a tool name, got {_kind(name)}")
        arguments = call.get("arguments")
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        if arguments is None or isinstance(arguments, dict):
            calls.append(ToolCall(name=name, arguments=dict(arguments or {}), id=call_id))
            continue
        if isinstance(arguments, str):
            try:
                parsed = orjson.loads(arguments)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict):
                calls.append(ToolCall(name=name, arguments=parsed, id=call_id))
                continue
        calls.append(ToolCall(name=name, id=call_id, raw_arguments=_text(arguments)))
    return calls


def _thinking(message: dict[str, Any]) -> str:
    raw = message.get("raw_data")
    inner = raw.get("message") if isinstance(raw, dict) else None
    for source in (message, inner if isinstance(inner, dict) else {}):
        for key in ("reasoning_content", "reasoning", "thinking"):
            value = source.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return ""


def _is_scripted_greeting(position: int, message: dict[str, Any]) -> bool:
    """The orchestrator's fixed first message ("Hi! How can I help you today?"): no model call."""
    return (
        position == 0
        and not message.get("tool_calls")
        and message.get("raw_data") is None
        and message.get("usage") is None
        and not message.get("cost")
    )


def _steps(
    messages: list[Any], context: _Context, prefix: str, greeting: bool = True
) -> tuple[list[TrajectoryStep], list[SideCall]]:
    """The agent's steps, and the user simulator's own tool calls (each after the agent's last step)."""
    seen: list[ChatMessage] = [context.system] if context.system is not None else []
    steps: list[TrajectoryStep] = []
    side_calls: list[SideCall] = []
    pending: dict[str, tuple[TrajectoryStep, int]] = {}
    hidden: list[dict[str, Any]] = []
    observation = ""
    for position, message in enumerate(messages):
        where = f"{prefix}[{position}]"
        if not isinstance(message, dict):
            raise _Bad(where, f"expected a message object, got {_kind(message)}")
        role = message.get("role")
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise _Bad(f"{where}.content", f"expected text, got {_kind(content)}")
        text = content or ""
        if role == "assistant":
            calls = _tool_calls(message.get("tool_calls"), f"{where}.tool_calls")
            chat = ChatMessage(role="assistant", content=text, tool_calls=calls)
            if greeting and _is_scripted_greeting(position, message):
                seen.append(chat)
                continue
            extra: dict[str, Any] = {
                key: message[key] for key in ("turn_idx", "timestamp", "cost", "usage") if key in message
            }
            if len(calls) > 1:
                extra["other_tool_calls"] = [call.model_dump(exclude_none=True) for call in calls[1:]]
            if hidden:
                extra["user_side"] = hidden
                hidden = []
            if message.get("raw_data") is not None:
                extra["raw_data"] = message["raw_data"]
            usage = _object(message.get("usage"))
            step = TrajectoryStep(
                index=len(steps),
                observation=observation,
                messages=MessageView.prefix(seen, len(seen)),  # seen only grows
                thinking=_thinking(message),
                content=text,
                action=calls[0] if calls else None,
                other_actions=calls[1:],
                extra=extra,
                kind="decision" if calls else "message",
                timestamp=message.get("timestamp"),
                usage=TokenUsage.of(
                    input=usage.get("prompt_tokens"), output=usage.get("completion_tokens"), cost=message.get("cost")
                ),
                model=context.agent_model,
            )
            steps.append(step)
            for number, call in enumerate(calls):
                if call.id is not None:
                    pending[call.id] = (step, number)
            seen.append(chat)
        elif role == "user":
            if message.get("tool_calls"):
                after = len(steps) - 1 if steps else None
                for call in _tool_calls(message.get("tool_calls"), f"{where}.tool_calls"):
                    side_calls.append(SideCall(call=call, requestor="user", after=after))
                hidden.append(message)  # kept verbatim for the step that follows
                continue
            seen.append(ChatMessage(role="user", content=text))
            observation = text
        elif role == "tool":
            if message.get("requestor") == "user":
                hidden.append(message)
                continue
            call_id = message.get("id") if isinstance(message.get("id"), str) else None
            seen.append(ChatMessage(role="tool", content=text, tool_call_id=call_id))
            observation = text
            answered = pending.pop(call_id, None) if call_id is not None else None
            if answered is not None:
                step, number = answered
                if number == 0:
                    step.tool_result = text
                    if message.get("error"):
                        step.extra["tool_error"] = True
                else:
                    step.extra.setdefault("other_tool_results", []).append(
                        {"id": call_id, "content": text, "error": bool(message.get("error"))}
                    )
        elif role == "system":
            seen.append(ChatMessage(role="system", content=text))
        else:
            raise _Bad(f"{where}.role", f"unknown role {role!r} (expected assistant, user or tool)")
    if hidden and steps:
        steps[-1].extra["user_side_after"] = hidden
    if steps:
        steps[-1].done = True
    return steps, side_calls


def _messages_from_ticks(ticks: Any) -> list[dict[str, Any]]:
    """A full-duplex run's ticks flattened into messages, as tau2's ``get_messages`` does, with the
    consecutive text chunks of one speaker merged into one message."""
    if not isinstance(ticks, list):
        raise _Bad("ticks", f"expected a list of ticks, got {_kind(ticks)}")
    messages: list[dict[str, Any]] = []

    def add(role: str, chunk: Any, calls: Any) -> None:
        text = chunk.get("content") if isinstance(chunk, dict) else None
        text = text if isinstance(text, str) else ""
        if not text.strip() and not calls:
            return
        last = messages[-1] if messages else None
        if not calls and last is not None and last.get("role") == role and last.get("_chunks"):
            last["content"] += text
        else:
            messages.append({"role": role, "content": text, "tool_calls": calls or None, "_chunks": not calls})

    for number, tick in enumerate(ticks):
        if not isinstance(tick, dict):
            raise _Bad(f"ticks[{number}]", f"expected a tick object, got {_kind(tick)}")
        add("assistant", tick.get("agent_chunk"), tick.get("agent_tool_calls"))
        messages.extend(tick.get("agent_tool_results") or [])
        add("user", tick.get("user_chunk"), tick.get("user_tool_calls"))
        messages.extend(tick.get("user_tool_results") or [])
    for message in messages:
        message.pop("_chunks", None)
    return messages
