import pytest
from pydantic import ValidationError

from replay_tui.demos.models import (
    AgentBuy,
    BackupAgentEvent,
    DecisionStep,
    ItemPageAction,
    PromptError,
    UnknownEvent,
    parse_prompt,
    sub_event_class,
)
from tests.conftest import result_step, search_step


def test_real_log_quirks_are_accepted():
    step = DecisionStep.model_validate(
        search_step(
            "3",
            reward="0.5",
            done="true",
            llm_action_arguments='{"keywords": "red shoes"}',
            action_executed_in_env="search[red shoes]",
        )
    )
    assert step.step_number == 3
    assert step.reward == 0.5
    assert step.done is True
    assert step.llm_action_arguments == {"keywords": "red shoes"}
    assert DecisionStep.model_validate(search_step(0, done="False")).done is False


@pytest.mark.parametrize("missing", ["", None, "drop"])
def test_missing_executed_action_is_rebuilt_from_the_tool_call(missing):
    raw = result_step(1, "Next")
    if missing == "drop":
        del raw["action_executed_in_env"]
    else:
        raw["action_executed_in_env"] = missing
    step = DecisionStep.model_validate(raw)
    assert step.expected_action == "click[Next >]"
    assert step.action_rebuilt


def test_unmappable_empty_action_names_the_problem():
    raw = result_step(1, "Next", action="")
    raw["llm_action_name"] = "Teleport"
    with pytest.raises(ValidationError, match="cannot be rebuilt"):
        DecisionStep.model_validate(raw)


def test_wrong_types_are_rejected():
    with pytest.raises(ValidationError) as info:
        DecisionStep.model_validate(search_step(0, reward="lots"))
    assert info.value.errors()[0]["loc"] == ("reward",)
    with pytest.raises(ValidationError):
        DecisionStep.model_validate(search_step(0, llm_action_arguments="[1, 2]"))


def test_unknown_fields_are_kept():
    step = DecisionStep.model_validate(search_step(0, latency_ms=812))
    assert step.model_dump()["latency_ms"] == 812


def test_sub_events_dispatch_on_type_and_keep_unknown_types_verbatim():
    assert sub_event_class("item_page_action") is ItemPageAction
    assert sub_event_class("agent_buy") is AgentBuy
    assert sub_event_class("backup_agent_search") is BackupAgentEvent
    assert sub_event_class("telemetry") is UnknownEvent
    raw = {"type": "telemetry", "tokens": 12, "nested": {"a": [1, 2]}}
    event = UnknownEvent.model_validate(raw)
    assert event.model_dump() == raw


def test_item_page_action_maps_its_tool_call():
    event = ItemPageAction.model_validate({"type": "item_page_action", "llm_action": {"name": "Buy_Now"}})
    assert event.action == "click[Buy Now]"
    event = ItemPageAction.model_validate(
        {"type": "item_page_action", "llm_action": {"name": "select_option", "arguments": '{"value": "xl"}'}}
    )
    assert event.action == "click[xl]"


def test_prompt_parses_repr_of_chat_dicts_lazily():
    step = DecisionStep.model_validate(search_step(0))
    messages = step.prompt_messages()
    assert [m.role for m in messages] == ["system", "user"]
    assert "[button] Search [button_]" in messages[1].content


def test_prompt_parsing_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    hostile = f"[{{'role': 'user', 'content': __import__('pathlib').Path({str(marker)!r}).touch()}}]"
    with pytest.raises(PromptError):
        parse_prompt(hostile)
    assert not marker.exists()


def test_prompt_size_limit_and_shapes():
    with pytest.raises(PromptError, match="limit"):
        parse_prompt("[" + "{'role': 'user', 'content': 'x'}, " * 1000 + "]", limit=1000)
    assert parse_prompt("just some prose")[0].content == "just some prose"
    assert parse_prompt('[{"role": "user", "content": [{"type": "text", "text": "hi"}]}]')[0].content == "hi"
    with pytest.raises(PromptError):
        parse_prompt("[1, 2]")
    assert parse_prompt(None) == []


def _slow_parse(raw):
    """parse_episode with the exact fast path switched off: pydantic validates everything."""
    from unittest import mock

    from replay_tui.demos import loader

    with mock.patch.object(loader, "fast_episode", lambda raw: None):
        return loader.parse_episode(raw, file="f", index=0)


