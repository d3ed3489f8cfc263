"""Benchmark: reading a big OpenAI chat-transcript JSONL with the openai-chat reader.

Run by hand (not in CI):

    python bench/bench_formats.py                  # writes bench/data/openai_chat_200mb.jsonl once
    python bench/bench_formats.py --size-mb 1000   # the issue's ~1 GB file

Prints, for the same file: the reader streaming every trajectory (steps, prompts, tool calls
built), the naive baseline (``json.loads`` per line plus building the same pydantic models with
``model_validate``), and the seed format's loader on a demo file of the same size (index only:
what opening the session browser costs), with peak RSS for each, each phase in its own
subprocess. The issue's target is the browsable list within 1.5x of the seed format's time;
the reader today builds every episode, which is the gap the next step (a lazy JSONL index) closes.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "n": {"type": "integer"}}},
        },
    }
    for name in ("search_flights", "book_flight", "get_user", "cancel_booking")
]
WORDS = "flight booking user cancel refund seat window aisle economy business airport delay baggage".split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def transcript(rng: random.Random, index: int) -> dict[str, object]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are an airline agent. " + _text(rng, 80)},
        {"role": "user", "content": _text(rng, 30)},
    ]
    for turn in range(rng.randint(4, 12)):
        call_id = f"call_{index}_{turn}"
        tool = rng.choice(TOOLS)["function"]["name"]  # type: ignore[index]
        messages.append(
            {
                "role": "assistant",
                "content": _text(rng, 12),
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": tool,
                            "arguments": json.dumps({"query": _text(rng, 4), "n": rng.randint(1, 9)}),
                        },
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": _text(rng, 60)})
    messages.append({"role": "assistant", "content": _text(rng, 20)})
    return {"id": f"run-{index}", "messages": messages, "tools": TOOLS, "reward": rng.choice([0.0, 1.0])}


def write_transcripts(path: Path, size: int) -> None:
    rng = random.Random(0)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = index = 0
    with path.open("w", encoding="utf-8") as out:
        while written < size:
            line = json.dumps(transcript(rng, index)) + "\n"
            out.write(line)
            written += len(line.encode())
            index += 1


def write_demos(path: Path, size: int) -> None:
    from replay_tui.demos import synth

    synth.write_demo_file(path, start=0, count=1, seed=0, quirk_rate=0.1, target_bytes=size, indent=False)


def phase(name: str, path: Path) -> None:
    """One measured phase, in this process: prints ``seconds episodes steps``."""
    start = time.perf_counter()
    episodes = steps = 0
    if name == "reader":
        from replay_tui.formats import read_trajectories
        from replay_tui.trajectory import Trajectory

        for item in read_trajectories(path, "openai-chat"):
            if isinstance(item, Trajectory):
                episodes += 1
                steps += len(item.steps)
    elif name == "naive":
        from replay_tui.trajectory import ChatMessage, ToolCall, Trajectory, TrajectoryStep

        with path.open("rb") as handle:
            for line in handle:
                record = json.loads(line)
                messages = [ChatMessage.model_validate({**m, "tool_calls": []}) for m in record["messages"]]
                built = []
                for position, message in enumerate(record["messages"]):
                    for call in message.get("tool_calls") or []:
                        built.append(
                            TrajectoryStep(
                                index=len(built),
                                messages=messages[:position],
                                action=ToolCall(
                                    name=call["function"]["name"], arguments=json.loads(call["function"]["arguments"])
                                ),
                            )
                        )
                        break
                Trajectory(id=record["id"], format="naive", steps=built)
                episodes += 1
                steps += len(built)
    elif name == "seed_index":
        from replay_tui.demos.loader import open_demos

        demos = open_demos([path])
        episodes = len(demos.refs)
    print(f"{time.perf_counter() - start:.3f} {episodes} {steps} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}")


def run_phase(name: str, path: Path) -> tuple[float, int, int, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--phase", name, str(path)], capture_output=True, text=True, check=True
    )
    seconds, episodes, steps, rss_kb = done.stdout.split()
    return float(seconds), int(episodes), int(steps), int(rss_kb) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=200)
    parser.add_argument("--phase")
    parser.add_argument("file", nargs="?")
    args = parser.parse_args()
    if args.phase:
        phase(args.phase, Path(args.file))
        return
    size = args.size_mb * 1_000_000
    transcripts = HERE / "data" / f"openai_chat_{args.size_mb}mb.jsonl"
    demos = HERE / "data" / f"webshop_demonstrations_{args.size_mb}mb.json"
    if not transcripts.exists():
        write_transcripts(transcripts, size)
    if not demos.exists():
        write_demos(demos, size)
    reader = run_phase("reader", transcripts)
    naive = run_phase("naive", transcripts)
    seed = run_phase("seed_index", demos)
    mb = transcripts.stat().st_size / 1e6
    print(f"{mb:.0f} MB OpenAI transcript JSONL, {reader[1]:,} episodes, {reader[2]:,} steps")
    print(f"  openai-chat reader (every episode built): {reader[0]:7.2f} s  peak RSS {reader[3]:6.0f} MB")
    print(f"  naive json.loads + models:                {naive[0]:7.2f} s  peak RSS {naive[3]:6.0f} MB")
    print(f"  seed format, same size, index (browser):  {seed[0]:7.2f} s  peak RSS {seed[3]:6.0f} MB")
    print(f"  reader / naive: {reader[0] / naive[0]:.2f}x   reader / seed index: {reader[0] / seed[0]:.1f}x")


if __name__ == "__main__":
    main()
