"""Which recorded inputs two or more replay runs read, and how their episodes pair.

Runs compare only over the same recorded inputs: their demo files are the same by sha256 (when every
run recorded hashes), else by name; a file name with two hashes, no file in common, an episode with
another instruction or an aligned step that expects another action is refused with a one-line
:class:`~replay_tui.compare.model.CompareError`. An episode's key across runs is (its file's canonical
key, its id in the log): the replay case's pairing key (:func:`replay_tui.pairing.join` pairs by it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from replay_tui.compare.model import CompareError
from replay_tui.compare.run_files import RunSteps, StepLike
from replay_tui.runner import EpisodeReport, SummaryReport
from replay_tui.sanitize import strip_control


class DemoIdentity(BaseModel):
    """A demo file a run read: its name, and, when the run recorded them, its size and sha256."""

    name: str
    path: str | None = None
    size: int | None = None
    sha256: str | None = None


class RunInfo(BaseModel):
    """What a comparison says about one run."""

    label: str
    """``A``, ``B``, ``C``... in the order the runs were given."""
    name: str
    """The run's name in the history, or its report file's name."""
    source: str = ""
    """Where it was read from (a path or a history name); empty for the app's own results."""
    mode: str = ""
    mismatch_policy: str = ""
    matching: str = "exact"
    include_item_steps: bool = False
    created: str | None = None
    model: str | None = None
    demo_files: list[DemoIdentity] = Field(default_factory=list)
    hashes_known: bool = False
    episodes: int = 0
    steps: int = 0
    outcomes: dict[str, int] = Field(default_factory=dict)
    """The run's episodes by what their logs say of the task, as its own report counts them."""


def run_info(
    run: SummaryReport | RunSteps, info: Mapping[str, Any] | None = None, *, label: str, source: str = ""
) -> RunInfo:
    """What the comparison shows of a run: its ``run`` record's fields when it has one, else the report's."""
    steps = RunSteps.of(run)
    summary = steps.report
    info = dict(info or {})
    files: list[DemoIdentity] = []
    raw_files = info.get("demo_files")
    if isinstance(raw_files, list) and raw_files:
        for item in raw_files:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                sha = item.get("sha256")
                size = item.get("size")
                path = item.get("path")
                files.append(
                    DemoIdentity(
                        name=item["name"],
                        path=str(path) if path is not None else None,
                        size=size if isinstance(size, int) else None,
                        sha256=sha.lower() if isinstance(sha, str) and sha else None,
                    )
                )
    if not files:
        files = [DemoIdentity(name=name) for name in summary.files]
    name = info.get("name") if isinstance(info.get("name"), str) and info.get("name") else None
    return RunInfo(
        label=label,
        name=name or (Path(source).name if source else label),
        source=source,
        mode=str(info.get("policy") or summary.mode),
        mismatch_policy=summary.mismatch_policy,
        matching=summary.matching_label,
        include_item_steps=summary.include_item_steps,
        created=str(info["created"]) if info.get("created") else None,
        model=str(info["model"]) if info.get("model") else None,
        demo_files=files,
        hashes_known=bool(files) and all(f.sha256 for f in files),
        episodes=len(summary.episodes),
        steps=steps.step_count,
        outcomes=summary.outcomes,
    )


def _short_hash(sha: str | None) -> str:
    return (sha or "?")[:12]


def _names(files: Sequence[DemoIdentity]) -> str:
    shown = ", ".join(f.name for f in files[:3])
    return shown + (f" and {len(files) - 3} more" if len(files) > 3 else "") if files else "no files"


@dataclass
class Identity:
    """How two or more runs' demo files correspond: a canonical key per (run, file name)."""

    canonical: list[dict[str, str]]
    common: set[str]
    warnings: list[str]
    shown: dict[str, str]  # canonical key -> a file name to show


