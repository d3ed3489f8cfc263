"""The Model Context Protocol server: the debugger's headless core as tools a coding agent calls.

A face like the CLI and the TUI: it opens logs through :class:`~replay_tui.workspace.Workspace`,
finds text with :mod:`replay_tui.search`, replays through :class:`~replay_tui.session.ReplaySession`
(the CLI's run, so its summary is the CLI's ``replay --report``), compares with :mod:`replay_tui.compare`, groups with
:mod:`replay_tui.groups` and writes with :mod:`replay_tui.export`; it re-implements none of them.

Answers are sized for a model's context: lists come in pages with a ``next_cursor``, and every text
field is at most ``max_chars`` long, a longer one cut with a visible marker. Bad input is a tool error
that names the argument; the server keeps answering.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from replay_tui.annotations import AnnotationError, AnnotationStore
from replay_tui.cli.common import UsageError
from replay_tui.cli.compare import runs_or_none
from replay_tui.compare import CompareError, compare_outcomes, compare_runs, run_info, run_label
from replay_tui.episodes.collection import EpisodeRef
from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import DemoFileError, EpisodeLoadError, LoadProblem
from replay_tui.expected import align_trajectory
from replay_tui.export import FORMATS, ExportError, write_report
from replay_tui.export.outcomes import to_json as outcome_json
from replay_tui.fileio import OutputClash, check_outputs, expand_home, inside
from replay_tui.formats.registry import FormatError
from replay_tui.groups import group_mismatches
from replay_tui.matching import MatchSettings, MatchSpecError
from replay_tui.pairing import PairingError, load_pair
from replay_tui.policies.registry import LLM_MODES, MODES_BY_NAME
from replay_tui.runner import EpisodeReport, SummaryReport
from replay_tui.runs import RunError, RunInfo, RunStore, runs_root
from replay_tui.sanitize import one_line, strip_control
from replay_tui.search import search, step_fields
from replay_tui.session import EpisodeDone, ReplaySession, SessionError, SessionEvent
from replay_tui.sources import is_call_judged, outcome_of_ref, trajectory_of
from replay_tui.workspace import ReplaySettings, Workspace, make_run_info

CUT = "… [cut: {} more chars]"
STEP_FIELDS = ("observation", "observation after", "prompt", "messages", "thinking", "action")
MAX_STEPS_LISTED = 200
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
OutcomeKind = Literal["succeeded", "failed", "errored", "unknown"]
"""The log's outcome in the four words every report counts in (``trajectory.OUTCOME_KINDS``)."""


@dataclass(frozen=True)
class Options:
    """What the server was started with: where it may write and what it may run."""

    out_dir: Path | None = None
    runs_dir: str | None = None
    matching: MatchSettings = field(default_factory=MatchSettings)
    """config.toml's [match]: how replay judges steps unless a call says otherwise."""
    allow_llm: bool = False
    allow_policy_module: bool = False
    allow_annotate: bool = False
    max_chars: int = 4000
    page_size: int = 50


def cut(text: str | None, limit: int) -> str:
    """``text`` in at most ``limit`` characters, control sequences stripped; a longer text ends with
    a marker saying how much was cut, never silently."""
    clean = strip_control(text or "")
    if len(clean) <= limit:
        return clean
    marker = CUT.format(len(clean))
    keep = max(0, limit - len(marker))
    return clean[:keep] + CUT.format(len(clean) - keep)


# ----------------------------------------------------------------------------------- answers


class OpenedFile(BaseModel):
    path: str
    format: str
    episodes: int


class OpenResult(BaseModel):
    files: list[OpenedFile]
    episodes: int
    problems: list[str] = Field(description="one line per file or episode that could not be read")
    problems_more: int = 0


class EpisodeRow(BaseModel):
    episode_id: str = Field(description="the id every other tool takes")
    log_id: str | None = Field(None, description="the episode's own id in its log, when it has one")
    task: str
    outcome: OutcomeKind = Field(description="what the log says of the task: succeeded, failed, errored or unknown")
    score: float | None
    outcome_reason: str = Field("", description="why the task ended so, as the log says (a failed check, an error)")
    steps: int
    mismatches: int | None = Field(None, description="mismatched steps in the last replay; None if not replayed")
    tags: list[str] = Field(default_factory=list, description="tags on the episode or any of its steps")


class EpisodePage(BaseModel):
    episodes: list[EpisodeRow]
    total: int = Field(description="episodes that pass the filter")
    next_cursor: str | None = None


