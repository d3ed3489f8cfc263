"""Writes ``tests/data/formats/inspect_ai/zstd_tools.eval`` (and its deflate twin ``zstd_tools_deflate.eval``)
with inspect_ai's own API.

Not run by the tests (inspect_ai is not a dependency): run it by hand in a side venv, ``python -m venv
/tmp/insp && /tmp/insp/bin/pip install inspect_ai && /tmp/insp/bin/python make_inspect_zstd_eval.py OUT_DIR``
(the stored files were written by inspect_ai 0.3.285 on Python 3.11).
A 3-sample task on the ``mockllm/model`` provider: each sample calls a ``lookup`` tool twice, then
answers; scored with ``includes()``. inspect_ai >= 0.3.206 writes the zip's members with zstd
(method 93) by default; the twin is the same log re-written with deflate (what older releases wrote),
so a test can check both read the same.
"""

import sys
import zipfile
from pathlib import Path

import inspect_ai._util.zipfile as izf  # the compression every member is written with
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool

out = Path(sys.argv[1])


@tool
def lookup():
    async def execute(query: str) -> str:
        """Look up records.

        Args:
            query: what to look up
        """
        return f"records for {query}: 3 flights, 1 refund"

    return execute


def outputs():
    while True:
        for c in range(2):
            o = ModelOutput.for_tool_call("mockllm/model", "lookup", {"query": f"q{c}"}, content=f"looking up q{c}")
            o.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)  # else tiktoken downloads
            yield o
        o = ModelOutput.from_content("mockllm/model", "ANSWER: 3 flights")
        o.usage = ModelUsage(input_tokens=200, output_tokens=5, total_tokens=205)
        yield o


task = Task(
    dataset=[Sample(input=f"Question {i}: how many flights?", target="ANSWER") for i in range(3)],
    solver=[use_tools(lookup()), generate()],
    scorer=includes(),
)
[log] = inspect_eval(
    task, model=get_model("mockllm/model", custom_outputs=outputs()), log_dir=str(out / "run"), display="none"
)
log = read_eval_log(log.location)
write_eval_log(log, str(out / "zstd_tools.eval"))
izf.zipfile_compress_kwargs.update(compression=zipfile.ZIP_DEFLATED, compresslevel=6)
write_eval_log(log, str(out / "zstd_tools_deflate.eval"))
