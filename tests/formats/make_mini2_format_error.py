"""Writes ``tests/data/formats/swe_agent/mini_v2_two_bash_blocks.traj.json`` with mini-swe-agent 2's own agent.

Not run by the tests: run it by hand in a side venv with a throwaway HOME, ``python -m venv /tmp/mini2
&& /tmp/mini2/bin/pip install mini-swe-agent && HOME=$(mktemp -d) /tmp/mini2/bin/python
make_mini2_format_error.py OUT.traj.json`` (the stored file: mini-swe-agent 2.4.6, Python 3.11).

mini's DefaultAgent, its text-based litellm model (``LitellmTextbasedModel``: its own parsing of
```mswea_bash_command blocks, its format error) whose one network call, ``_query``, answers from a
script instead of a provider, and LocalEnvironment (real shell commands in a temporary folder). The
second answer holds two blocks: mini 2 records no assistant message for it, only the format error
(the answer in its ``extra.model_response``).
"""

import sys
import tempfile
from pathlib import Path

import litellm
import yaml
from minisweagent.agents.default import DefaultAgent
from minisweagent.config import builtin_config_dir
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel

out = Path(sys.argv[1])
config = yaml.safe_load((builtin_config_dir / "mini_textbased.yaml").read_text())
answers = iter(
    [
        "THOUGHT: list the files first.\n\n```mswea_bash_command\nls\n```",
        "THOUGHT: write and show.\n\n```mswea_bash_command\necho hello > a.txt\n```\n\n"
        "```mswea_bash_command\ncat a.txt\n```",
        "THOUGHT: one command, then.\n\n```mswea_bash_command\necho hello > a.txt && cat a.txt\n```",
        "THOUGHT: done.\n\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
    ]
)


class ScriptedModel(LitellmTextbasedModel):
    def _query(self, messages, **kwargs):
        return litellm.ModelResponse(
            model="scripted", choices=[{"message": {"role": "assistant", "content": next(answers)}}]
        )


with tempfile.TemporaryDirectory() as cwd:
    model = ScriptedModel(**(config["model"] | {"model_name": "openai/scripted", "cost_tracking": "ignore_errors"}))
    agent = DefaultAgent(model, LocalEnvironment(cwd=cwd), **config["agent"], output_path=out)
    agent.run("Write hello into a.txt and show it.")
