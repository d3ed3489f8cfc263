"""Network checks side by side with the official evaluator (``webarena-verified`` 1.2.3, side venv).

Every network check of the 812 tasks, on synthetic HAR traces derived from its expectation (the
request it describes, then variations: status, method, path, case, a value, an extra query
parameter, a good request followed by a bad one, bodies upstream cannot read, an unrelated trace):
``--rules upstream`` gives the official verdict of every check; ``--rules strict`` differs only
where :data:`tests.verify.parity.differences.NETWORK_DIFFERENCES` says (each listed in the README).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from replay_tui.verify.evaluate import evaluate, reference_response
from replay_tui.verify.models import Task
from replay_tui.verify.network import event_from_har
from tests.verify.conftest import TASKS_FILE
from tests.verify.parity.differences import NETWORK_DIFFERENCES, explain_network_case
from tests.verify.parity.network_cases import ENVIRONMENTS, SITE_URLS, trace_cases
from tests.verify.parity.official import official_python, run_official

pytestmark = [pytest.mark.parity, pytest.mark.slow]

README = Path(__file__).resolve().parents[2] / "README.md"
SITES = {site: [url] for site, url in SITE_URLS.items()}

Case = tuple[str, int, list[dict[str, Any]], list[str]]


@pytest.fixture(scope="module")
def cases(tasks: dict[int, Task]) -> list[Case]:
    """(variation, task id, HAR entries, the official verdict of each of the task's network checks)."""
    python, why = official_python()
    if python is None:
        pytest.skip(f"the official webarena-verified package cannot be installed: {why}")
    built = [(name, tid, entries) for tid, task in tasks.items() for name, entries in trace_cases(task)]
    answers = [(tid, reference_response(tasks[tid])) for _, tid, _ in built]
    verdicts = run_official(python, TASKS_FILE, answers, ENVIRONMENTS, [entries for *_, entries in built])
    return [
        (name, tid, entries, [e["status"] for e in verdict["evaluators"] if e["name"] == "NetworkEventEvaluator"])
        for (name, tid, entries), verdict in zip(built, verdicts, strict=True)
    ]


def ours(task: Task, entries: list[dict[str, Any]], rules: str) -> list[str]:
    trace = [event_from_har(entry, i) for i, entry in enumerate(entries)]
    result = evaluate(task, reference_response(task), rules=rules, trace=trace, site_urls=SITES)  # type: ignore[arg-type]
    return [r.status for r in result.evaluators_results[1:]]


def test_upstream_rules_give_the_official_verdict_of_every_network_check(
    cases: list[Case], tasks: dict[int, Task]
) -> None:
    with_checks = {tid for tid, task in tasks.items() if "NetworkEventEvaluator" in task.other_evaluators}
    assert len(cases) > 7000 and {tid for _, tid, *_ in cases} == with_checks  # 488 tasks, 663 checks
    assert sum(len(official) for *_, official in cases) > 9000
    disagreements = [
        (name, tid, official, got)
        for name, tid, entries, official in cases
        if (got := ours(tasks[tid], entries, "upstream")) != official
    ]
    assert disagreements == []
    seen = Counter(status for *_, official in cases for status in official)
    assert seen["success"] > 3000 and seen["failure"] > 5000 and seen["error"] > 10  # every verdict exercised


def test_strict_rules_differ_only_where_documented(cases: list[Case], tasks: dict[int, Task]) -> None:
    explained: Counter[str] = Counter()
    unexplained = []
    for name, tid, entries, official in cases:
        checks = [c for c in tasks[tid].eval if c.get("evaluator") == "NetworkEventEvaluator"]
        for check, strict, theirs in zip(checks, ours(tasks[tid], entries, "strict"), official, strict=True):
            if strict == theirs:
                continue
            reason = explain_network_case(name, check["expected"]["url"], strict, theirs)
            if reason is None:
                unexplained.append((name, tid, strict, theirs))
            else:
                explained[reason] += 1
    assert unexplained == []
    assert set(explained) == set(NETWORK_DIFFERENCES)
    readme = README.read_text(encoding="utf-8")
    for name in NETWORK_DIFFERENCES:
        assert f"| `{name}` |" in readme, f"README's differences table lacks {name}"


def test_untraced_network_tasks_get_the_official_verdict(tasks: dict[int, Task]) -> None:
    """Issue 30: a task whose network check has no trace is never a success. ``--rules upstream``
    gives what the official package gives a task evaluated with no trace (an error, score 0: task 97
    with its correct distance answer among them); ``strict`` says ``unverified``."""
    python, why = official_python()
    if python is None:
        pytest.skip(f"the official webarena-verified package cannot be installed: {why}")
    networked = [tid for tid, task in tasks.items() if "NetworkEventEvaluator" in task.other_evaluators]
    chosen = sorted({97, *networked[::25]})
    wrong = {"task_type": "RETRIEVE", "status": "SUCCESS", "retrieved_data": ["nothing like it"]}
    cases = [(tid, reference_response(tasks[tid])) for tid in chosen] + [(tid, wrong) for tid in chosen[:5]]
    official = run_official(python, TASKS_FILE, cases, untraced=True)
    ours = [evaluate(tasks[tid], answer, rules="upstream") for tid, answer in cases]
    assert [(r.status, r.score) for r in ours] == [(v["status"], 0.0) for v in official]
    assert {v["status"] for v in official} == {"error"} and len(cases) > 20
    at_97 = ours[chosen.index(97)]
    assert at_97.evaluators_results[0].status == "success"  # the answer itself is right
    strict = [evaluate(tasks[tid], answer) for tid, answer in cases]
    assert [r.status for r in strict] == ["unverified"] * len(chosen) + [
        evaluate(tasks[tid], wrong).evaluators_results[0].status for tid in chosen[:5]
    ]