def identity_of(infos: Sequence[RunInfo]) -> Identity:
    """Check that the runs read the same recorded inputs; raise CompareError with the reason when not.

    Files are the same when their sha256 is (when every run recorded hashes), else when their names
    are. A file name with two different hashes, or no file in common, is refused."""
    warnings: list[str] = []
    by_hash = all(info.hashes_known for info in infos)
    unknown = [info.label for info in infos if not info.hashes_known]
    if unknown:
        which = ", ".join(unknown)
        warnings.append(
            f"demo file hashes unknown for {which} (a plain report, not a saved run): "
            "the recorded inputs are matched by file name only"
        )
    # the same name with different hashes, between any two runs that know them
    for first, second in combinations(infos, 2):
        hashes = {_basename(f.name): f.sha256 for f in first.demo_files if f.sha256}
        for item in second.demo_files:
            other = hashes.get(_basename(item.name))
            if other and item.sha256 and other != item.sha256:
                raise CompareError(
                    f"different recorded inputs: demo file {_basename(item.name)} has sha256 {_short_hash(other)}… in "
                    f"{first.label} and {_short_hash(item.sha256)}… in {second.label}"
                )
    canonical: list[dict[str, str]] = []
    shown: dict[str, str] = {}
    for info in infos:
        keys: dict[str, str] = {}
        for item in info.demo_files:
            key = f"sha256:{item.sha256}" if by_hash and item.sha256 else f"name:{_basename(item.name)}"
            keys[item.name] = key
            shown.setdefault(key, _basename(item.name))
        canonical.append(keys)
    sets = [set(keys.values()) for keys in canonical]
    common = set.intersection(*sets) if sets else set()
    if not common:
        what = "demo file in common" if by_hash else "demo file name in common"
        listing = "; ".join(
            f"{info.label}: "
            + (
                ", ".join(f"{f.name} sha256 {_short_hash(f.sha256)}…" for f in info.demo_files[:3])
                if by_hash
                else _names(info.demo_files)
            )
            for info in infos
        )
        raise CompareError(f"different recorded inputs: no {what} ({listing})")
    if any(s != common for s in sets):
        warnings.append(
            f"the runs share {len(common)} demo file{'s' if len(common) != 1 else ''} of "
            f"{len(set.union(*sets))}: comparing the episodes of the shared files only"
        )
    return Identity(canonical, common, warnings, shown)


def _basename(name: str) -> str:
    """A file's name without its folder: runs may name the same file by other paths."""
    return Path(name).name or name


def _episode_key(episode: EpisodeReport, files: Mapping[str, str]) -> tuple[str, str]:
    """An episode's key across runs: its file's canonical key and its id in the log (or its session id)."""
    file_key = files.get(episode.file) or f"name:{_basename(episode.file)}"
    local = f"id:{episode.episode_id}" if episode.episode_id is not None else f"session:{episode.session_id}"
    return file_key, local


def episode_name(episode: EpisodeReport) -> str:
    return episode.episode_id if episode.episode_id is not None else str(episode.session_id)


def unique_names(episodes: Sequence[EpisodeReport]) -> dict[int, str]:
    """Each episode's name (by ``id``), qualified by its file's name when two files share an episode id."""
    counts: dict[str, int] = {}
    for episode in episodes:
        counts[episode_name(episode)] = counts.get(episode_name(episode), 0) + 1
    return {
        id(episode): episode_name(episode)
        if counts[episode_name(episode)] == 1
        else f"{_basename(episode.file)}:{episode_name(episode)}"
        for episode in episodes
    }


_Episode = tuple[EpisodeReport, Sequence[StepLike]]
"""An episode of a run and its step results."""


def index_episodes(run: RunSteps, files: Mapping[str, str]) -> dict[tuple[str, str], _Episode]:
    index: dict[tuple[str, str], _Episode] = {}
    for episode, steps in run.episodes():
        index.setdefault(_episode_key(episode, files), (episode, steps))
    return index


def _one_line(text: str, limit: int = 80) -> str:
    text = " ".join(strip_control(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_same_inputs(first: EpisodeReport, second: EpisodeReport, labels: tuple[str, str]) -> None:
    if first.instruction and second.instruction and first.instruction != second.instruction:
        raise CompareError(
            f"different recorded inputs: episode {episode_name(first)} has another instruction in "
            f"{labels[1]} ({_one_line(first.instruction, 50)!r} vs {_one_line(second.instruction, 50)!r})"
        )


def check_same_step(step_a: StepLike, step_b: StepLike, episode: str, labels: tuple[str, str]) -> None:
    if step_a.expected != step_b.expected:
        raise CompareError(
            f"different recorded inputs: episode {episode} step {step_a.step_label} expects "
            f"{_one_line(step_a.expected, 60)!r} in {labels[0]} and {_one_line(step_b.expected, 60)!r} in {labels[1]}"
        )


def as_info(value: RunInfo | Mapping[str, Any] | None, summary: SummaryReport | RunSteps, label: str) -> RunInfo:
    """A run's :class:`RunInfo` labelled ``label``: the one given, else made from its ``run`` record or report."""
    if isinstance(value, RunInfo):
        return value.model_copy(update={"label": label})
    source = str(value.get("source", "")) if isinstance(value, Mapping) else ""
    return run_info(summary, value, label=label, source=source)
