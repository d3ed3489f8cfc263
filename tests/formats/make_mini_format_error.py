"""Writes ``tests/data/formats/swe_agent/mini_v1_two_bash_blocks.traj.json`` with mini-swe-agent's own agent.

Not run by the tests (mini-swe-agent is not a dependency): run it by hand in a side venv with a
throwaway HOME (mini reads and writes its global config there), ``python -m venv /tmp/mini1 &&
/tmp/mini1/bin/pip install 'mini-swe-agent<2' && HOME=$(mktemp -d) /tmp/mini1/bin/python
make_mini_format_error.py OUT.traj.json`` (the stored file: mini-swe-agent 1.17.5, Python 3.11).

mini's DefaultAgent with its DeterministicModel and LocalEnvironment (real shell commands in a
temporary folder), its default config: the model answers with one bash block, then with two (mini's
``parse_action`` wants exactly one: a format error, nothing runs), then one again, then submits.
Saved with mini's own ``save_traj``.
"""

import sys
import tempfile
from pathlib import Path

import yaml
from minisweagent.agents.default import DefaultAgent
from minisweagent.config import builtin_config_dir
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.test_models import DeterministicModel
from minisweagent.run.utils.save import save_traj

out = Path(sys.argv[1])
config = yaml.safe_load((builtin_config_dir / "default.yaml").read_text())
outputs = [
    "THOUGHT: list the files first.\n\n```bash\nls\n```",
    "THOUGHT: create a file and show it.\n\n```bash\necho hello > a.txt\n```\n\n```bash\ncat a.txt\n```",
    "THOUGHT: one command at a time, then.\n\n```bash\necho hello > a.txt && cat a.txt\n```",
    "THOUGHT: done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
]
with tempfile.TemporaryDirectory() as cwd:
    agent = DefaultAgent(
        DeterministicModel(outputs=outputs),
        LocalEnvironment(cwd=cwd),
        **config["agent"],
    )
    exit_status, result = agent.run("Write hello into a.txt and show it.")
    save_traj(agent, out, exit_status=exit_status, result=result, print_path=False)
