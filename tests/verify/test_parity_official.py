"""Side by side with the official evaluator (``webarena-verified`` 1.2.3, in a side venv).

- Every generated answer to the 812 tasks (expected answers, alternative combinations, format
  variations, invalid transforms): ``--rules upstream`` gives the official verdict on every case;
  ``--rules strict`` differs only where :mod:`tests.verify.parity.differences` documents it.
- Property-based (hypothesis): answers generated per data type against one-type tasks, same rule.
- Each documented difference is shown on a concrete case, through the official package.

The official package pins versions of pydantic, python-dateutil, url-normalize, ... that conflict
with this project's, so it runs in its own venv (see :mod:`tests.verify.parity.official`); the tests
are skipped, saying why, only when that venv cannot be made.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replay_tui.verify.evaluate import evaluate, reference_response
from replay_tui.verify.models import Task, load_tasks, parse_tasks
from tests.verify.conftest import TASKS_FILE
from tests.verify.parity.cases import all_cases
from tests.verify.parity.differences import DIFFERENCES, explain_task_case, explain_typed_case
from tests.verify.parity.official import OfficialSession, official_python, run_official
from tests.verify.parity.typed import EXPECTED, answers, synthetic_tasks

pytestmark = [pytest.mark.parity, pytest.mark.slow]

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def official() -> str:
    python, why = official_python()
    if python is None:
        pytest.skip(f"the official webarena-verified package cannot be installed: {why}")
    return python


def answer_verdict(task: Task, answer: Any, rules: str = "strict") -> str:
    """The verdict of ``answer``'s check alone, what the official runner's answer-only evaluation
    gives (without a trace a task with network checks is unverified or an error as a whole: see
    :func:`test_untraced_network_tasks_get_the_official_verdict`)."""
    return evaluate(task, answer, rules=rules).evaluators_results[0].status  # type: ignore[arg-type]


def _plain(answer: Any) -> Any:
    return json.loads(json.dumps(answer))  # what an agent writes: no shared objects


@pytest.fixture(scope="module")
def task_cases(official: str, tasks: dict[int, Task]) -> list[tuple[str, int, Any, str]]:
    cases = [(name, tid, _plain(answer)) for name, tid, answer in all_cases(tasks)]
    verdicts = run_official(official, TASKS_FILE, [(tid, answer) for _, tid, answer in cases])
    return [(name, tid, answer, v["status"]) for (name, tid, answer), v in zip(cases, verdicts, strict=True)]


def test_upstream_rules_agree_on_every_generated_case(
    task_cases: list[tuple[str, int, Any, str]], tasks: dict[int, Task]
) -> None:
    assert len(task_cases) > 25_000
    disagreements = [
        (name, tid, official, ours)
        for name, tid, answer, official in task_cases
        if (ours := answer_verdict(tasks[tid], answer, "upstream")) != official
    ]
    assert disagreements == []
    seen = Counter(official for *_, official in task_cases)
    assert seen["success"] > 1000 and seen["failure"] > 10_000 and seen["error"] > 1000  # all verdicts exercised


def test_strict_rules_differ_only_where_documented(
    task_cases: list[tuple[str, int, Any, str]], tasks: dict[int, Task]
) -> None:
    explained: Counter[str] = Counter()
    unexplained = []
    for name, tid, answer, official in task_cases:
        strict = answer_verdict(tasks[tid], answer)
        if strict == official:
            continue
        reason = explain_task_case(name, tid, strict, official)
        if reason is None:
            unexplained.append((name, tid, strict, official))
        else:
            explained[reason] += 1
    assert unexplained == []
    assert set(explained) == {
        "task-319",
        "agent-pattern",
        "agent-alternatives",
        "status-not-text",
        "fence-tag",
        "no-data-task-error",
    }


@pytest.fixture(scope="module")
def typed(official: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[int, Task], Any]]:
    real = json.loads(TASKS_FILE.read_text(encoding="utf-8"))
    raw, ids = synthetic_tasks(real)
    path = tmp_path_factory.mktemp("typed") / "tasks.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    session = OfficialSession(official, path)
    yield session, parse_tasks(raw), ids
    session.close()


@pytest.mark.parametrize("type_name", sorted(EXPECTED))
def test_generated_answers_per_type(type_name: str, typed: tuple[Any, dict[int, Task], Any]) -> None:
    session, tasks, ids = typed
    unexplained: list[Any] = []

    # derandomized: the same examples in every run (CI verdicts must not depend on the seed);
    # run with --hypothesis-seed=N and derandomize off to explore further
    @settings(max_examples=12, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.lists(answers(type_name), min_size=40, max_size=40))
    def check(items: list[Any]) -> None:
        cases = [
            (tid, _plain({"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": [item]}))
            for item in items
            for tid in ids[type_name]
        ]
        for (tid, answer), verdict in zip(cases, session.judge(cases), strict=True):
            official = verdict["status"]
            assert evaluate(tasks[tid], answer, rules="upstream").status == official, (tid, answer)
            strict = evaluate(tasks[tid], answer).status
            if strict != official:
                expected = tasks[tid].agent_response_config.retrieved_data[0]  # type: ignore[index]
                item = answer["retrieved_data"][0]
                if explain_typed_case(type_name, expected, item, strict, official) is None:
                    unexplained.append((expected, item, strict, official))

    check()
    assert unexplained == []


# (documented difference, tasks ("real" or a typed name and index), answer, strict verdict, official verdict)
DEMONSTRATIONS: list[tuple[str, tuple[str, int], Any, str, str]] = [
    ("agent-pattern", ("real", 231), {"retrieved_data": ["^.*$"]}, "failure", "success"),
    (
        "agent-alternatives",
        ("real", 3),
        {"retrieved_data": ["Quest Lumaflex Band", ["Sprite Stasis Ball 65 cm", "Yoga Mat"]]},
        "failure",
        "success",
    ),
    ("task-319", ("real", 319), {}, "success", "failure"),
    ("no-data-task-error", ("real", 8), {"retrieved_data": ["somewhere"]}, "failure", "error"),
    ("status-not-text", ("real", 108), {"status": None}, "failure", "error"),
    ("fence-tag", ("real", 108), "```JSON", "success", "failure"),
    ("greedy-lists", ("greedy", 0), {"retrieved_data": ["a", "b"]}, "success", "failure"),
    ("circular-empty-lists", ("circular", 0), {"retrieved_data": [{"a": [], "b": []}]}, "success", "error"),
    ("currency-thousands", ("currency", 0), {"retrieved_data": ["$1,000"]}, "success", "failure"),
    ("first-alternative-only", ("currency", 3), {"retrieved_data": [20]}, "success", "failure"),
    ("coordinates-hemisphere", ("coordinates", 1), {"retrieved_data": ["40.7128 N, 74.0060 W"]}, "success", "failure"),
    ("string-falsy", ("string", 1), {"retrieved_data": [0]}, "success", "failure"),
    ("month-boolean", ("month", 0), {"retrieved_data": [True]}, "failure", "success"),
    ("string-list-non-text", ("string_list", 2), {"retrieved_data": [5]}, "failure", "success"),
    ("distance-arithmetic", ("distance", 1), {"retrieved_data": ["1/2 km"]}, "failure", "success"),
    ("null-empty-list", ("null", 0), {"retrieved_data": [[]]}, "success", "failure"),
    ("urls-need-site-urls", ("url", 0), {"retrieved_data": ["__GITLAB__/a/b"]}, "success", "error"),
    ("date-default", ("date-this-year", 0), {"retrieved_data": ["March 2"]}, "failure", "success"),
]


def test_every_documented_difference_is_demonstrated_and_in_the_readme(
    official: str, typed: tuple[Any, dict[int, Task], Any], tasks: dict[int, Task]
) -> None:
    session, typed_tasks, ids = typed
    assert sorted(d[0] for d in DEMONSTRATIONS) == sorted(DIFFERENCES)
    real_cases: list[tuple[int, Any]] = []
    rows = []
    for name, (where, index), change, strict, upstream in DEMONSTRATIONS:
        if where == "real":
            task = tasks[index]
            base = reference_response(task)
        else:
            task = typed_tasks[ids[where][index]]
            base = {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": None}
        if change == "```JSON":
            answer: Any = "```JSON\n" + json.dumps(base) + "\n```"
        else:
            answer = _plain(base | change)
        rows.append((name, where, task, answer, strict, upstream))
        real_cases.append((task.task_id, answer))
    real_verdicts = run_official(
        official, TASKS_FILE, [c for c, row in zip(real_cases, rows, strict=True) if row[1] == "real"]
    )
    typed_verdicts = session.judge([c for c, row in zip(real_cases, rows, strict=True) if row[1] != "real"])
    verdicts = iter(real_verdicts), iter(typed_verdicts)
    readme = README.read_text(encoding="utf-8")
    for name, where, task, answer, strict, upstream in rows:
        official_status = next(verdicts[0] if where == "real" else verdicts[1])["status"]
        got = (evaluate(task, answer).status, evaluate(task, answer, rules="upstream").status, official_status)
        assert got == (strict, upstream, upstream), name
        assert f"| `{name}` |" in readme, f"README's differences table lacks {name}"


def test_the_generated_cases_cover_every_task(tasks: dict[int, Task]) -> None:
    counts = Counter(tid for _, tid, _ in all_cases(load_tasks(TASKS_FILE)))
    assert set(counts) == set(tasks) and min(counts.values()) >= 25


def test_place_name_scores_match_thefuzz_on_accented_text(official: str) -> None:
    """The place-name score equals thefuzz's ``token_sort_ratio`` (which upstream calls) on accented text."""
    import random
    import subprocess

    from replay_tui.verify.types import fuzzy_score

    rng = random.Random(17)
    names = ["Carnegie Mellon University", "Café Du Monde", "Zürich Hauptbahnhof", "São Paulo", "Ærøskøbing", "Łódź"]
    accents = "áàâäãåæçéèêëíìîïñóòôöõøœúùûüýÿßğışžčřłđ"

    def mutate(text: str) -> str:
        chars = list(text)
        for _ in range(rng.randint(0, 4)):
            i = rng.randrange(len(chars))
            chars[i] = rng.choice(accents + chars[i].lower() + chars[i].upper())
        return "".join(chars)

    pairs = [(mutate(name), mutate(rng.choice(names) if rng.random() < 0.3 else name)) for name in names * 300]
    script = (
        "import json, sys\nfrom thefuzz import fuzz\n"
        "print(json.dumps([fuzz.token_sort_ratio(a, b) for a, b in json.load(sys.stdin)]))"
    )
    done = subprocess.run([official, "-c", script], input=json.dumps(pairs), capture_output=True, text=True, check=True)
    theirs = json.loads(done.stdout)
    assert [fuzzy_score(a, b) for a, b in pairs] == theirs
    assert any(a.isascii() is False for a, _ in pairs) and len({t >= 80 for t in theirs}) == 2
