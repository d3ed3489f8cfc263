"""User configuration: tag labels and key remapping, from a TOML file.

``~/.config/replay-tui/config.toml`` (or ``$XDG_CONFIG_HOME``, or ``--config PATH``)::

    labels = ["policy-bug", "data-issue", "flaky"]
    [keymap]
    "stepper.next_mismatch" = "n"
    "browser.replay_all" = "ctrl+r"

Binding ids are listed on the help screen (``?``).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError


class Config(BaseModel):
    labels: list[str] | None = None
    keymap: dict[str, str] = Field(default_factory=dict)


class ConfigError(Exception):
    """A config file that cannot be used; one line."""


def default_config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "replay-tui" / "config.toml"


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Read the config (a missing default file is an empty config; a missing given path is an error)."""
    target = Path(path) if path is not None else default_config_path()
    if not target.exists():
        if path is not None:
            raise ConfigError(f"{target}: no such config file")
        return Config()
    try:
        return Config.model_validate(tomllib.loads(target.read_text(encoding="utf-8")))
    except (OSError, tomllib.TOMLDecodeError, ValidationError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{target}: {first}") from None
