"""LLM mode from the debugger: choose it by keys, replay against a scripted server, read the call."""

from __future__ import annotations

from replay_tui.tui.replay.stepper import StepperScreen
from replay_tui.tui.widgets.text_pane import TextPane
from tests.llm.conftest import _isolated_llm_env, bundled_calls, oracle, server  # noqa: F401 - fixtures
from tests.llm.scripted import Reply, tool_reply
from tests.tui.conftest import SIZE, wait_replay


async def choose_llm(pilot, url: str) -> None:
    """p, then the llm policy with ``url`` and the model ``scripted-model``, by keys."""
    await pilot.press("p")
    await pilot.pause()
    await pilot.press("down", "down", "down", "enter")  # llm
    await pilot.press("tab", "tab", *url, "tab", *"scripted-model", "ctrl+s")
    await pilot.pause()


async def test_choose_llm_by_keys_replay_and_inspect_the_call(build, server, oracle):  # noqa: F811
    oracle.overrides[(0, "1")] = Reply(status=500, body={"error": {"message": "overloaded"}})
    app = build(mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await choose_llm(pilot, server.url)
        settings = app.workspace.settings
        assert settings.mode == "llm" and settings.llm == {"base_url": server.url, "model": "scripted-model"}
        await pilot.press("enter", "r")
        await wait_replay(app, pilot)
        screen = app.screen
        assert isinstance(screen, StepperScreen)
        verdicts = app.step_results[0]
        assert verdicts["0"].match and verdicts["0"].trace["model"] == "scripted-model"
        assert verdicts["1"].error_kind == "http_error"
        assert server.requests  # the real openai client went over HTTP
        detail = screen.query_one("#step-detail").render().plain
        assert "scripted-model" in detail and "ms" in detail
        await pilot.press("x")
        trace = screen.query_one("#thinking", TextPane)
        assert trace.border_title == "policy call" and '"request"' in trace.text
        await pilot.press("j")
        detail = screen.query_one("#step-detail").render().plain
        assert "failure: http_error" in detail
        await pilot.press("x")
        assert screen.query_one("#thinking", TextPane).border_title == "thinking"


def _thinking_aloud(call):
    """The recorded decision, with the model's reasoning and text as a vLLM server sends them."""
    reply = tool_reply(call.name, call.arguments, content="The query should keep the size.")
    reply.body["choices"][0]["message"]["reasoning_content"] = "First, look at what the user asked for."
    return reply


async def test_the_replayed_models_output_shows_beside_the_recorded_thinking(build, server, oracle):  # noqa: F811
    """Issue 16: the new model's output was only inside the x JSON trace."""
    oracle.overrides[(0, "0")] = _thinking_aloud
    oracle.overrides[(0, "1")] = Reply(status=400, body={"error": {"message": "context too long"}})
    app = build(mismatch="allow")
    async with app.run_test(size=SIZE) as pilot:
        await choose_llm(pilot, server.url)
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        thinking = screen.query_one("#thinking", TextPane)
        recorded = thinking.text
        assert recorded and "replayed model output" not in recorded
        await pilot.press("r")
        await wait_replay(app, pilot)
        text = thinking.text
        assert text.startswith("── recorded thinking ──\n" + recorded)
        assert "── replayed model output (scripted-model) ──" in text
        assert "reasoning:\nFirst, look at what the user asked for." in text
        assert "The query should keep the size." in text
        assert '→ Search({"keywords": "02navy volleyball shorts' in text and thinking.border_title == "thinking"
        await pilot.press("x")  # the request, one key away
        assert thinking.border_title == "policy call" and '"request"' in thinking.text
        await pilot.press("x", "j")
        assert "✗ http_error: HTTP 400" in thinking.text  # a failed call says so in place of an answer
