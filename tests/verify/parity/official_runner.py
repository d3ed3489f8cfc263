"""Run the official ``webarena-verified`` evaluator over answer cases; executed inside its own venv.

stdin: JSON lines ``{"task_id": int, "answer": <any>, "trace": [<network events>] | null}``; with
``"untraced": true`` the task is evaluated as upstream's API is given it with no trace at all.
stdout: one JSON line per case: ``{"status": ..., "evaluators": [{"name", "status", "assertions"}]}``.

This file imports only the official package and the standard library, so it runs in the side venv
that holds ``webarena-verified`` and its pinned dependencies (which conflict with ours).

Three pure functions the package calls once per case or per URL are memoised (:func:`_memoise_pure_helpers`),
which leaves every verdict as the package computes it and quarters the runner's CPU time.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any


def _memoise_pure_helpers() -> None:
    """Upstream's JSONPath helper calls ``jsonpath_ng.ext.parse``, which builds its LALR tables with
    PLY again on every call (0.3 s each: half the runner's time over the network cases); its
    evaluator hashes the whole tasks file for every task evaluated (a checksum this runner never
    reports); its URL type runs ``url_normalize`` (IDNA-encoding every host label) twice per URL
    compared, the same few thousand URLs over and over (half of what was left over the network
    cases). All are functions of their argument alone, and the file does not change while the
    runner lives, so one computation per distinct argument gives the same results."""
    from functools import lru_cache

    from webarena_verified.api.internal import evaluator
    from webarena_verified.core.evaluation.data_types import url
    from webarena_verified.core.utils import jsonpath_utils

    jsonpath_utils.parse = lru_cache(maxsize=None)(jsonpath_utils.parse)
    evaluator.compute_data_file_checksum = lru_cache(maxsize=None)(evaluator.compute_data_file_checksum)
    normalise = lru_cache(maxsize=100_000)(url.url_normalize)
    url.url_normalize = lambda value: normalise(value)  # its one use: a URL string, twice per URL compared


def main() -> None:
    logging.disable(logging.CRITICAL)
    _memoise_pure_helpers()
    from webarena_verified.api.webarena_verified import WebArenaVerified
    from webarena_verified.types.config import WebArenaVerifiedConfig

    tasks_file = sys.argv[1]
    environments = json.loads(sys.argv[2]) if len(sys.argv) > 2 else None
    config: dict[str, Any] = {"test_data_file": tasks_file}
    if environments:
        config["environments"] = environments
    api = WebArenaVerified(config=WebArenaVerifiedConfig.model_validate(config))
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        trace = case.get("trace")
        if case.get("untraced"):  # the whole task, given no trace (as a run whose HAR is missing)
            result = api.evaluate_task(task_id=case["task_id"], agent_response=case["answer"], network_trace=None)
        elif trace is None:  # answer only: the AgentResponseEvaluator alone, as the CLI does without a trace
            result = _answer_only(api, case["task_id"], case["answer"])
        else:
            result = api.evaluate_task(task_id=case["task_id"], agent_response=case["answer"], network_trace=trace)
        out = {
            "status": str(getattr(result.status, "value", result.status)),
            "evaluators": [
                {
                    "name": r.evaluator_name,
                    "status": str(getattr(r.status, "value", r.status)),
                    "assertions": [a.assertion_name for a in (r.assertions or [])],
                    "error": r.error_msg,
                }
                for r in result.evaluators_results
            ],
            "error": result.error_msg,
        }
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def _answer_only(api: Any, task_id: int, answer: Any) -> Any:
    from pathlib import Path

    from webarena_verified.core.evaluation.evaluators import EVALUATOR_REGISTRY
    from webarena_verified.types.eval import TaskEvalContext, TaskEvalResult
    from webarena_verified.types.tracing import NetworkTrace

    task = api.get_task(task_id)
    trace = NetworkTrace.model_construct(is_playwright=False, src_file=Path("none"), events=())
    context = TaskEvalContext(task=task, agent_response_raw=answer, network_trace=trace, config=api.config)
    results = [
        EVALUATOR_REGISTRY[cfg.evaluator]().evaluate(context=context, config=cfg)
        for cfg in task.eval
        if cfg.evaluator == "AgentResponseEvaluator"
    ]
    return TaskEvalResult.create(
        task_id=task_id,
        intent_template_id=task.intent_template_id,
        sites=task.sites,
        task_revision=task.revision,
        evaluators_results=results,
        data_checksum="",
    )


if __name__ == "__main__":
    main()
