"""User configuration: tag labels, matching policies and key remapping, from a TOML file.

``~/.config/replay-tui/config.toml`` (or ``$XDG_CONFIG_HOME``, or ``--config PATH``)::

    labels = ["policy-bug", "data-issue", "flaky"]
    theme = "textual-light"  # the app's theme; written back when one is chosen (ctrl+p → theme)
    [match]                 # the matching policy per state (replay_tui.matching); --match overrides
    default = "exact"
    Search = "tolerant"
    [keymap]
    "stepper.next_mismatch" = "n"
    "browser.replay_all" = "ctrl+r"

Binding ids are listed on the help screen (``?``). Textual-free: the CLI reads it too.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from replay_tui.fileio import atomic_write_text, read_capped
from replay_tui.matching import MatchSettings, MatchSpecError


class Config(BaseModel):
    labels: list[str] | None = None
    """Tag labels offered by ``t`` (the built-in list when absent)."""
    match: dict[str, str] = Field(default_factory=dict)
    """Matching policy per state (``Search = "tolerant"``); ``default`` names the one for every other state."""
    keymap: dict[str, str] = Field(default_factory=dict)
    """Binding id -> keys (``"stepper.next_mismatch" = "n"``)."""
    theme: str | None = None
    """The Textual theme the apps start in (the default theme when absent or unknown)."""

    @field_validator("match")
    @classmethod
    def _known_policies(cls, value: dict[str, str]) -> dict[str, str]:
        cls._settings(value)
        return value

    @staticmethod
    def _settings(match: dict[str, str]) -> MatchSettings:
        try:
            return MatchSettings.parse(
                [policy if state == "default" else f"{state}={policy}" for state, policy in match.items()]
            )
        except MatchSpecError as exc:
            raise ValueError(str(exc).replace("--match", "[match]")) from None

    def matching(self) -> MatchSettings:
        """The ``[match]`` table as settings (``exact`` everywhere when absent)."""
        return self._settings(self.match)


class ConfigError(Exception):
    """A config file that cannot be used; one line."""


MAX_CONFIG_BYTES = 1 << 20
"""The most of a config (or state) file read: a few labels and keys are a few kilobytes."""


def _read_text(target: Path) -> str:
    """The text of a config file: a regular file (a FIFO or device would block or never end) of at
    most :data:`MAX_CONFIG_BYTES`, in UTF-8 (TOML's one encoding); else a one-line ConfigError."""
    try:
        raw = read_capped(target, MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ConfigError(f"{target}: {exc.strerror or exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        hint = " (saved as UTF-16?)" if raw[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise ConfigError(f"{target}: not UTF-8 text{hint}: byte 0x{raw[exc.start]:02X} at {exc.start}") from None


def _parse(target: Path, text: str) -> dict[str, Any]:
    """TOML ``text`` of ``target``; a one-line ConfigError (tomllib recurses once per nesting level)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{target}: {first}") from None
    except RecursionError:
        raise ConfigError(f"{target}: nested too deeply to read") from None


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
    data = _parse(target, _read_text(target))
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "config"
        raise ConfigError(f"{target}: {where}: {error['msg']}") from None


def state_path() -> Path:
    """Choices the app remembers between sessions (``state.json`` beside ``config.toml``): written by
    the app, never by hand, so the hand-written TOML keeps its comments."""
    return default_config_path().with_name("state.json")


def load_state() -> dict[str, Any]:
    """The remembered choices; an absent or unreadable file is nothing remembered (never an error)."""
    try:
        data = json.loads(read_capped(state_path(), MAX_CONFIG_BYTES))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def remember(**values: Any) -> None:
    """Add ``values`` to the remembered choices (atomically); raises OSError when it cannot be written."""
    atomic_write_text(state_path(), json.dumps({**load_state(), **values}, indent=1, sort_keys=True) + "\n")


_TABLE = re.compile(r"^\s*\[", re.MULTILINE)
_THEME = re.compile(r"^theme\s*=.*$", re.MULTILINE)


def save_theme(path: str | os.PathLike[str], theme: str) -> Path:
    """Remember ``theme`` in the config file: its top-level ``theme = ...`` line replaced (or one
    added at the top), every other line, comments included, kept as written. Written atomically,
    and only when the result reads back as the same config with the new theme (else ConfigError)."""
    target = Path(path)
    text = _read_text(target) if target.exists() else ""
    before = _parse(target, text)
    line = f"theme = {json.dumps(theme)}"  # a JSON string is a valid TOML basic string
    table = _TABLE.search(text)
    head, tables = (text[: table.start()], text[table.start() :]) if table else (text, "")
    head = _THEME.sub(lambda _: line, head, count=1) if _THEME.search(head) else f"{line}\n{head}"
    updated = head + tables
    try:
        after = tomllib.loads(updated)
    except tomllib.TOMLDecodeError:
        after = {}
    if after != {**before, "theme": theme}:
        raise ConfigError(f"{target}: theme not saved (the file's layout is not one this edit understands)")
    try:
        return atomic_write_text(target, updated)
    except OSError as exc:
        raise ConfigError(f"{target}: {exc.strerror or exc}") from None
