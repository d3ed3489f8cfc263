"""Logs, a sidecar and a cassette whose every text carries terminal sequences (the escapes tests' corpus).

Each text is ``tag<...>tag`` around OSC 0/2 (retitle), OSC 52 (clipboard), OSC 8 (link), CSI (clear,
colours), DCS (tmux passthrough), ``ESC k`` (tmux window name) and an 8-bit OSC; whatever of a
sequence reaches the screen names ``PWNED``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from replay_tui.examples import example_path

CLIP = base64.b64encode(b"PWNED-CLIPBOARD").decode()


def hostile(tag: str) -> str:
    """``tag`` wrapped in every class of sequence (7- and 8-bit), each naming ``tag`` when it lands."""
    return (
        f"{tag}<\x1b]0;PWNED-{tag}\x07\x1b]2;PWNED2-{tag}\x1b\\\x1b]52;c;{CLIP}\x07\x1b]52;p;{CLIP}\x1b\\"
        f"\x1b]8;;http://evil.example/{tag}\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x1b[31mred\x1b[0m"
        f"\x1bPtmux;\x1b\x1b]0;PWNED-DCS-{tag}\x07\x1b\\\x1bkPWNED-WIN-{tag}\x1b\\\x9d0;PWNED-C1-{tag}\x9c>{tag}"
    )


SHORT = f"\x1b]0;PWNED-NAME\x07\x1b]52;c;{CLIP}\x07\x1bkPWNED-WIN\x1b\\"
"""For file and folder names (255 bytes at most): title, clipboard, window name."""


def hostile_demos(folder: Path) -> Path:
    episodes = json.loads(example_path().read_text())[:3]
    for episode in episodes:
        episode["instruction"] = hostile("instruction")
        for number, step in enumerate(episode["trajectory"]):
            step["state"] = hostile("state")  # the tool name the stepper drew raw
            step["llm_thinking"] = hostile("thinking")
            if "observation_before_llm" in step:
                step["observation_before_llm"] = hostile("observation") + "\n" + step["observation_before_llm"]
                step["observation_after_action"] = hostile("after")
            step["llm_action_name"] = hostile("action") if number else step["llm_action_name"]
            if step.get("type"):
                step["type"] = hostile("type")
    path = folder / f"demos{SHORT}.json"
    path.write_text(json.dumps(episodes))
    return path


def hostile_chat(folder: Path) -> Path:
    """An OpenAI chat transcript: episode id, task, messages, tool name, tool result, reasoning."""
    record = {
        "id": hostile("episode"),
        "metadata": {"instruction": hostile("task")},
        "messages": [
            {"role": "system", "content": hostile("system")},
            {"role": "user", "content": hostile("user")},
            {
                "role": "assistant",
                "content": hostile("content"),
                "reasoning_content": hostile("reasoning"),
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {
                            "name": hostile("tool"),
                            "arguments": json.dumps({"city": "Paris"}),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": hostile("result")},
        ],
    }
    path = folder / "chat.jsonl"
    path.write_text(json.dumps(record) + "\n")
    return path


def hostile_sidecar(path: Path) -> None:
    labels = [hostile("label"), "plain"]
    annotations = [
        {"session_id": 0, "step_label": None, "tags": [hostile("tag")], "note": hostile("note")},
        {"session_id": 0, "step_label": "0", "tags": [hostile("steptag")], "note": hostile("stepnote")},
    ]
    path.write_text(json.dumps({"version": 1, "labels": labels, "annotations": annotations}))


def hostile_cassette(path: Path) -> None:
    header = {"format": "replay-tui-llm-cassette", "version": 2, "model": hostile("model")}
    path.write_text(json.dumps(header) + "\n")