class StepRow(BaseModel):
    step: int = Field(description="the step's position, as get_step takes it")
    label: str
    verdict: str | None = None
    tags: list[str] = Field(default_factory=list)


class EpisodeDetail(BaseModel):
    episode_id: str
    log_id: str | None
    file: str
    task: str
    outcome: OutcomeKind = Field(description="what the log says of the task: succeeded, failed, errored or unknown")
    score: float | None
    outcome_reason: str = Field("", description="why the task ended so, as the log says (a failed check, an error)")
    missed_expected: list[str] = Field(
        default_factory=list,
        description="the task's reference actions the agent missed or called with other arguments, in order",
    )
    replayed: bool
    accuracy: float | None = None
    first_mismatch: str | None = None
    tags: list[str] = Field(default_factory=list)
    note: str = ""
    steps: list[StepRow]
    steps_more: int = 0


class StepDetail(BaseModel):
    episode_id: str
    step: int
    label: str
    fields: dict[str, str]
    expected: str | None = None
    predicted: str | None = None
    verdict: str | None = None
    reason: str | None = None


class Hit(BaseModel):
    episode_id: str
    step: int | None
    label: str
    field: str
    snippet: str
    count: int


class HitPage(BaseModel):
    hits: list[Hit]
    next_cursor: str | None = None


class ReplayResult(BaseModel):
    run_id: str
    saved: bool
    mode: str
    episodes_run: int
    episodes_matched: int
    total_steps: int
    total_matched: int
    total_mismatches: int
    overall_accuracy: float
    accepted_accuracy: float
    accuracy_by_state: dict[str, float]
    failed_episodes: list[str] = Field(description="episode ids with a mismatch, first page")
    problems: list[str]


class Regression(BaseModel):
    episode: str
    step: str
    expected: str
    predicted_a: str
    predicted_b: str
    reason_b: str


class RunsCompared(BaseModel):
    """Two replay runs of the same recorded inputs, step by step (``compare RUN_A RUN_B``)."""

    flips: dict[str, int]
    episode_flips: dict[str, int]
    accuracy_a: float
    accuracy_b: float
    p_value: float | None
    regressions: list[Regression]
    regressions_more: int = 0


class Unpaired(BaseModel):
    a_only: list[str] = Field(description="task keys only log A has (first page)")
    b_only: list[str] = Field(description="task keys only log B has (first page)")
    a_only_more: int = 0
    b_only_more: int = 0


class LogsCompared(BaseModel):
    """Two logs of agents' own runs of the same tasks, paired by task (``compare LOG_A LOG_B``'s
    JSON report: ``summary``, ``unpaired``, and its regressed ``tasks``)."""

    formats_a: list[str]
    formats_b: list[str]
    summary: dict[str, Any] = Field(description="success rates with Wilson intervals, McNemar p, bootstrap, pass^k")
    unpaired: Unpaired
    regressions: list[dict[str, Any]] = Field(
        description="tasks that succeeded in A and failed in B, each with its first divergent call"
    )
    regressions_more: int = 0


class CompareResult(BaseModel):
    kind: Literal["runs", "logs"] = Field(description="two replay runs, or two logs paired by task")
    headline: str
    a: str
    b: str
    warnings: list[str]
    runs: RunsCompared | None = None
    logs: LogsCompared | None = None


class Group(BaseModel):
    state: str
    expected_tool: str
    predicted_tool: str
    reason_kind: str
    count: int
    sample_reason: str


class GroupsResult(BaseModel):
    run_id: str
    groups: list[Group]
    groups_more: int = 0


class Annotated(BaseModel):
    episode_id: str
    step: str | None = Field(description="the step's label; None for the episode")
    tags: list[str]
    note: str
    sidecar: str


class Written(BaseModel):
    path: str
    format: str
    bytes: int


# ----------------------------------------------------------------------------------- state


@dataclass
class _Run:
    summary: SummaryReport
    info: RunInfo


