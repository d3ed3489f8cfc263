"""The layering is checked, not promised: the core runs without Textual, and the contracts bite."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = [
    "replay_tui.runner",
    "replay_tui.env",
    "replay_tui.matching",
    "replay_tui.export",
    "replay_tui.workspace",
    "replay_tui.repeat",
    "replay_tui.batch",
    "replay_tui.visual.pipeline",
    "replay_tui.verify.evaluate",
    "replay_tui.config",
    "replay_tui.sources",
    "replay_tui.search",
    "replay_tui.stats",
    "replay_tui.gcpause",
    "replay_tui.compare",
    "replay_tui.export.comparison",
    "replay_tui.groups",
    "replay_tui.runs",
    "replay_tui.executors",
    "replay_tui.session",
]


def test_the_core_imports_without_textual() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {module}\n" for module in CORE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'textual_image'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == ""


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """Run lint-imports over the copy of the package in ``tree`` (with the project's contracts)."""
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert exe is not None, "import-linter is part of the dev extra"
    return subprocess.run(
        [exe, "--config", str(tree / "pyproject.toml"), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": str(Path(sys.executable).parent)},
    )


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("layers")
    shutil.copytree(
        ROOT / "replay_tui",
        tree / "replay_tui",
        ignore=shutil.ignore_patterns("__pycache__", "examples", "*.json", "*.html", "*.jpg"),
    )
    (tree / "replay_tui" / "examples").mkdir()
    shutil.copy(ROOT / "replay_tui" / "examples" / "__init__.py", tree / "replay_tui" / "examples")
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_contracts_hold_and_a_broken_layer_fails_them(package_copy: Path) -> None:
    kept = lint_imports(package_copy)
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-2000:]
    runner = package_copy / "replay_tui" / "runner.py"
    original = runner.read_text(encoding="utf-8")
    try:
        runner.write_text(original + "\nimport textual  # a view in the core\n", encoding="utf-8")
        broken = lint_imports(package_copy)
        assert broken.returncode != 0
        assert "replay_tui.runner is not allowed to import textual" in broken.stdout
        runner.write_text(original + "\nimport replay_tui.tui.app  # an upward arrow\n", encoding="utf-8")
        upward = lint_imports(package_copy)
        assert upward.returncode != 0
        assert "replay_tui.runner is not allowed to import replay_tui.tui" in upward.stdout
    finally:
        runner.write_text(original, encoding="utf-8")


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("search.py", "replay_tui.formats.webshop_demos.reader"),  # past the package's exports
        ("session.py", "replay_tui.formats.webshop_demos.synth.writer"),  # the generator beyond `generate`
        ("runner.py", "replay_tui.formats.webshop_demos.contract"),  # the seed's contract, one importer more
        ("env.py", "replay_tui.formats.webshop_demos.contract"),  # the engine reads episodes, not the contract
        ("env.py", "replay_tui.formats.webshop_demos.fast"),  # the fast reading through episodes.reading
        ("sources.py", "replay_tui.formats.webshop_demos.index"),  # DemoFile through the package
        ("workspace.py", "replay_tui.formats.webshop_demos.trajectory"),  # engines read Trajectories
        ("search.py", "replay_tui.formats.webshop_demos"),  # search reads the model's typed fields
        ("tui/replay/step_panes.py", "replay_tui.formats.webshop_demos"),  # so do the stepper's panes
        ("tui/replay/browser.py", "replay_tui.formats.webshop_demos"),  # and the browser's rows
    ],
)
def test_the_seed_format_stays_behind_its_package(package_copy: Path, importer: str, imported: str) -> None:
    module = package_copy / "replay_tui" / importer
    original = module.read_text(encoding="utf-8")
    try:
        module.write_text(original + f"\nimport {imported}\n", encoding="utf-8")
        broken = lint_imports(package_copy)
    finally:
        module.write_text(original, encoding="utf-8")
    assert broken.returncode != 0
    module_name = "replay_tui." + importer.removesuffix(".py").replace("/", ".")
    assert f"{module_name} -> {imported}" in broken.stdout, broken.stdout[-3000:]
