"""Network-trace checks on a HAR that Playwright (Chromium) recorded against a local page on 127.0.0.1.

The page navigates like an agent would and sends the kinds of requests the task files check: a
navigation with a query, a JSON POST (201), a form POST (JSON reply), a POST that sets a cookie, an
XHR GET with a referer and a query. Each network check kind passes on the trace and fails, naming
the offending request, when the expectation is changed.
"""

from __future__ import annotations

import base64
import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from replay_tui.verify.evaluate import evaluate, evaluate_many
from replay_tui.verify.models import Task, parse_tasks
from replay_tui.verify.network import TraceError, find_trace, load_trace, lookup

CHROMIUM = "/usr/bin/chromium"

PAGE = """<!doctype html><html><head><title>todos</title></head><body><p>todos</p></body></html>"""
SALES = """<!doctype html><html><head><title>sales</title></head><body><script>
async function send(url, options) { const r = await fetch(url, options); await r.text(); }
async function run() {
  await send('/api/v4/projects/79/fork', {method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify({id: '79', name: '2019-nCov', namespace_id: 2505, path: '2019-nCov',
                          note: {noteable_type: 'MergeRequest', note: 'Thanks'}})});
  await send('/sv/124260.json', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'},
    body: 'choice=1&token=abc'});
  await send('/wishlist/index/add/', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'},
    body: 'product=42'});
  await send('/mui/index/render/?namespace=sales_order_grid&filters%5Bstatus%5D=fraud&paging=3',
    {headers: {'X-Requested-With': 'XMLHttpRequest'}});
  for (const dir of ['1', '-1']) {
    await send('/vote', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'},
      body: 'id=t3_42&dir=' + dir});
  }
  const form = new FormData();
  form.append('project[name]', 'Awesome Prompts');
  form.append('project[visibility_level]', '20');
  await send('/projects', {method: 'POST', body: form});
  await send('/reports/report_sales/sales/filter/FILTER/?form_key=xyz');
  await send('/catalog/product/save/id/1130/', {method: 'POST',
    headers: {'Content-Type': 'application/x-www-form-urlencoded'},
    body: 'product%5Bname%5D=Phoebe&configurable-matrix-serialized=' + encodeURIComponent(JSON.stringify(
      [{newProduct: 1, attributes: 'size: s, color: brown'}, {newProduct: 0, attributes: 'size: m, color: red'},
       {newProduct: 1, attributes: 'size: l, color: brown'}]))});
  document.title = 'done';
}
run();
</script></body></html>"""