@dataclass
class Session:
    """The server's one workspace and the runs it made, shared by every tool call."""

    options: Options
    workspace: Workspace | None = None
    runs: dict[str, _Run] = field(default_factory=dict)
    last_run: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ws(self) -> Workspace:
        if self.workspace is None:
            raise ToolError("no logs are open: call open_logs first")
        return self.workspace

    def ref(self, episode_id: str) -> EpisodeRef:
        demos = self.ws().demos
        text = str(episode_id).strip()
        if text.lstrip("-").isdigit() and int(text) in demos.by_session:
            return demos.by_session[int(text)]
        for ref in demos.refs:
            if ref.episode_id == text:
                return ref
        raise ToolError(f"episode_id: no episode {cut(text, 80)!r} (list_episodes gives the ids)")

    def run(self, name: str | None, argument: str = "run") -> _Run:
        key = name or self.last_run
        if key is None:
            raise ToolError(f"{argument}: no run yet: call replay first, or name a saved run")
        if key in self.runs:
            return self.runs[key]
        try:
            summary, info = RunStore(runs_root(self.options.runs_dir)).load(key)
        except (RunError, OSError) as exc:
            raise ToolError(f"{argument}: {cut(str(exc), 300)}") from None
        return _Run(summary, info)


def _outcome(ref: EpisodeRef) -> OutcomeKind:
    kind = outcome_of_ref(ref).kind
    return cast(OutcomeKind, kind)


def _episode_id(ref: EpisodeRef) -> str:
    return str(ref.session_id)


def _start(cursor: str | None, argument: str = "cursor") -> int:
    if cursor is None or cursor == "":
        return 0
    if not cursor.isdigit():
        raise ToolError(f"{argument}: {cut(cursor, 40)!r} is not a cursor this server gave")
    return int(cursor)


def _problem_line(problem: LoadProblem) -> str:
    return str(problem)


def _page(items: Sequence[Any], start: int, size: int) -> tuple[list[Any], str | None]:
    end = start + size
    return list(items[start:end]), (str(end) if end < len(items) else None)


# ----------------------------------------------------------------------------------- the server

INSTRUCTIONS = (
    "replay_tui: debug LLM-agent logs. open_logs first; then list_episodes (outcome='failed' or 'errored'), "
    "get_episode, get_step to read what the agent saw and did; find to search every step; replay to "
    "judge each step against the recording; mismatch_groups, compare and export_report on runs."
)


