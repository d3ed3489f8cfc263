"""A very large inspect_ai ``.eval`` (100,000 samples and more) written by inspect_ai's own recorder (issue 31).

``../shared/peer_bench/gen_inspect_eval.py`` builds the whole ``EvalLog`` in memory before
``write_eval_log``: past ~20,000 samples that no longer fits in memory. This does what inspect_ai's
own ``write_eval_log`` does (``EvalRecorder``: ``log_init``, ``log_start``, ``log_sample`` per sample,
``log_finish``) with the samples made one at a time and written in batches of 1,000 (as an eval run's
log buffer does: each batch's summaries journalled, ``summaries.json`` consolidated at the end), so
memory stays flat. Same template as the peer script: a real 20-sample ``mockllm/model`` task, each
sample 9 ``lookup`` tool calls then an answer, copied with new ids and their messages' texts varied
(the copies share their template's condensed events: a deep copy and a condense per sample cost
~25 ms of CPU each, hours at 100,000).

Run with a python that has inspect_ai (a peer venv, not this project's)::

    /tmp/insp/bin/python bench/gen_big_eval.py /tmp/evalbench 100000
"""

import asyncio
import random
import sys
import uuid
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.log._condense import condense_sample
from inspect_ai.log._recorders.eval import EvalRecorder
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool

TEMPLATE_SAMPLES, CALLS, BATCH = 20, 9, 1000
rng = random.Random(0)
WORDS = (
    "flight booking refund seat airport delay baggage reservation passenger itinerary layover "
    "policy agent confirm change cancel economy business membership gold silver payment"
).split()


def text(k: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(k))


@tool
def lookup():  # type: ignore[no-untyped-def]
    async def execute(query: str) -> str:
        """Look up records.

        Args:
            query: what to look up
        """
        lines = (f"- record {i}: {text(rng.randint(10, 40))}" for i in range(rng.randint(5, 20)))
        return f"results for {query}:\n" + "\n".join(lines)

    return execute


def outputs():  # type: ignore[no-untyped-def]
    while True:
        for c in range(CALLS):
            o = ModelOutput.for_tool_call(
                "mockllm/model", "lookup", {"query": text(6)}, content=text(rng.randint(10, 60))
            )
            o.usage = ModelUsage(input_tokens=1000 + 300 * c, output_tokens=60, total_tokens=1060 + 300 * c)
            yield o
        o = ModelOutput.from_content("mockllm/model", "ANSWER: " + text(20))
        o.usage = ModelUsage(input_tokens=4000, output_tokens=30, total_tokens=4030)
        yield o


def vary(value: object) -> object:
    if isinstance(value, str) and len(value) > 40:
        words = value.split(" ")
        for _ in range(max(1, len(words) // 8)):
            words[rng.randrange(len(words))] = rng.choice(WORDS)
        return " ".join(words)
    return value


async def write(log, n: int, out: Path) -> None:  # type: ignore[no-untyped-def]
    templates = [condense_sample(s) for s in log.samples]  # condensed once; copies share their events
    log.samples = None
    log.eval.dataset.samples = n
    log.eval.dataset.sample_ids = list(range(1, n + 1))
    if log.results is not None:
        log.results.total_samples = log.results.completed_samples = n
    recorder = EvalRecorder(str(out.parent))
    await recorder.log_init(log.eval, str(out), clean=True)
    await recorder.log_start(log.eval, log.plan)
    zip_log = recorder.data[recorder._log_file_key(log.eval)]
    for i in range(n):
        template = templates[i % len(templates)]
        messages = [
            m.model_copy(update={"content": vary(m.content)}) if isinstance(m.content, str) else m
            for m in template.messages
        ]
        uid = uuid.UUID(int=rng.getrandbits(128)).hex
        await recorder.log_sample(
            log.eval, template.model_copy(update={"id": i + 1, "uuid": uid, "messages": messages})
        )
        if (i + 1) % BATCH == 0:
            await zip_log.write_buffered_samples()
            print(i + 1, "samples", flush=True)
    await recorder.log_finish(log.eval, log.status, log.stats, log.results, log.reductions, log.error)


def main() -> None:
    outdir, n = Path(sys.argv[1]), int(sys.argv[2])
    task = Task(
        dataset=[Sample(input=f"Question {i}: " + text(80), target="ANSWER") for i in range(TEMPLATE_SAMPLES)],
        solver=[use_tools(lookup()), generate()],
        scorer=includes(),
    )
    [done] = inspect_eval(
        task,
        model=get_model("mockllm/model", custom_outputs=outputs()),
        log_dir=str(outdir / "template"),
        max_samples=1,
        display="none",
    )
    log = read_eval_log(done.location)
    out = outdir / f"inspect_{n}_zstd.eval"
    asyncio.run(write(log, n, out))
    print(out, out.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
