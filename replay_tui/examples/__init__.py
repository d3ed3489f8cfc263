"""Bundled example demonstration logs (package data), so `replay-tui` works out of the box."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

EXAMPLE_NAME = "webshop_demonstrations_0-99.json"


def example_path() -> Path:
    """Path of the bundled example demo file (100 synthetic episodes, seed 0)."""
    return Path(str(resources.files(__package__).joinpath(EXAMPLE_NAME)))