def build_server(options: Options, initial: Sequence[str] = ()) -> MCPServer:
    """The server with its tools, resources and prompt over one :class:`Session`."""
    session = Session(options)
    limit = options.max_chars

    def fit(text: str | None, most: int = limit) -> str:
        """A text field of an answer: at most ``most`` characters, never more than ``--max-chars``."""
        return cut(text, min(most, limit))

    server: MCPServer = MCPServer(name="replay-tui", instructions=INSTRUCTIONS, log_level="WARNING")

    def open_paths(paths: list[str], fmt: str | None) -> OpenResult:
        if not paths:
            raise ToolError("paths: give at least one log file or folder")
        try:
            ws = Workspace.open(paths, fmt=fmt, skip_unreadable=True)
        except (DemoFileError, FormatError, UsageError, ValueError, OSError) as exc:
            raise ToolError(f"paths: {fit(str(exc), 300)}") from None
        if not ws.demos.files:  # nothing could be read: the logs open before stay open
            why = "; ".join(_problem_line(p) for p in ws.demos.unreadable[:3]) or "no log found"
            raise ToolError(f"paths: {fit(why, 500)}")
        with session.lock:
            session.workspace = ws
        counts: dict[str, int] = {}
        formats: dict[str, str] = {}
        for ref in ws.demos.refs:
            counts[ref.file.name] = counts.get(ref.file.name, 0) + 1
            formats.setdefault(ref.file.name, ref.format)
        files = [
            OpenedFile(
                path=fit(str(source.path), 500),
                format=formats.get(source.name) or str(getattr(source, "format", "webshop-demos")),
                episodes=counts.get(source.name, 0),
            )
            for source in ws.demos.files
        ]
        problems = [*ws.demos.unreadable, *ws.demos.problems]
        shown = problems[: options.page_size]
        return OpenResult(
            files=files,
            episodes=len(ws.demos),
            problems=[fit(_problem_line(p), 300) for p in shown],
            problems_more=len(problems) - len(shown),
        )

    if initial:
        try:
            open_paths(list(initial), None)
        except ToolError as exc:  # at start, a usage error: one line and exit 2
            raise UsageError(str(exc).removeprefix("paths: ")) from None

    @server.tool(annotations=READ_ONLY)
    def open_logs(paths: list[str], format: str | None = None) -> OpenResult:
        """Open agent logs (files, folders or globs; any supported format, detected by content unless
        `format` names one). Replaces the logs open before. Episodes that cannot be read are listed
        as problems; the rest stay usable."""
        return open_paths(paths, format)

    @server.tool(annotations=READ_ONLY)
    def list_episodes(
        outcome: OutcomeKind | None = None,
        mismatched: bool | None = None,
        text: str | None = None,
        tag: str | None = None,
        sort: Literal["order", "score", "mismatches"] = "order",
        cursor: str | None = None,
    ) -> EpisodePage:
        """The open episodes, a page at a time: id, task, outcome, score, steps and the last replay's
        mismatches. Filter on the log's outcome (succeeded, failed, errored, unknown), on having
        mismatched in the last replay, on text in the task or on a tag; pass `next_cursor` back as
        `cursor` for the next page."""
        ws = session.ws()
        start = _start(cursor)
        needle = (text or "").casefold()
        results = ws.results

        def mismatches_of(ref: EpisodeRef) -> int | None:
            result = results.get(ref.session_id)
            return None if result is None else len(result.mismatches)

        chosen: list[EpisodeRef] = []  # filtered on the index alone; rows are built for one page only
        for ref in ws.demos.refs:
            if outcome is not None and _outcome(ref) != outcome:
                continue
            if needle and needle not in ref.task.casefold():
                continue
            if tag is not None and tag not in ws.annotations.episode_tags(ref.session_id):
                continue
            if mismatched is not None:
                count = mismatches_of(ref)
                if count is None or (count > 0) != mismatched:
                    continue
            chosen.append(ref)
        if sort == "score":
            chosen.sort(key=lambda ref: (ref.reward is None, ref.reward or 0.0))
        elif sort == "mismatches":
            chosen.sort(key=lambda ref: -(mismatches_of(ref) or 0))
        page, next_cursor = _page(chosen, start, options.page_size)
        rows = [
            EpisodeRow(
                episode_id=_episode_id(ref),
                log_id=fit(ref.episode_id, 200) if ref.episode_id else None,
                task=fit(ref.task, 300),
                outcome=_outcome(ref),
                score=ref.reward,
                outcome_reason=fit(outcome_of_ref(ref).reason, 300),
                steps=ref.decision_steps,
                mismatches=mismatches_of(ref),
                tags=[fit(t, 100) for t in ws.annotations.episode_tags(ref.session_id)],
            )
            for ref in page
        ]
        return EpisodePage(episodes=rows, total=len(chosen), next_cursor=next_cursor)

    def read(ref: EpisodeRef) -> Trajectory:
        try:
            return trajectory_of(session.ws().demos, ref.session_id)
        except EpisodeLoadError as exc:
            raise ToolError(
                f"episode_id: episode {ref.session_id} cannot be read: {fit(str(exc.problem), 300)}"
            ) from None

    @server.tool(annotations=READ_ONLY)
    def get_episode(episode_id: str) -> EpisodeDetail:
        """One episode: task, outcome, score, how the last replay judged it, and its steps (ids for
        get_step) with each step's verdict."""
        ref = session.ref(episode_id)
        trajectory = read(ref)
        result: EpisodeReport | None = session.ws().results.get(ref.session_id)
        verdicts = {step.step_label: step.verdict for step in result.steps} if result is not None else {}
        for mismatch in result.mismatches if result is not None else []:
            verdicts.setdefault(mismatch.step_label, "mismatch")
        store = session.ws().annotations
        steps = []
        for position, label, _ in step_fields(trajectory):
            marked = store.get(ref.session_id, label)
            tags = [fit(t, 100) for t in marked.tags] if marked else []
            steps.append(StepRow(step=position, label=fit(label, 200), verdict=verdicts.get(label), tags=tags))
        own = store.get(ref.session_id, None)
        shown = steps[:MAX_STEPS_LISTED]
        alignment = align_trajectory(trajectory)  # None for a log without reference actions (a seed file's)
        return EpisodeDetail(
            episode_id=_episode_id(ref),
            log_id=fit(ref.episode_id, 200) if ref.episode_id else None,
            file=fit(ref.file.name, 500),
            task=fit(ref.task, limit),
            outcome=_outcome(ref),
            score=ref.reward,
            outcome_reason=fit(outcome_of_ref(ref).reason, 300),
            missed_expected=[fit(name, 200) for name in alignment.missed] if alignment is not None else [],
            replayed=result is not None,
            accuracy=None if result is None else result.accuracy,
            first_mismatch=None if result is None else result.first_mismatch_step,
            tags=[fit(t, 100) for t in store.episode_tags(ref.session_id)],
            note=fit(own.note if own else "", limit),
            steps=shown,
            steps_more=len(steps) - len(shown),
        )

    @server.tool(annotations=READ_ONLY)
    def get_step(episode_id: str, step: int, fields: list[str] | None = None) -> StepDetail:
        """One step of an episode (its position from get_episode): what the agent saw (observation,
        observation after), was asked (prompt or messages), thought and did (action), and, once
        replayed, expected vs predicted with the verdict and its reason. `fields` picks texts."""
        for name in fields or ():
            if name not in STEP_FIELDS:
                raise ToolError(f"fields: unknown field {fit(name, 40)!r}; choose from {', '.join(STEP_FIELDS)}")
        ref = session.ref(episode_id)
        trajectory = read(ref)
        for position, label, texts in step_fields(trajectory):
            if position != step:
                continue
            wanted = set(fields or STEP_FIELDS)
            found = {name: fit(value, limit) for name, value in texts if value and name in wanted}
            detail = StepDetail(episode_id=_episode_id(ref), step=step, label=fit(label, 200), fields=found)
            result = session.ws().results.get(ref.session_id)
            for judged in result.steps if result is not None else []:
                if judged.step_label == label:
                    detail.expected = fit(judged.expected, limit)
                    detail.predicted = fit(judged.predicted, limit)
                    detail.verdict = judged.verdict
                    detail.reason = fit(judged.reason, limit)
            return detail
        raise ToolError(f"step: episode {ref.session_id} has no step {step} (it has {len(trajectory.steps)})")

    @server.tool(annotations=READ_ONLY)
    def find(text: str, cursor: str | None = None) -> HitPage:
        """Every step and field of the open episodes that contains `text` (case-insensitive), as the
        debugger's F finds them, a page at a time."""
        if not text.strip():
            raise ToolError("text: give something to find")
        ws = session.ws()
        start = _start(cursor)
        hits: list[Hit] = []
        end = start + options.page_size
        more = False
        for found in search(ws.demos, text):
            for hit in found.hits:
                if len(hits) >= end:
                    more = True
                    break
                hits.append(
                    Hit(
                        episode_id=str(hit.session_id),
                        step=hit.position,
                        label=fit(hit.step, 200),
                        field=hit.field,
                        snippet=fit(hit.snippet, 500),
                        count=hit.count,
                    )
                )
            if more:
                break
        return HitPage(hits=hits[start:], next_cursor=str(end) if more else None)

    def settings_for(policy: str, model: str | None, match: str | None) -> ReplaySettings:
        try:  # config.toml's [match], then this call's, as the CLI's --match
            matching = MatchSettings.parse([*options.matching.specs(), match]) if match else options.matching
        except MatchSpecError as exc:
            raise ToolError(f"match: {fit(str(exc), 300)}") from None
        if ":" in policy:
            if not options.allow_policy_module:
                raise ToolError("policy: a module:attr policy runs code; start the server with --allow-policy-module")
            return ReplaySettings(mode="custom", policy_spec=policy, matching=matching)
        mode = MODES_BY_NAME.get(policy)
        if mode is None or (not mode.builtin and policy not in LLM_MODES):
            names = ", ".join(name for name, m in MODES_BY_NAME.items() if m.builtin or name in LLM_MODES)
            raise ToolError(f"policy: unknown policy {fit(policy, 40)!r}; choose from {names} or module:attr")
        if policy in LLM_MODES:
            if not options.allow_llm:
                raise ToolError("policy: the llm mode spends the user's key; start the server with --allow-llm")
            if policy != "llm":
                raise ToolError(f"policy: {policy} needs a graph module: not served here")
            return ReplaySettings(mode=policy, llm={"model": model} if model else {}, matching=matching)
        return ReplaySettings(mode=policy, matching=matching)

    @server.tool()
    async def replay(
        policy: str,
        ctx: Context,
        model: str | None = None,
        episodes: list[str] | None = None,
        match: str | None = None,
    ) -> ReplayResult:
        """Replay episodes (all, or `episodes` by id) teacher-forced through a policy (`heuristic`,
        `stub`; `llm` with `model` only if the server allows it) and judge every step against the
        recording. Progress comes as notifications; the run is saved and its id returned."""
        ws = session.ws()
        settings = settings_for(policy, model, match)
        session_ids = [session.ref(e).session_id for e in episodes] if episodes else None
        if settings.mode == "heuristic":  # the heuristic shopper plays WebShop only (as the CLI says)
            refs = ws.demos.refs if session_ids is None else [ws.demos.by_session[i] for i in session_ids]
            others = sorted({ref.format for ref in refs if is_call_judged(ref.format)})
            if others:
                raise ToolError(
                    f"policy: heuristic plays WebShop only, and these are {', '.join(others)} logs; "
                    "use stub (or pick WebShop episodes)"
                )
        ws.settings = settings
        done = [0]

        def on_event(event: SessionEvent) -> None:
            if isinstance(event, EpisodeDone):
                done[0] += 1
                if not run.cancelled:
                    anyio.from_thread.run(ctx.report_progress, done[0], run.count)

        try:
            run = ReplaySession(ws.demos, settings, session_ids, on_event=on_event)
        except (ValueError, OSError) as exc:  # PolicyLoadError, LlmConfigError are ValueErrors
            raise ToolError(f"policy: {fit(str(exc), 300)}") from None
        try:  # a client's cancellation stops the run at its next step (the thread is let go, not waited on)
            summary = await anyio.to_thread.run_sync(run.run, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            run.cancel()
            raise
        except SessionError as exc:
            raise ToolError(f"policy: {fit(str(exc), 300)}") from None
        if run.unreachable is not None:  # no request got through: not a run at 0 %
            raise ToolError(fit(run.unreachable.message(), 300))
        for report in summary.episodes:
            ws.record(report, run.mode)
        info = make_run_info(
            settings,
            [demo.path for demo in ws.demos.files],
            sessions="all" if session_ids is None else session_ids,
            complete=not summary.cancelled,
        )
        saved = True
        try:
            RunStore(runs_root(options.runs_dir)).save(summary, info)
        except (OSError, RunError):
            saved = False
        session.runs[info.id] = _Run(summary, info)
        session.last_run = info.id
        failed = [str(e.session_id) for e in summary.episodes if e.mismatches][: options.page_size]
        return ReplayResult(
            run_id=info.id,
            saved=saved,
            mode=summary.mode,
            episodes_run=summary.episodes_run,
            episodes_matched=summary.episodes_matched,
            total_steps=summary.total_steps,
            total_matched=summary.total_matched,
            total_mismatches=summary.total_mismatches,
            overall_accuracy=summary.overall_accuracy,
            accepted_accuracy=summary.accepted_accuracy,
            accuracy_by_state=summary.accuracy_by_state,
            failed_episodes=failed,
            problems=[fit(str(p), 300) for p in summary.problems[: options.page_size]],
        )

    def loaded(spec: str, argument: str) -> tuple[SummaryReport, Any, str] | None:
        """The run ``spec`` names (an id of this session, a report file, a name in the history), or
        None when it is a log of an agent's own run (``compare`` pairs two logs by task)."""
        if spec in session.runs:
            run = session.runs[spec]
            return run.summary, run.info.model_dump(mode="json"), spec
        try:
            runs = runs_or_none([spec], options.runs_dir, None)
        except (UsageError, OSError) as exc:
            raise ToolError(f"{argument}: {fit(str(exc), 300)}") from None
        if runs is None:
            return None
        if len(runs) != 1:
            raise ToolError(f"{argument}: {fit(spec, 200)} holds {len(runs)} runs; name one run")
        return runs[0].summary, runs[0].info, runs[0].source

    def compare_logs(log_a: str, log_b: str) -> CompareResult:
        try:
            pairing = load_pair([str(expand_home(log_a)), str(expand_home(log_b))])
        except PairingError as exc:
            raise ToolError(f"run_or_log_a, run_or_log_b: {fit(one_line(str(exc)), 300)}") from None
        comparison = compare_outcomes(pairing)
        report = outcome_json(comparison)
        size = options.page_size
        regressions = [task for task in report["tasks"] if task["change"] == "regressed"]
        a_only, b_only = report["unpaired"]["a_only"], report["unpaired"]["b_only"]
        problems = [str(p) for log in (pairing.a, pairing.b) for p in log.problems]
        return CompareResult(
            kind="logs",
            headline=fit(comparison.headline()),
            a=fit(log_a, 200),
            b=fit(log_b, 200),
            warnings=[fit(w, 300) for w in [*problems, *report["warnings"]][:size]],
            logs=LogsCompared(
                formats_a=[fit(f, 100) for f in pairing.a.formats],
                formats_b=[fit(f, 100) for f in pairing.b.formats],
                summary=fitted(report["summary"], 200),
                unpaired=Unpaired(
                    a_only=[fit(key, 200) for key in a_only[:size]],
                    b_only=[fit(key, 200) for key in b_only[:size]],
                    a_only_more=max(0, len(a_only) - size),
                    b_only_more=max(0, len(b_only) - size),
                ),
                regressions=[fitted(task, 500) for task in regressions[:size]],
                regressions_more=max(0, len(regressions) - size),
            ),
        )

    def fitted(value: Any, most: int) -> Any:
        """``value`` (JSON) with every string, keys too, cut to ``most`` characters (and ``--max-chars``)."""
        if isinstance(value, str):
            return fit(value, most)
        if isinstance(value, dict):
            return {fit(str(key), most): fitted(item, most) for key, item in value.items()}
        if isinstance(value, list):
            return [fitted(item, most) for item in value]
        return value

    @server.tool(annotations=READ_ONLY)
    def compare(run_or_log_a: str, run_or_log_b: str) -> CompareResult:
        """Compare two replay runs (ids from replay, names in the run history, or report files): the
        flips between them, paired statistics, and the steps that regressed from A to B. Or compare two
        logs of agents' own runs of the same tasks (any format), paired by task: success rates, McNemar,
        pass^k, the task keys only one log has, and each regressed task's first divergent call."""
        first = loaded(run_or_log_a, "run_or_log_a")
        second = loaded(run_or_log_b, "run_or_log_b")
        if first is None and second is None:
            return compare_logs(run_or_log_a, run_or_log_b)
        if first is None or second is None:
            argument = "run_or_log_a" if first is None else "run_or_log_b"
            raise ToolError(f"{argument}: a log, and the other a run: compare two runs or two logs")
        summary_a, info_a, source_a = first
        summary_b, info_b, source_b = second
        infos = [
            run_info(summary_a, info_a, label=run_label(0), source=source_a),
            run_info(summary_b, info_b, label=run_label(1), source=source_b),
        ]
        try:
            comparison = compare_runs(summary_a, summary_b, a_info=infos[0], b_info=infos[1])
        except CompareError as exc:
            raise ToolError(f"run_or_log_b: {fit(str(exc), 300)}") from None
        regressions = comparison.regressions
        shown = regressions[: options.page_size]
        return CompareResult(
            kind="runs",
            headline=fit(comparison.headline(), limit),
            a=fit(run_or_log_a, 200),
            b=fit(run_or_log_b, 200),
            warnings=[fit(w, 300) for w in comparison.warnings],
            runs=RunsCompared(
                flips=comparison.flips,
                episode_flips=comparison.episode_flips,
                accuracy_a=comparison.overall.a.rate,
                accuracy_b=comparison.overall.b.rate,
                p_value=comparison.overall.mcnemar_p,
                regressions=[
                    Regression(
                        episode=fit(s.episode, 200),
                        step=fit(s.step_label, 200),
                        expected=fit(s.expected, 500),
                        predicted_a=fit(s.predicted_a, 500),
                        predicted_b=fit(s.predicted_b, 500),
                        reason_b=fit(s.reason_b, 300),
                    )
                    for s in shown
                ],
                regressions_more=len(regressions) - len(shown),
            ),
        )

    @server.tool(annotations=READ_ONLY)
    def mismatch_groups(run: str | None = None) -> GroupsResult:
        """The mismatches of a run (the last replay unless named) grouped by state, expected tool,
        predicted tool and kind of reason, largest first."""
        found = session.run(run)
        groups = group_mismatches(found.summary)
        shown = groups[: options.page_size]
        return GroupsResult(
            run_id=found.info.id,
            groups=[
                Group(
                    state=fit(g.state, 100),
                    expected_tool=fit(g.expected_tool, 200),
                    predicted_tool=fit(g.predicted_tool, 200),
                    reason_kind=fit(g.reason_kind, 100),
                    count=g.count,
                    sample_reason=fit(g.sample_reason, 300),
                )
                for g in shown
            ],
            groups_more=len(groups) - len(shown),
        )

    @server.tool()
    def export_report(run: str, format: str, path: str) -> Written:
        """Write a run's report (json, md, csv, html or junit) to `path`, which must lie under the
        folder the server was started with (--out-dir); nothing is written anywhere else."""
        if format not in FORMATS:
            raise ToolError(f"format: unknown format {fit(format, 40)!r}; choose from {', '.join(FORMATS)}")
        if options.out_dir is None:
            raise ToolError("path: the server was started without --out-dir: it writes no reports")
        target = Path(path)
        if not target.is_absolute():
            target = options.out_dir / target
        if not inside(target, options.out_dir):
            raise ToolError(f"path: {fit(path, 200)} is outside the output folder {options.out_dir}")
        found = session.run(run)
        ws = session.workspace
        protected: Iterable[tuple[str, str | Path | None]] = (
            [("a log", demo.path) for demo in ws.demos.files] + [("the annotations sidecar", ws.annotations.path)]
            if ws is not None
            else []
        )
        try:
            check_outputs([("path", target)], protected)
            target.resolve().parent.mkdir(parents=True, exist_ok=True)
            written = write_report(target.resolve(), found.summary, None, format)
        except (OutputClash, ExportError, OSError) as exc:
            raise ToolError(f"path: {fit(str(exc), 300)}") from None
        return Written(path=str(written), format=format, bytes=Path(written).stat().st_size)

    def label_of(ref: EpisodeRef, step: int | None) -> str | None:
        if step is None:
            return None
        for position, label, _ in step_fields(read(ref)):
            if position == step:
                return label
        raise ToolError(f"step: episode {ref.session_id} has no step {step}")

    def annotated(ref: EpisodeRef, label: str | None, edit: Any) -> Annotated:
        store = session.ws().annotations
        with session.lock:
            edit(store)
            try:
                store.save()
            except (AnnotationError, OSError) as exc:
                raise ToolError(f"episode_id: the annotations were not saved: {fit(str(exc), 300)}") from None
        item = store.get(ref.session_id, label)
        return Annotated(
            episode_id=_episode_id(ref),
            step=label,
            tags=[fit(t, 100) for t in (item.tags if item else [])],
            note=fit(item.note if item else "", limit),
            sidecar=fit(str(store.path), 500),
        )

    if options.allow_annotate:

        @server.tool()
        def tag_step(episode_id: str, tag: str, step: int | None = None, on: bool = True) -> Annotated:
            """Set (or with on=false clear) a tag on an episode, or on one of its steps (its position),
            in the annotations sidecar the debugger reads."""
            clean = one_line(tag).strip()
            if not clean or len(clean) > 100:
                raise ToolError("tag: give a tag of 1 to 100 characters on one line")
            ref = session.ref(episode_id)
            label = label_of(ref, step)

            def edit(store: AnnotationStore) -> None:
                item = store.get(ref.session_id, label)
                if (clean in (item.tags if item else [])) != on:
                    store.toggle_tag(ref.session_id, label, clean)

            return annotated(ref, label, edit)

        @server.tool()
        def note(episode_id: str, text: str, step: int | None = None) -> Annotated:
            """Write the note of an episode, or of one of its steps (its position), in the annotations
            sidecar (an empty text clears it)."""
            if len(text) > 10_000:
                raise ToolError("text: a note is at most 10000 characters")
            ref = session.ref(episode_id)
            label = label_of(ref, step)
            return annotated(ref, label, lambda store: store.set_note(ref.session_id, label, strip_control(text)))

    @server.resource("replay://runs/{run_id}", mime_type="application/json")
    def run_resource(run_id: str) -> str:
        """A run's full report (every episode and step result) as JSON."""
        found = session.run(run_id)
        return found.summary.to_json(include_steps=True).decode()

    @server.prompt()
    def triage_failures() -> str:
        """How to walk an agent's failures with these tools."""
        return TRIAGE

    return server


TRIAGE = """Triage the failures of the open agent logs with the replay-tui tools:
1. open_logs(paths) if no logs are open; note any problems it lists.
2. list_episodes(outcome="failed"), then outcome="errored": the episodes that did not succeed, a page
   at a time, each with the log's reason (outcome_reason).
3. replay(policy="heuristic") judges every step against the recording; list_episodes(mismatched=true)
   then lists the episodes where a step differed, and mismatch_groups() groups those steps.
4. For an episode: get_episode(episode_id) for its steps and verdicts, then get_step(episode_id, step)
   on the first mismatch to read the observation, prompt, thinking and action, and the verdict's reason.
5. find(text) locates an error message or tool name across every step.
6. Report, per group: what the agent did, what it should have done, and the earliest step where the
   episode went wrong. compare(run_or_log_a, run_or_log_b) tells whether a change fixed it
   (two runs step by step, or two logs of the agent's own runs paired by task).
"""
