"""Episodes as pure functions of ``(seed, session_id)``: each draws from a Random seeded by that
pair alone, so any slice of sessions is reproducible."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from replay_tui.formats.webshop_demos.synth.episode import Episode
from replay_tui.formats.webshop_demos.synth.quirks import apply_quirks


def generate_episode(session_id: int, rng: random.Random, *, quirks: bool = False) -> dict[str, Any]:
    """Generate one episode (a dict in the demo-log contract) using ``rng``.

    With ``quirks``, some decision steps get messy-but-valid field forms (string numbers, JSON-string
    arguments, empty/missing/whitespace-drifted actions); the clean content is drawn first, so it is
    the same with or without quirks.
    """
    ep = Episode(session_id, rng)
    final_reward, by_backup = ep.play()
    if quirks:
        apply_quirks(ep.trajectory, rng)
    return {
        "session_id": session_id,
        "instruction": ep.instruction,
        "_synthetic": True,
        "trajectory": ep.trajectory,
        "final_reward": final_reward,
        "success": final_reward == 1.0,
        "completed_by_backup": by_backup,
    }


def _episode_rng(seed: int, session_id: int, salt: str = "") -> random.Random:
    return random.Random(f"replay_tui.synth:{seed}:{session_id}{salt}")


def episode_of(session_id: int, seed: int, quirk_rate: float) -> dict[str, Any]:
    quirks = quirk_rate > 0 and _episode_rng(seed, session_id, ":quirks").random() < quirk_rate
    return generate_episode(session_id, _episode_rng(seed, session_id), quirks=quirks)


def iter_episodes(start: int = 0, count: int = 100, seed: int = 0, *, quirk_rate: float = 0.0) -> Iterator[dict]:
    """Yield episodes for sessions ``start .. start+count-1``.

    Each episode depends only on ``(seed, session_id)`` (and whether it is drawn as quirky, which
    depends on the same pair and ``quirk_rate``), so episode k is identical for any ``count``.
    """
    for session_id in range(start, start + count):
        yield episode_of(session_id, seed, quirk_rate)
