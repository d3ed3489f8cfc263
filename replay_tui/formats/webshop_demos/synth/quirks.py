"""Messy-but-valid field forms seen in real logs (string numbers, JSON-string arguments, empty,
missing or whitespace-drifted actions), laid over a clean episode."""

from __future__ import annotations

import json
import random
import re
from typing import Any

_QUIRKS = ("step_str", "reward_str", "done_str", "args_json", "action_empty", "action_missing", "action_ws")


def _drift(action: str, rng: random.Random) -> str:
    """Whitespace drift that normalizes back to ``action`` (strip, collapse, strip inside brackets)."""
    m = re.fullmatch(r"(\w+)\[(.*)\]", action, re.DOTALL)
    if m is None:
        return f" {action} "
    kind, arg = m.groups()
    if " " in arg and rng.random() < 0.6:
        arg = arg.replace(" ", "  ", rng.randint(1, 3))
    arg = " " * rng.randint(0, 2) + arg + " " * rng.randint(0, 2)
    out = f"{kind}[{arg}]"
    if out == action or rng.random() < 0.4:
        out = f" {out} "
    return out


def apply_quirks(trajectory: list[dict[str, Any]], rng: random.Random) -> None:
    steps = [e for e in trajectory if "step_number" in e]
    if not steps:
        return
    for quirk in rng.sample(_QUIRKS, rng.randint(2, 5)):
        chosen = [s for s in steps if rng.random() < 0.5] or [rng.choice(steps)]
        for s in chosen:
            if quirk == "step_str":
                s["step_number"] = str(s["step_number"])
            elif quirk == "reward_str":
                s["reward"] = str(float(s["reward"]))
            elif quirk == "done_str":
                s["done"] = "true" if s["done"] is True else "false"
            elif quirk == "args_json":
                if isinstance(s["llm_action_arguments"], dict):
                    s["llm_action_arguments"] = json.dumps(s["llm_action_arguments"])
            elif quirk == "action_empty":
                if "action_executed_in_env" in s:
                    s["action_executed_in_env"] = ""
            elif quirk == "action_missing":
                s.pop("action_executed_in_env", None)
            elif s.get("action_executed_in_env"):
                s["action_executed_in_env"] = _drift(s["action_executed_in_env"], rng)
