"""Writes ``tests/data/formats/inspect_ai/answers_qa.eval`` and ``answers_choice.eval`` with inspect_ai's
own API: logs whose samples have no tool call (a plain answer each), for the one-decision replay.

Not run by the tests (inspect_ai is not a dependency): run it by hand in a side venv, ``python -m venv
/tmp/insp && /tmp/insp/bin/pip install inspect_ai && /tmp/insp/bin/python make_inspect_answers_eval.py OUT_DIR``
(the stored files were written by inspect_ai 0.3.285 on Python 3.11).

- ``answers_qa.eval``: 3 questions on ``mockllm/model``, ``generate()``, scored by ``match(numeric=True)``;
  the model answers 4 (right), "The answer is 10" (right: match reads the number at the end) and 8
  (wrong, the target is 9).
- ``answers_choice.eval``: 2 multiple-choice questions, ``multiple_choice()`` solver and ``choice()``
  scorer; the model answers "ANSWER: B" (right) and "ANSWER: A" (wrong, the target is C).
"""

import sys
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import choice, match
from inspect_ai.solver import generate, multiple_choice

out = Path(sys.argv[1])


def outputs(texts: list[str]):
    for text in texts:
        o = ModelOutput.from_content("mockllm/model", text)
        o.usage = ModelUsage(input_tokens=50, output_tokens=5, total_tokens=55)  # else tiktoken downloads
        yield o


def run(task: Task, texts: list[str], name: str) -> None:
    model = get_model("mockllm/model", custom_outputs=outputs(texts))
    [log] = inspect_eval(task, model=model, log_dir=str(out / "run"), display="none", max_connections=1)
    write_eval_log(read_eval_log(log.location), str(out / name))


qa = Task(
    dataset=[
        Sample(id="add", input="What is 2 + 2? Reply with the number.", target="4"),
        Sample(id="mul", input="What is 2 times 5?", target="10"),
        Sample(id="sq", input="What is the square of 3? Reply with the number.", target="9"),
    ],
    solver=[generate()],
    scorer=match(numeric=True),
)
run(qa, ["4", "The answer is 10", "8"], "answers_qa.eval")

mc = Task(
    dataset=[
        Sample(id="capital", input="The capital of France is", choices=["Lyon", "Paris", "Nice"], target="B"),
        Sample(id="planet", input="The largest planet is", choices=["Mars", "Venus", "Jupiter"], target="C"),
    ],
    solver=[multiple_choice()],
    scorer=choice(),
)
run(mc, ["ANSWER: B", "ANSWER: A"], "answers_choice.eval")
