"""Writes ``tests/data/formats/inspect_ai/epochs_pair_A.eval`` and ``epochs_pair_B.eval`` with inspect_ai's
own API: two runs of one task (30 samples × 2 epochs), model A right about half the time, B about 70 %,
for the paired comparison of two logs (``compare LOG_A LOG_B``, issue 32: the bootstrap resamples a
sample with both its epochs).

Not run by the tests (inspect_ai is not a dependency): run it by hand in a side venv, ``python -m venv
/tmp/insp && /tmp/insp/bin/pip install inspect_ai && /tmp/insp/bin/python make_inspect_epochs_pair.py OUT_DIR``
(the stored files were written by inspect_ai 0.3.285 on Python 3.11). Which sample and epoch got which
answer depends on inspect's run order: the tests read the outcomes back from the files.
"""

import random
import sys
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

out = Path(sys.argv[1])
SAMPLES = 30


def outputs(rate: float, seed: int):
    """Right ("7", every sample's target) with probability ``rate``, else wrong ("8")."""
    rng = random.Random(seed)
    for _ in range(SAMPLES * 2):
        o = ModelOutput.from_content("mockllm/model", "7" if rng.random() < rate else "8")
        o.usage = ModelUsage(input_tokens=30, output_tokens=3, total_tokens=33)  # else tiktoken downloads
        yield o


TASK = Task(
    dataset=[
        Sample(id=f"q{n:02d}", input=f"Question {n}: what is 3 + 4? Reply with the number.", target="7")
        for n in range(SAMPLES)
    ],
    solver=[generate()],
    scorer=match(numeric=True),
)

for side, rate, seed in (("A", 0.5, 1), ("B", 0.7, 2)):
    model = get_model("mockllm/model", custom_outputs=outputs(rate, seed))
    [log] = inspect_eval(
        TASK, model=model, epochs=2, log_dir=str(out / f"run_{side}"), display="none", max_connections=1, max_samples=1
    )
    write_eval_log(read_eval_log(log.location), str(out / f"epochs_pair_{side}.eval"))
