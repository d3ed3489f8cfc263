"""LlmPolicy with the real openai client against a scripted server on 127.0.0.1."""

import json
import socket
import threading

import pytest

from replay_tui.policies.base import PolicyFailure
from replay_tui.policies.cache import Cassette
from replay_tui.policies.llm import DUMMY_API_KEY, LlmConfigError, LlmPolicy, LlmSettings
from replay_tui.policies.llm_cache import ResponseCache
from tests.llm.scripted import Reply, ScriptedServer, completion, tool_reply

PROMPT = repr([{"role": "system", "content": "You shop."}, {"role": "user", "content": "Page 1 of results"}])
RESULT_ACTIONS = ["select_item", "Next", "Back_to_Search"]


def ask(policy, prompt=PROMPT, actions=RESULT_ACTIONS, **kwargs):
    return policy.predict_action("obs", "Result", list(actions), prompt, **kwargs)


def make(server, tmp_path, **settings):
    settings = {
        "model": "M",
        "base_url": server.url,
        "cache_dir": str(tmp_path / "cache"),
        "timeout": 5.0,
        "retries": 0,
        "backoff": 0.0,
        **settings,
    }
    return LlmPolicy(settings)


def fail(policy, **kwargs):
    with pytest.raises(PolicyFailure) as caught:
        ask(policy, **kwargs)
    return caught.value


def test_a_tool_call_becomes_the_env_action_and_the_trace_tells_everything(tmp_path):
    with ScriptedServer(lambda body: tool_reply("select_item", {"item_id": "B0ABCDEFGH"})) as server:
        policy = make(server, tmp_path, seed=7, max_tokens=64)
        assert ask(policy) == "click[B0ABCDEFGH]"
        body = server.requests[0]
        assert body["model"] == "M" and body["tool_choice"] == "required" and body["temperature"] == 0
        assert body["seed"] == 7 and body["max_tokens"] == 64
        assert body["messages"] == [
            {"role": "system", "content": "You shop."},
            {"role": "user", "content": "Page 1 of results"},
        ]
        assert [t["function"]["name"] for t in body["tools"]] == RESULT_ACTIONS
        assert server.headers[0]["authorization"] == f"Bearer {DUMMY_API_KEY}"

        trace = policy.last_trace
        assert trace["policy"] == "llm" and trace["model"] == "M" and trace["base_url"] == server.url
        assert trace["request"] == body
        assert trace["cache"] == "miss" and trace["cache_hit"] is False and trace["attempts"] == 1
        assert trace["latency_ms"] >= 0
        assert trace["tokens"] == {"prompt": 100, "completion": 10, "total": 110}
        assert trace["tool_call"] == {"name": "select_item", "arguments": {"item_id": "B0ABCDEFGH"}}
        assert trace["action"] == "click[B0ABCDEFGH]"
        assert trace["response"]["tool_calls"] == [{"name": "select_item", "arguments": '{"item_id": "B0ABCDEFGH"}'}]

        assert ask(policy) == "click[B0ABCDEFGH]"  # the same request again: served from the cache
        assert len(server.requests) == 1
        assert policy.last_trace["cache"] == "hit" and policy.last_trace["latency_ms"] == trace["latency_ms"]
        assert policy.stats() == {"requests_sent": 1, "cache_hits": 1}


def test_the_api_key_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-test-123")
    with ScriptedServer(lambda body: tool_reply("Next", {})) as server:
        ask(make(server, tmp_path, api_key_env="MY_KEY"))
        assert server.headers[0]["authorization"] == "Bearer sk-test-123"
    with pytest.raises(LlmConfigError, match="set OPENAI_API_KEY"):
        LlmPolicy(model="M")  # OpenAI itself, and no key
    with pytest.raises(LlmConfigError, match="needs a model"):
        LlmPolicy(base_url="http://127.0.0.1:9/v1")


