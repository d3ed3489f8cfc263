"""Big Claude Code project folders and OTLP JSON Lines files made from the real samples (issue 31).

Run by hand (``bench/bench_big_logs.py`` calls it): copies the samples under ``tests/data/formats/``
with their ids varied until the output reaches ``--size-mb``:

- ``claude-project/``: a Claude Code project folder, one ``<uuid>.jsonl`` per session, each a copy of
  a real session file whose ``sessionId`` values are replaced by the new file's uuid;
- ``otlp.jsonl``: what the OTLP JSON file exporter writes (one export a line), the real agent-loop
  exports (OpenAI instrumentation v2, OpenLLMetry, OpenInference) copied with every trace id and span
  id replaced by fresh ones.
"""

from __future__ import annotations

import argparse
import os
import re
import uuid
from pathlib import Path

import orjson

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "formats"
CLAUDE = sorted((DATA / "claude_code").glob("*.jsonl"))
OTLP = [
    DATA / "otel_genai" / "openai-v2__agent_loop.otlp.jsonl",
    DATA / "otel_genai" / "openllmetry__agent_loop.otlp.jsonl",
    DATA / "otel_genai" / "openinference__agent_loop.otlp.json",
]
_SESSION = re.compile(rb'"sessionId"\s*:\s*"([^"]+)"')
_HEX_ID = re.compile(rb'"(traceId|spanId|parentSpanId)"\s*:\s*"([0-9a-fA-F]+)"')


def claude_project(folder: Path, size: int) -> Path:
    """A project folder of about ``size`` bytes (kept when it is already there)."""
    done = folder / ".complete"
    if done.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    samples = [(path.read_bytes(), set(_SESSION.findall(path.read_bytes()))) for path in CLAUDE]
    written = copy = 0
    while written < size:
        data, ids = samples[copy % len(samples)]
        new = str(uuid.UUID(int=copy + 1, version=4))
        for old in ids:
            data = data.replace(old, new.encode())
        (folder / f"{new}.jsonl").write_bytes(data)
        written += len(data)
        copy += 1
    done.write_text(f"{copy} sessions, {written} bytes\n")
    return folder


def otlp_lines(path: Path, size: int) -> Path:
    """An OTLP JSON Lines file of about ``size`` bytes (kept when it is already there)."""
    if path.exists() and path.stat().st_size >= size:
        return path
    exports = []
    for sample in OTLP:
        lines = [orjson.dumps(orjson.loads(line)) for line in sample.read_bytes().splitlines() if line.strip()]
        exports.append(lines)
    written = copy = 0
    with path.open("wb") as out:
        while written < size:
            mapping: dict[bytes, bytes] = {}

            def fresh(match: re.Match[bytes], mapping: dict[bytes, bytes] = mapping) -> bytes:
                old = match.group(2)
                new = mapping.setdefault(old, os.urandom(len(old) // 2).hex().encode())
                return b'"' + match.group(1) + b'":"' + new + b'"'

            for line in exports[copy % len(exports)]:
                data = _HEX_ID.sub(fresh, line) + b"\n"
                out.write(data)
                written += len(data)
            copy += 1
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "replay_tui_big_logs")
    parser.add_argument("--size-mb", type=int, default=1000)
    args = parser.parse_args()
    size = args.size_mb * 1_000_000
    args.dir.mkdir(parents=True, exist_ok=True)
    print(claude_project(args.dir / f"claude-project-{args.size_mb}", size))
    print(otlp_lines(args.dir / f"otlp-{args.size_mb}.jsonl", size))


if __name__ == "__main__":
    main()
