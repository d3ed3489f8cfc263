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
- ``answers_unscored.eval``: 2 questions scored by a scorer that leaves a refusal unscored
  (``Score.unscored``: the value NaN, which inspect writes as the JSON constant ``NaN``).
"""

import sys
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, choice, match, scorer
from inspect_ai.solver import TaskState, generate, multiple_choice

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


@scorer(metrics=[accuracy()])
def exact_or_unscored():
    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion.strip()
        if answer == "I cannot say":
            return Score.unscored(answer=answer, explanation="refused: left unscored")
        return Score(value=CORRECT if answer == target.text else INCORRECT, answer=answer)

    return score


unscored = Task(
    dataset=[
        Sample(id="sum", input="What is 1 + 1?", target="2"),
        Sample(id="secret", input="What is my password?", target="hunter2"),
    ],
    solver=[generate()],
    scorer=exact_or_unscored(),
)
run(unscored, ["2", "I cannot say"], "answers_unscored.eval")