def test_answers_without_a_valid_call_are_failures_of_their_kind(tmp_path):
    replies = iter(
        [
            tool_reply(None, content="Next looks right"),
            tool_reply("Buy_Now", {}),
            tool_reply("select_item", '{"item_id": '),
            tool_reply("select_item", {"asin": "B0ABCDEFGH"}),
            Reply(body="<html>gateway</html>"),
            Reply(body={"error": {"message": "model is loading"}}),
        ]
    )
    with ScriptedServer(lambda body: next(replies)) as server:
        policy = make(server, tmp_path, cache=False)
        kinds = []
        for _ in range(6):
            failure = fail(policy)
            kinds.append(failure.kind)
            assert policy.last_trace["failure"]["kind"] == failure.kind
        assert kinds == [
            "no_tool_call",
            "unknown_tool",
            "invalid_arguments",
            "invalid_arguments",
            "bad_response",
            "api_error",
        ]


def test_timeouts_are_retried_with_backoff_then_reported(tmp_path):
    sleeps = []
    with ScriptedServer(lambda body: Reply(delay=1.0, body=completion("Next", {}))) as server:
        policy = LlmPolicy(
            model="M", base_url=server.url, cache=False, timeout=0.2, retries=2, backoff=0.05, sleep=sleeps.append
        )
        failure = fail(policy)
        assert failure.kind == "timeout" and "0.2 s" in failure.message
        assert len(server.requests) == 3 and policy.last_trace["attempts"] == 3
        assert len(sleeps) == 2 and 0 <= sleeps[0] <= 0.05 and 0 <= sleeps[1] <= 0.1  # full jitter below the bounds


def test_server_errors_are_retried_client_errors_are_not(tmp_path):
    replies = iter(
        [
            Reply(status=503, body={"error": {"message": "busy"}}, headers={"retry-after": "0.01"}),
            tool_reply("Next", {}),
        ]
    )
    sleeps = []
    with ScriptedServer(lambda body: next(replies)) as server:
        policy = make(server, tmp_path, retries=2, backoff=5.0)
        policy._sleep = sleeps.append
        assert ask(policy) == "click[Next >]"
        assert policy.last_trace["attempts"] == 2 and 0.01 <= sleeps[0] <= 0.011  # Retry-After wins over the backoff

    with ScriptedServer(lambda body: Reply(status=400, body={"error": {"message": "bad tools"}})) as server:
        policy = make(server, tmp_path, retries=3, cache=False)
        failure = fail(policy)
        assert failure.kind == "http_error" and failure.message.startswith("HTTP 400")
        assert "bad tools" in failure.raw and len(server.requests) == 1
        assert policy.last_trace["failure"]["status"] == 400


