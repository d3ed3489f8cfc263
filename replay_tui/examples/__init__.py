"""Bundled example demonstration logs (package data), so `replay-tui` works out of the box."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

EXAMPLE_NAME = "webshop_demonstrations_0-99.json"


def example_path() -> Path:
    """Path of the bundled example demo file (100 synthetic episodes, seed 0)."""
    return Path(str(resources.files(__package__).joinpath(EXAMPLE_NAME)))


def verify_example_paths() -> tuple[Path, Path]:
    """The bundled ``replay-tui verify`` example: (tasks.json, answers.jsonl); 7 WebArena-Verified
    tasks and answers of which 5 succeed and 2 fail (see verify/PROVENANCE.md)."""
    folder = Path(str(resources.files(__package__).joinpath("verify")))
    return folder / "tasks.json", folder / "answers.jsonl"