def _same_instance(fast, slow):
    assert type(fast) is type(slow)
    assert fast.__dict__ == slow.__dict__
    assert [type(value) for value in fast.__dict__.values()] == [type(value) for value in slow.__dict__.values()]
    assert fast.__pydantic_extra__ == slow.__pydantic_extra__
    assert fast.__pydantic_fields_set__ == slow.__pydantic_fields_set__
    assert fast.__pydantic_private__ == slow.__pydantic_private__
    assert fast.model_dump() == slow.model_dump()
    assert _json_or_error(fast) == _json_or_error(slow)


def _json_or_error(model):
    try:
        return model.model_dump_json()
    except ValueError as exc:  # a lone surrogate in a string (json.loads lets "\ud800" through)
        return type(exc).__name__


def _raw_episodes():
    import json
    from pathlib import Path

    from tests.hostile import fixture_cases

    paths = [Path(__file__).parent.parent / "replay_tui/examples/webshop_demonstrations_0-99.json"]
    paths += sorted((Path(__file__).parent / "data").glob("*.json"))
    for path in paths:
        yield from json.loads(path.read_text())
    for case in fixture_cases():  # hostile values: most must take the validating path
        try:
            data = json.loads(case.data)
        except (ValueError, RecursionError, UnicodeDecodeError):
            continue
        yield from (data if isinstance(data, list) else [data])


def test_the_fast_path_builds_what_validation_builds():
    """Every episode of the bundled example, the synthetic data (with quirks: numeric strings,
    rebuilt actions, JSON-string arguments) and the hostile cases parses to the same models whether
    or not the exact fast path takes it; where validation refuses it, so does parse_episode."""
    from replay_tui.demos.loader import parse_episode
    from replay_tui.demos.models import fast_episode
    from replay_tui.demos.problems import EpisodeLoadError
    from replay_tui.demos.synth import iter_episodes

    raws = list(_raw_episodes()) + list(iter_episodes(0, 80, seed=3, quirk_rate=0.5))
    base = raws[0]
    variants = [{k: v for k, v in base.items() if k not in drop} for drop in ("success", "final_reward", "instruction")]
    variants += [{**base, "final_reward": 1}, {**base, "success": None, "completed_by_backup": True}]
    variants.append({**base, "trajectory": [{**entry, "reward": 1} for entry in base["trajectory"]]})
    variants.append({**base, "trajectory": [{**entry, "done": 1} for entry in base["trajectory"]]})
    raws += variants
    fast_taken = 0
    for raw in raws:
        try:
            slow = _slow_parse(raw)
        except EpisodeLoadError as exc:
            with pytest.raises(EpisodeLoadError) as caught:
                parse_episode(raw, file="f", index=0)
            assert caught.value.problem == exc.problem
            assert not isinstance(raw, dict) or fast_episode(raw) is None
            continue
        fast = parse_episode(raw, file="f", index=0)
        fast_taken += isinstance(raw, dict) and fast_episode(raw) is not None
        _same_instance(fast, slow)
        for fast_entry, slow_entry in zip(fast.trajectory, slow.trajectory, strict=True):
            _same_instance(fast_entry, slow_entry)
            if isinstance(slow_entry, ItemPageAction):
                _same_instance(fast_entry.llm_action, slow_entry.llm_action)
    assert fast_taken > len(raws) // 2  # the common case is the fast one


def test_the_fast_path_leaves_coercions_to_validation():
    from replay_tui.demos.models import fast_entry

    assert fast_entry(search_step(3)) is not None
    for quirk in ({"step_number": "3"}, {"reward": "0.5"}, {"done": "true"}, {"reward": True}, {"step_number": 2**64}):
        assert fast_entry({**search_step(3), **quirk}) is None
    assert fast_entry({**search_step(3), "llm_action_arguments": '{"keywords": "x"}'}) is None
    rebuilt = fast_entry({**search_step(3), "action_executed_in_env": ""})
    assert rebuilt is not None and rebuilt.action_rebuilt and rebuilt.action_executed_in_env.startswith("search[")
    assert "action_rebuilt" in rebuilt.model_fields_set
