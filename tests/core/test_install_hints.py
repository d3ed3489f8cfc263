"""Every "pip install '<project>[extra]'" hint names the project as pyproject.toml does.

The messages once said ``replay_tui[llm]`` in one place and ``replay-tui[ray]`` in another.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HINT = re.compile(r"pip install '([\w.-]+)\[(\w+)\]'")


def test_every_install_hint_spells_the_project_and_an_extra_it_has() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"])
    hints = []
    for path in [*sorted((ROOT / "replay_tui").rglob("*.py")), ROOT / "README.md"]:
        text = re.sub(r"\s*\n\s*", " ", path.read_text(encoding="utf-8"))  # hints broken over lines
        hints += [(path.name, *found) for found in HINT.findall(text)]
    assert len(hints) >= 6
    assert [hint for hint in hints if hint[1] != project["name"] or hint[2] not in extras] == []