def test_an_unreachable_server_is_a_connection_error(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    policy = LlmPolicy(model="M", base_url=f"http://127.0.0.1:{port}/v1", cache=False, retries=0)
    assert fail(policy).kind == "connection_error"


def test_failures_are_cached_and_retry_failures_asks_again(tmp_path):
    replies = iter([Reply(status=500, body={"error": {"message": "down"}}), tool_reply("Next", {})])
    with ScriptedServer(lambda body: next(replies)) as server:
        assert fail(make(server, tmp_path)).kind == "http_error"
        assert fail(make(server, tmp_path)).kind == "http_error"  # identical re-run: from the cache
        assert len(server.requests) == 1
        policy = make(server, tmp_path, retry_failures=True)
        assert ask(policy) == "click[Next >]" and policy.last_trace["cache"] == "miss"
        assert ask(make(server, tmp_path)) == "click[Next >]"  # the success replaced the failure
        assert len(server.requests) == 2


def test_the_cache_key_covers_model_messages_tools_and_parameters(tmp_path):
    with ScriptedServer(lambda body: tool_reply("Next", {})) as server:
        ask(make(server, tmp_path))
        ask(make(server, tmp_path, base_url=server.url + "/"))  # where it is asked is not part of the key
        assert len(server.requests) == 1
        ask(make(server, tmp_path, model="N"))
        ask(make(server, tmp_path, temperature=0.7))
        ask(make(server, tmp_path, seed=1))
        ask(make(server, tmp_path), actions=["Next", "Back_to_Search"])
        ask(make(server, tmp_path), prompt=repr([{"role": "user", "content": "Page 2"}]))
        ask(make(server, tmp_path), sample=1)
        assert len(server.requests) == 7
        assert len(ResponseCache(tmp_path / "cache")) == 7
        ask(make(server, tmp_path, cache=False))
        assert len(server.requests) == 8


def test_record_then_replay_a_cassette_without_any_server(tmp_path):
    cassette = tmp_path / "run.cassette.json"
    with (
        ScriptedServer(lambda body: tool_reply("Next", {})) as server,
        make(server, tmp_path, record=str(cassette), cache=False) as policy,
    ):
        assert ask(policy) == "click[Next >]"
        assert ask(policy, actions=["Next"]) == "click[Next >]"
    header, *lines = [json.loads(line) for line in cassette.read_text().splitlines()]
    assert header["format"] == "replay-tui-llm-cassette" and header["model"] == "M" and len(lines) == 2

    replay = LlmPolicy(replay=str(cassette))  # no base_url, no key, no client: the model comes from the file
    assert replay.client is None and replay.settings.model == "M"
    assert ask(replay) == "click[Next >]"
    assert replay.last_trace["cache"] == "cassette" and replay.last_trace["cache_hit"] is True
    failure = fail(replay, actions=["Back_to_Search"])
    assert failure.kind == "not_recorded"

    with pytest.raises(LlmConfigError, match="does not exist"):
        LlmPolicy(replay=str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(LlmConfigError, match="not a replay-tui LLM cassette"):
        LlmPolicy(replay=str(tmp_path / "bad.json"))
    with pytest.raises(LlmConfigError, match="exclude each other"):
        LlmPolicy(model="M", base_url="http://127.0.0.1:9/v1", record="a.json", replay=str(cassette))


def test_cassettes_are_deterministic(tmp_path):
    with ScriptedServer(lambda body: tool_reply("Next", {})) as server:
        for name in ("a.json", "b.json"):
            with make(server, tmp_path, record=str(tmp_path / name)) as policy:  # the second from the cache
                ask(policy)
                ask(policy, actions=["Next"])
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert len(Cassette.load(tmp_path / "a.json")) == 2


def test_last_trace_is_per_thread(tmp_path):
    def script(body):
        return tool_reply("Next", {}) if "one" in body["messages"][-1]["content"] else tool_reply("Back_to_Search")

    with ScriptedServer(script) as server:
        policy = make(server, tmp_path)
        traces = {}

        def worker(word):
            action = ask(policy, prompt=repr([{"role": "user", "content": f"page {word}"}]))
            traces[word] = (action, policy.last_trace["action"])

        threads = [threading.Thread(target=worker, args=(word,)) for word in ("one", "two")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert traces == {"one": ("click[Next >]",) * 2, "two": ("click[Back to Search]",) * 2}


def test_bad_prompts_and_settings():
    policy = LlmPolicy(model="M", base_url="http://127.0.0.1:9/v1", cache=False)
    with pytest.raises(PolicyFailure) as caught:
        ask(policy, prompt="[{'role': 'user', 'content': f()}]")
    assert caught.value.kind == "bad_prompt" and policy.last_trace["failure"]["kind"] == "bad_prompt"
    for bad in ({"timeout": 0}, {"retries": -1}, {"tool_choice": "none"}, {"temperature": -1}, {"max_tokens": 0}):
        with pytest.raises(LlmConfigError):
            LlmPolicy(model="M", base_url="http://127.0.0.1:9/v1", **bad)
    with pytest.raises(LlmConfigError, match="unknown LLM setting"):
        LlmSettings.from_dict({"modle": "M"})
    assert LlmSettings.from_dict(LlmSettings(model="M").to_dict()) == LlmSettings(model="M")