# Magento's report filter: the filter form travels base64-encoded as a path segment
FILTER = base64.urlsafe_b64encode(b"report_type=created_at_order&from=02/1/2023&to=02/28/2023&show_empty_rows=0")
SALES = SALES.replace("FILTER", FILTER.decode().rstrip("="))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: str, kind: str, extra: dict[str, str] | None = None) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/dashboard/todos"):
            self._send(200, PAGE, "text/html")
        elif self.path.startswith("/sales/order/"):
            self._send(200, SALES, "text/html")
        elif self.path.startswith(("/mui/index/render/", "/reports/")):
            self._send(200, json.dumps({"totalRecords": 2}), "application/json")
        else:
            self._send(404, "not found", "text/plain")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/api/v4/projects/79/fork":
            self._send(201, json.dumps({"id": 80, "items": [{"name": "2019-nCov"}]}), "application/json")
        elif self.path == "/sv/124260.json":
            self._send(200, json.dumps({"subscribed": True, "star_count": 56}), "application/json")
        elif self.path in ("/projects", "/catalog/product/save/id/1130/", "/vote"):
            self._send(200, "{}", "application/json")
        elif self.path == "/wishlist/index/add/":
            cookie = "mage-messages=" + "Blue%20toothpaste%20has%20been%20added%20to%20your%20wish%20list.; Path=/"
            self._send(200, "{}", "application/json", {"Set-Cookie": cookie})
        else:
            self._send(404, "not found", "text/plain")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """(HAR path, base URL) of one recorded browsing session."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    har = tmp_path_factory.mktemp("trace") / "network.har"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            context = browser.new_context(record_har_path=str(har), record_har_content="embed")
            page = context.new_page()
            page.goto(f"{base}/sales/order/")
            page.wait_for_function("document.title === 'done'", timeout=15_000)
            page.wait_for_timeout(300)  # let the HAR recorder take the last response bodies
            page.goto(f"{base}/dashboard/todos?state=pending&page=2")
            context.close()
            browser.close()
    finally:
        server.shutdown()
        thread.join(timeout=5)
    yield har, base


def task_with(check: dict[str, Any], task_type: str = "mutate", task_id: int = 1) -> Task:
    return parse_tasks(
        {
            "task_id": task_id,
            "sites": ["gitlab"],
            "eval": [
                {
                    "evaluator": "AgentResponseEvaluator",
                    "results_schema": {"type": "null"},
                    "expected": {"task_type": task_type, "status": "SUCCESS", "retrieved_data": None},
                },
                {"evaluator": "NetworkEventEvaluator", **check},
            ],
        }
    )[task_id]


ANSWER = {"task_type": "mutate", "status": "SUCCESS", "retrieved_data": None}


def network(task: Task, trace: Any, answer: dict[str, Any] = ANSWER) -> Any:
    result = evaluate(task, answer | {"task_type": task.agent_response_config.task_type.value}, trace=trace)
    return result, result.evaluators_results[-1]


REPORT = "__GITLAB__/reports/report_sales/sales/filter"
MATRIX = "$['configurable-matrix-serialized'][?(@.newProduct == 1)].attributes"
MATRIX_SCHEMA = {"type": "object", "properties": {MATRIX: {"type": "array", "items": {"type": "string"}}}}
DATES = {
    "type": "object",
    "properties": {
        "report_type": {"type": "array", "items": {"type": "string"}},
        "from": {"type": "array", "items": {"type": "string", "format": "date"}},
        "to": {"type": "array", "items": {"type": "string", "format": "date"}},
    },
}

# (check kind, the check, a change that must make it fail, the path of the failing field)
CHECKS: list[tuple[str, str, dict[str, Any], dict[str, Any], str]] = [
    (
        "url (navigation, ignored query parameter)",
        "navigate",
        {"ignored_query_params_patterns": ["page"], "expected": {"url": "__GITLAB__/dashboard/todos?state=pending"}},
        {"expected": {"url": "__GITLAB__/dashboard/todos?state=done"}},
        "network_event.url",
    ),
    (
        "url alternatives and pattern",
        "navigate",
        {"ignored_query_params": ["page", "state"], "expected": {"url": ["__GITLAB__/x", "^__GITLAB__/dashboard/.*$"]}},
        {"expected": {"url": ["__GITLAB__/x", "__GITLAB__/y"]}},
        "",
    ),
    (
        "query_params",
        "retrieve",
        {
            "ignored_query_params_patterns": ["^paging"],
            "expected": {
                "url": "__GITLAB__/mui/index/render/",
                "query_params": {"namespace": ["sales_order_grid"], "filters[status]": ["fraud"]},
            },
        },
        {
            "ignored_query_params_patterns": ["^paging"],
            "expected": {"url": "__GITLAB__/mui/index/render/", "query_params": {"namespace": ["x"]}},
        },
        "network_event.url",
    ),
    (
        "headers (referer and plain)",
        "retrieve",
        {
            "ignored_query_params_patterns": [".*"],
            "expected": {
                "url": "__GITLAB__/mui/index/render/",
                "headers": {"referer": "__GITLAB__/sales/order/", "X-Requested-With": "XMLHttpRequest"},
            },
        },
        {
            "ignored_query_params_patterns": [".*"],
            "expected": {"url": "__GITLAB__/mui/index/render/", "headers": {"X-Requested-With": "fetch"}},
        },
        "network_event.headers.X-Requested-With",
    ),
    (
        "post_data (JSON, numbers as text, a $.path)",
        "mutate",
        {
            "expected": {
                "url": "__GITLAB__/api/v4/projects/79/fork",
                "http_method": "POST",
                "post_data": {"id": "79", "namespace_id": 2505, "$.note.noteable_type": "MergeRequest"},
                "response_status": 201,
            }
        },
        {
            "expected": {
                "url": "__GITLAB__/api/v4/projects/79/fork",
                "http_method": "POST",
                "post_data": {"id": "79", "name": "2019-nCoV-fork"},
                "response_status": 201,
            }
        },
        "network_event.post_data.name",
    ),
    (
        "post_data (form, ignored parameter)",
        "mutate",
        {
            "ignored_post_data_params_patterns": ["^token$"],
            "expected": {"url": "__GITLAB__/sv/124260.json", "http_method": "POST", "post_data": {"choice": "1"}},
        },
        {"expected": {"url": "__GITLAB__/sv/124260.json", "http_method": "POST", "post_data": {"choice": "-1"}}},
        "network_event.post_data.choice",
    ),
    (
        "response_status",
        "mutate",
        {"expected": {"url": "__GITLAB__/api/v4/projects/79/fork", "http_method": "POST", "response_status": 201}},
        {"expected": {"url": "__GITLAB__/api/v4/projects/79/fork", "http_method": "POST", "response_status": 200}},
        "network_event.response_status",
    ),
    (
        "response_content (key and $.path)",
        "mutate",
        {
            "expected": {
                "url": "__GITLAB__/sv/124260.json",
                "http_method": "POST",
                "response_content": {"subscribed": True, "star_count": 56},
            }
        },
        {
            "expected": {
                "url": "__GITLAB__/api/v4/projects/79/fork",
                "http_method": "POST",
                "response_status": 201,
                "response_content": {"$.items[0].name": "something else"},
            }
        },
        "network_event.response_content.$.items[0].name",
    ),
    (
        "response_cookies (pattern)",
        "mutate",
        {
            "expected": {
                "url": "__GITLAB__/wishlist/index/add/",
                "http_method": "POST",
                "response_cookies": {"mage-messages": "^.*toothpaste.* has been added to your wish list.*$"},
                "post_data": {"qty": None},
            }
        },
        {
            "expected": {
                "url": "__GITLAB__/wishlist/index/add/",
                "http_method": "POST",
                "response_cookies": {"mage-messages": "^.*floss.*$"},
            }
        },
        "network_event.response_cookies.mage-messages",
    ),
    (
        "last_event_only: false (an earlier request may match)",
        "mutate",
        {
            "last_event_only": False,
            "expected": {"url": "__GITLAB__/vote", "http_method": "POST", "post_data": {"dir": "1"}},
        },
        {"expected": {"url": "__GITLAB__/vote", "http_method": "POST", "post_data": {"dir": "1"}}},
        "network_event.post_data.dir",
    ),
    (
        "post_data (multipart form)",
        "mutate",
        {
            "expected": {
                "url": "__GITLAB__/projects",
                "http_method": "POST",
                "post_data": {"project[name]": "Awesome Prompts", "project[visibility_level]": "20"},
            }
        },
        {"expected": {"url": "__GITLAB__/projects", "http_method": "POST", "post_data": {"project[name]": "Other"}}},
        "network_event.post_data.project[name]",
    ),
    (
        "post_data (a $ filter on a JSON form field, post_data_schema)",
        "mutate",
        {
            "post_data_schema": MATRIX_SCHEMA,
            "expected": {
                "url": "^__GITLAB__/catalog/product/save/id/1130$",
                "http_method": "POST",
                "post_data": {"product[name]": "Phoebe", MATRIX: ["size: l, color: brown", "size: s, color: brown"]},
            },
        },
        {
            "post_data_schema": MATRIX_SCHEMA,
            "expected": {
                "url": "^__GITLAB__/catalog/product/save/id/1130$",
                "http_method": "POST",
                "post_data": {MATRIX: ["size: s, color: brown"]},
            },
        },
        f"network_event.post_data.{MATRIX}",
    ),
    (
        "decode_base64_query",
        "retrieve",
        {
            "decode_base64_query": True,
            "ignored_query_params": ["form_key", "show_empty_rows"],
            "expected": {"url": REPORT + "?report_type=created_at_order&from=02/1/2023&to=02/28/2023"},
        },
        {
            "decode_base64_query": True,
            "ignored_query_params": ["form_key", "show_empty_rows"],
            "expected": {"url": REPORT + "?report_type=created_at_order&from=02/1/2023&to=03/28/2023"},
        },
        "network_event.url",
    ),
    (
        "query_params_schema (dates)",
        "retrieve",
        {
            "decode_base64_query": True,
            "ignored_query_params_patterns": ["^(?!report_type$|from$|to$).*$"],
            "query_params_schema": DATES,
            "expected": {
                "url": "__GITLAB__/reports/report_sales/sales/filter",
                "query_params": {"report_type": ["created_at_order"], "from": ["2023-02-01"], "to": ["Feb 28, 2023"]},
            },
        },
        {
            "decode_base64_query": True,
            "ignored_query_params_patterns": ["^(?!report_type$|from$|to$).*$"],
            "query_params_schema": DATES,
            "expected": {
                "url": "__GITLAB__/reports/report_sales/sales/filter",
                "query_params": {"report_type": ["created_at_order"], "from": ["2023-02-02"], "to": ["02/28/2023"]},
            },
        },
        "network_event.url",
    ),
    (
        "should_not_exist",
        "mutate",
        {"should_not_exist": True, "expected": {"url": "__GITLAB__/contact/index/post", "http_method": "POST"}},
        {"should_not_exist": True, "expected": {"url": "__GITLAB__/sv/124260.json", "http_method": "POST"}},
        "",
    ),
]


@pytest.mark.parametrize(("kind", "task_type", "check", "broken", "path"), CHECKS, ids=[c[0] for c in CHECKS])
def test_each_check_kind_on_a_recorded_trace(
    recorded: tuple[Path, str], kind: str, task_type: str, check: dict[str, Any], broken: dict[str, Any], path: str
) -> None:
    har, base = recorded
    trace = load_trace(har)
    result, evaluator = network(task_with(check, task_type), trace)
    assert (result.status, evaluator.evaluator_name, evaluator.assertions) == ("success", "NetworkEventEvaluator", [])
    assert result.skipped_evaluators == []
    result, evaluator = network(task_with(broken, task_type), trace)
    assert result.status == "failure"
    names = [a.name for a in evaluator.assertions]
    if broken.get("should_not_exist"):
        assert names == ["unexpected_navigation_event"]
        assert evaluator.assertions[0].actual["url"] == f"{base}/sv/124260.json"  # the offending request
        return
    assert names[0] == "missing_navigation_event"
    if path:
        detail = next(a for a in evaluator.assertions if a.path == path)
        assert detail.name == f"{path}_mismatch"
        assert detail.actual["request"]["url"].startswith(base)  # the offending request, with its answer
        assert evaluator.assertions[0].actual == detail.actual["request"]


def test_without_a_trace_network_checks_are_skipped_and_the_summary_says_answer_only(
    recorded: tuple[Path, str],
) -> None:
    har, _ = recorded
    task = task_with(CHECKS[4][2])
    report = evaluate_many({1: task}, [(1, ANSWER)])
    # the answer passed but the network check could not run: unverified, never success, counted apart
    assert report.results[0].status == "unverified"
    assert report.results[0].skipped_evaluators == ["NetworkEventEvaluator"]
    assert report.summary.answer_only and report.summary.skipped_checks == 1
    assert (report.summary.overall.success, report.summary.overall.unverified) == (0, 1)
    assert report.summary.overall.unverified_task_ids == [1]
    traced = evaluate_many({1: task}, [(1, ANSWER)], traces=lambda tid: load_trace(har))
    assert not traced.summary.answer_only and traced.results[0].status == "success"
    assert [r.evaluator_name for r in traced.results[0].evaluators_results] == [
        "AgentResponseEvaluator",
        "NetworkEventEvaluator",
    ]


def test_an_empty_trace_fails_the_check_not_skips_it() -> None:
    result, evaluator = network(task_with(CHECKS[4][2]), [])
    assert result.status == "failure" and [a.name for a in evaluator.assertions] == ["missing_navigation_event"]


def test_trace_formats(recorded: tuple[Path, str], tmp_path: Path) -> None:
    import zipfile

    har, _ = recorded
    events = load_trace(har)
    assert any(e.method == "POST" and e.post_data == {"choice": "1", "token": "abc"} for e in events)
    entries = json.loads(har.read_text())["log"]["entries"]
    listed = tmp_path / "entries.json"
    listed.write_text(json.dumps(entries))
    playwright_zip = tmp_path / "trace.zip"
    with zipfile.ZipFile(playwright_zip, "w") as archive:
        lines = [json.dumps({"type": "resource-snapshot", "snapshot": e}) for e in entries]
        archive.writestr("trace.network", "\n".join([json.dumps({"type": "other"}), *lines]))
    for other in (listed, playwright_zip):
        assert [(e.method, e.url, e.status) for e in load_trace(other)] == [(e.method, e.url, e.status) for e in events]
    (tmp_path / "7").mkdir()
    shutil.copy(har, tmp_path / "7" / "network.har")
    assert find_trace(tmp_path, 7) == tmp_path / "7" / "network.har" and find_trace(tmp_path, 8) is None
    bad = tmp_path / "bad.har"
    bad.write_text('{"log": 3}')
    with pytest.raises(TraceError, match="neither a HAR file"):
        load_trace(bad)


def test_lookup_paths() -> None:
    data = {"note": {"note": "lgtm"}, "items": [{"name": "a"}], "reply_to_submission_12[comment]": "good book!"}
    assert lookup(data, "$.note.note") == "lgtm"
    assert lookup(data, "$.items[0].name") == "a"
    assert lookup(data, "$.^reply_to_submission_\\d+\\[comment\\]$") == "good book!"
    assert lookup(data, "$.items[3].name") is None and lookup(data, "missing") is None


def _tasks_file(tmp_path: Path, checks: list[dict[str, Any]]) -> Path:
    tasks = [
        {
            "task_id": n,
            "sites": ["gitlab"],
            "eval": [
                {
                    "evaluator": "AgentResponseEvaluator",
                    "results_schema": {"type": "null"},
                    "expected": {"task_type": "mutate", "status": "SUCCESS", "retrieved_data": None},
                },
                {"evaluator": "NetworkEventEvaluator", **check},
            ],
        }
        for n, check in enumerate(checks, start=1)
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return path


def test_cli_trace_file_directory_and_answer_only(recorded: tuple[Path, str], tmp_path: Path) -> None:
    from tests.verify.test_cli import run, write_answers

    har, _ = recorded
    tasks = _tasks_file(tmp_path, [CHECKS[4][2], CHECKS[4][3]])  # 1 passes on the trace, 2 does not
    answers = write_answers(
        tmp_path / "a.jsonl", [{"task_id": 1, "response": ANSWER}, {"task_id": 2, "response": ANSWER}]
    )
    code, out, err = run(["--tasks", str(tasks), "--answers", str(answers)])
    assert (code, err) == (1, "") and "answer-only: 2 network check(s) skipped" in out
    assert "0 success, 0 failure, 0 error, 2 unverified" in " ".join(out.split())
    code, out, _ = run(["--tasks", str(tasks), "--answers", str(answers), "--trace", str(har)])
    assert code == 1 and "1 success, 1 failure" in out and "answer-only" not in out
    assert "network_event.post_data.name_mismatch" in out and "(in POST http://127.0.0.1:" in out
    traces = tmp_path / "traces"
    (traces / "1").mkdir(parents=True)
    shutil.copy(har, traces / "1" / "network.har")
    report = tmp_path / "r.json"
    code, out, _ = run(
        ["--tasks", str(tasks), "--answers", str(answers), "--trace", str(traces), "--report", str(report)]
    )
    assert code == 1 and "answer-only: 1 network check(s) skipped" in out  # task 2 has no trace there
    data = json.loads(report.read_text())
    assert data["summary"]["skipped_checks"] == 1
    assert [r["status"] for r in data["results"]] == ["success", "unverified"]
    assert [r["skipped_evaluators"] for r in data["results"]] == [[], ["NetworkEventEvaluator"]]
    code, _, err = run(["--tasks", str(tasks), "--answers", str(answers), "--trace", str(tmp_path / "nope")])
    assert code == 2 and "no such file" in err


def test_the_browser_shows_the_offending_request(recorded: tuple[Path, str]) -> None:
    from replay_tui.tui.verify.app import detail_lines

    har, base = recorded
    task = task_with(CHECKS[5][3])
    result = evaluate(task, ANSWER, trace=load_trace(har))
    text = "\n".join(line.text for line in detail_lines(result, task))
    assert "network_event.post_data.choice_mismatch" in text
    assert f"POST {base}/sv/124260.json -> 200" in text
    untraced = "\n".join(line.text for line in detail_lines(evaluate(task, ANSWER), task))
    assert "skipped (answer-only, no trace): NetworkEventEvaluator" in untraced


@pytest.mark.slow
@pytest.mark.parity
def test_each_check_kind_agrees_with_the_official_evaluator(recorded: tuple[Path, str], tmp_path: Path) -> None:
    """The same checks and trace through the official package (side venv): same verdict, same summary name."""
    import subprocess

    from tests.verify.conftest import TASKS_FILE
    from tests.verify.parity.official import RUNNER, official_python

    python, why = official_python()
    if python is None:
        pytest.skip(f"the official webarena-verified package cannot be installed: {why}")
    har, base = recorded
    entries = json.loads(har.read_text())["log"]["entries"]
    real = json.loads(TASKS_FILE.read_text(encoding="utf-8"))  # the official reader wants all 812 tasks
    cases = []
    for index, (_, task_type, good, broken, _) in enumerate(c for c in CHECKS for _ in (0, 1)):
        check = good if index % 2 == 0 else broken
        task = dict(real[index], sites=["gitlab"])
        task["eval"] = [
            {
                "evaluator": "AgentResponseEvaluator",
                "results_schema": {"type": "null"},
                "expected": {"task_type": task_type, "status": "SUCCESS", "retrieved_data": None},
            },
            {"evaluator": "NetworkEventEvaluator", **check},
        ]
        real[index] = task
        cases.append((task["task_id"], ANSWER | {"task_type": task_type}))
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text(json.dumps(real))
    payload = "".join(json.dumps({"task_id": tid, "answer": answer, "trace": entries}) + "\n" for tid, answer in cases)
    environments = json.dumps({"gitlab": {"urls": [base]}})
    done = subprocess.run(
        [python, str(RUNNER), str(tasks_file), environments], input=payload, capture_output=True, text=True, check=True
    )
    official = [json.loads(line) for line in done.stdout.splitlines()]
    ours_tasks = parse_tasks(real[: len(cases)])
    trace = load_trace(har)
    verdicts = []
    for (tid, answer), theirs in zip(cases, official, strict=True):
        ours = evaluate(ours_tasks[tid], answer, trace=trace, site_urls={"gitlab": [base]})
        their_names = next(e["assertions"] for e in theirs["evaluators"] if e["name"] == "NetworkEventEvaluator")
        our_names = [a.name for a in ours.evaluators_results[-1].assertions][:1]
        verdicts.append((ours.status, our_names) == (theirs["status"], their_names))
    assert all(verdicts) and len(verdicts) == 2 * len(CHECKS)


def test_cli_rules_upstream_applies_to_network_checks(recorded: tuple[Path, str], tmp_path: Path) -> None:
    """A URL pattern ending in ``/.*$`` on a request to that very ``.../`` URL: strict passes it,
    upstream (which drops the trailing ``/`` first) does not (README: url-pattern-trailing-slash)."""
    from tests.verify.test_cli import run, write_answers

    har, _ = recorded
    tasks = _tasks_file(tmp_path, [{"expected": {"url": "^__GITLAB__/sales/order/.*$"}}])
    answers = write_answers(tmp_path / "a.jsonl", [{"task_id": 1, "response": ANSWER}])
    code, out, _ = run(["--tasks", str(tasks), "--answers", str(answers), "--trace", str(har)])
    assert code == 0 and "1 success" in out
    code, out, _ = run(["--tasks", str(tasks), "--answers", str(answers), "--trace", str(har), "--rules", "upstream"])
    assert code == 1 and "1 failure" in out and "rules: upstream" in out and "missing_navigation_event" in out
