"""Batch inference for LLM replays: export every request of a run as an OpenAI Batch file, import the
answers into the response cache, then replay on cache hits alone.

A teacher-forced replay knows every request before any answer: each step is asked on its own
recorded input (its prompt never depends on an earlier prediction), so the requests are those
:mod:`replay_tui.repeat` asks, one per recorded step (and sample). :func:`export_requests` builds
them with the very :class:`~replay_tui.policies.llm.LlmPolicy` a replay uses (same bodies, same
keys) and writes one line per distinct request::

    {"custom_id": <cache key>, "method": "POST", "url": "/v1/chat/completions", "body": {...}}

The ``custom_id`` is the endpoint-scoped key the cache stores the answer under, so the answers count
for the ``--base-url`` given at export (OpenAI's own when none is). :func:`import_results` reads the
OpenAI Batch output (``vllm run-batch`` writes the same shape)::

    {"id": ..., "custom_id": ..., "response": {"status_code": 200, "body": {...}}, "error": null}

and stores each answer as a cache entry; a line that is not such an answer is reported by its number
(and left out, so a later replay asks for it), the others are imported.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from replay_tui.env import replay_steps
from replay_tui.episodes.collection import EpisodeSet
from replay_tui.episodes.problems import EpisodeLoadError, LoadProblem
from replay_tui.fileio import atomic_writer, bounded_lines
from replay_tui.formats.base import strip_bom
from replay_tui.policies.base import call_policy
from replay_tui.policies.cache import canonical_json
from replay_tui.policies.llm import MAX_RESPONSE_BYTES, LlmPolicy, LlmSettings
from replay_tui.policies.llm_cache import ResponseCache
from replay_tui.sanitize import excerpt

BATCH_URL = "/v1/chat/completions"
KEY_PATTERN = re.compile(r"[0-9a-f]{64}")
MAX_LINE_BYTES = MAX_RESPONSE_BYTES + 2**20
"""A result line is one answer (at most 16 MiB, as from a server) and its envelope."""


class _Offline:
    """The client of an exporting policy: it must never be called (the export sends nothing)."""

    base_url = None


class _Collector(LlmPolicy):
    """An LlmPolicy that builds each request and hands it to ``sink`` instead of sending it."""

    def __init__(self, settings: LlmSettings, sink: Callable[[str, dict[str, Any]], None]):
        super().__init__(settings, client=_Offline(), cache=False, record=None, replay=None)
        self._sink = sink

    def exchange(self, request: dict[str, Any], *, sample: int = 0) -> tuple[str, dict[str, Any], str]:
        key = self.key_for(request, sample)
        self._sink(self.cache_key(key), request)
        failure = {"kind": "not_recorded", "message": "exported for batch inference, not asked", "raw": None}
        return key, {"outcome": "failure", "failure": failure, "latency_ms": 0.0, "attempts": 0}, "off"


@dataclass
class ExportCounts:
    """What an export wrote: distinct requests, steps asked (times samples), requests left out because
    the cache answers them, and malformed episodes."""

    requests: int = 0
    asked: int = 0
    cached: int = 0
    episodes: int = 0
    problems: list[LoadProblem] = field(default_factory=list)
    endpoint: str = ""


def batch_line(custom_id: str, body: Mapping[str, Any]) -> bytes:
    """One OpenAI Batch input line (keys sorted, so the same run exports the same bytes)."""
    return canonical_json({"body": dict(body), "custom_id": custom_id, "method": "POST", "url": BATCH_URL}) + b"\n"


def export_requests(
    settings: LlmSettings | Mapping[str, Any],
    demos: EpisodeSet,
    session_ids: Iterable[int] | None,
    out: str | os.PathLike[str],
    *,
    include_item_steps: bool = False,
    samples: int = 1,
    missing_only: bool = False,
    on_episode: Callable[[int | LoadProblem], None] | None = None,
    cancel: threading.Event | None = None,
) -> ExportCounts:
    """Write the requests of an LLM replay of ``session_ids`` (every recorded step, ``samples``
    times as ``--repeat`` asks them) to ``out`` as OpenAI Batch JSONL, each distinct request once, in
    replay order; nothing is sent. The file is written atomically.

    ``missing_only`` leaves out what the response cache (``settings.cache_dir``) already answers, as
    the replay would take it: after an import that skipped some lines, the requests to send again."""
    llm = LlmSettings.from_dict(settings.to_dict() if isinstance(settings, LlmSettings) else dict(settings))
    cache = ResponseCache(llm.cache_dir) if missing_only else None
    counts = ExportCounts()
    seen: set[str] = set()
    with atomic_writer(out) as handle:

        def sink(custom_id: str, body: dict[str, Any]) -> None:
            counts.asked += 1
            if custom_id in seen:
                return
            seen.add(custom_id)
            if cache is not None and cache.answer(custom_id, retry_failures=llm.retry_failures) is not None:
                counts.cached += 1
                return
            handle.write(batch_line(custom_id, body))
            counts.requests += 1

        policy = _Collector(llm, sink)
        counts.endpoint = policy.endpoint
        for session_id in session_ids if session_ids is not None else demos.session_ids:
            if cancel is not None and cancel.is_set():
                break
            try:
                episode = demos.trajectory(session_id)
            except EpisodeLoadError as exc:
                counts.problems.append(exc.problem)
                if on_episode is not None:
                    on_episode(exc.problem)
                continue
            for step in replay_steps(episode, include_item_steps=include_item_steps):
                for sample in range(samples):
                    call_policy(policy, step, pass_step=True, sample=sample)
            counts.episodes += 1
            if on_episode is not None:
                on_episode(session_id)
    return counts


@dataclass
class ImportReport:
    """What an import stored, and each line it could not use (line number, one-line reason)."""

    imported: int = 0
    lines: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)


def result_entry(record: Any, source: str) -> tuple[str, dict[str, Any]]:
    """``(custom_id, cache entry)`` of one Batch output record; raises ValueError with the reason."""
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    custom_id = record.get("custom_id")
    if not isinstance(custom_id, str) or not custom_id:
        raise ValueError("no custom_id")
    label = f"custom_id {excerpt(custom_id, 20)}"
    if not KEY_PATTERN.fullmatch(custom_id):
        raise ValueError(f"{label} is not a replay-tui cache key (export requests with replay-tui batch export)")
    error = record.get("error")
    if error:
        detail = error.get("message") or error.get("code") if isinstance(error, dict) else error
        raise ValueError(f"{label}: the batch failed this request: {excerpt(str(detail), 200)}")
    response = record.get("response")
    if not isinstance(response, dict):
        raise ValueError(f"{label}: no response")
    status = response.get("status_code")
    body = response.get("body")
    if status != 200:
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        if not isinstance(message, str):
            message = ""
        raise ValueError(f"{label}: HTTP {status}" + (f": {excerpt(message, 200)}" if message else ""))
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        raise ValueError(f"{label}: the response body is not a chat completion (no choices)")
    batch = {"id": record.get("id"), "file": source}
    request_id = response.get("request_id")
    if request_id is not None:
        batch["request_id"] = request_id
    return custom_id, {"outcome": "response", "response": body, "latency_ms": 0.0, "attempts": 1, "batch": batch}


def import_results(path: str | os.PathLike[str], cache: ResponseCache) -> ImportReport:
    """Store every answer of an OpenAI Batch (or ``vllm run-batch``) output file in ``cache``; lines
    that are not answers are reported, not stored. Raises OSError when the file cannot be read."""
    source = Path(path)
    report = ImportReport()
    with source.open("rb") as handle:
        for number, line in bounded_lines(handle, MAX_LINE_BYTES):
            if line is None:
                report.lines += 1
                report.errors.append((number, f"longer than {MAX_LINE_BYTES // 2**20} MiB"))
                continue
            if not line.strip():
                continue
            report.lines += 1
            try:
                record = orjson.loads(strip_bom(line) if number == 1 else line)
            except orjson.JSONDecodeError:
                report.errors.append((number, "not JSON"))
                continue
            try:
                key, entry = result_entry(record, source.name)
            except ValueError as exc:
                report.errors.append((number, str(exc)))
                continue
            cache.put(key, entry)
            report.imported += 1
    cache.flush()
    return report
