"""The inspect_ai reader on the real logs of tests/data/formats/inspect_ai/ and synthetic damage."""

from __future__ import annotations

import base64
import json
import math
import struct
import zipfile
from pathlib import Path
from typing import Any

import orjson
import pytest

from replay_tui.episodes.model import Trajectory
from replay_tui.episodes.problems import LoadProblem
from replay_tui.formats import detect, read_trajectories
from replay_tui.formats.base import HEAD_BYTES
from replay_tui.formats.inspect_ai import READER

DATA = Path(__file__).resolve().parents[1] / "data" / "formats" / "inspect_ai"
POPULARITY = DATA / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
DEDUP = DATA / "log_message_deduplication.eval"
BROWSER = DATA / "2025-05-12T20-27-36-04-00_browser.json"
CTF = DATA / "docent__tests_integration__ctf.json"
ZSTD = DATA / "zstd_tools.eval"
ZSTD_DEFLATE = DATA / "zstd_tools_deflate.eval"
LOGS = sorted(p for p in DATA.iterdir() if p.suffix in (".eval", ".json"))


def read(path: Path) -> tuple[list[Trajectory], list[LoadProblem]]:
    trajectories: list[Trajectory] = []
    problems: list[LoadProblem] = []
    for item in READER.read(path):
        (trajectories if isinstance(item, Trajectory) else problems).append(item)
    return trajectories, problems


def by_id(path: Path) -> dict[str, Trajectory]:
    trajectories, problems = read(path)
    assert not problems, [p.one_line() for p in problems]
    return {t.id: t for t in trajectories}


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


# --- the real logs -------------------------------------------------------------------------------


def test_every_real_log_is_found() -> None:
    assert len(LOGS) == 17
    assert sum(p.suffix == ".eval" for p in LOGS) == 12


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_real_log_reads_and_is_detected(path: Path) -> None:
    items = list(read_trajectories(path))  # detection by content through the registry
    assert items
    assert detect(path)[0].name == "inspect-ai"
    for item in items:
        if isinstance(item, Trajectory):
            assert item.format == "inspect-ai"
            dumped = item.model_dump(mode="json")
            assert not [s for s in strings(dumped) if s.startswith(("attachment://", "tc://"))]
            assert all(step.index == i for i, step in enumerate(item.steps))
            if item.steps:
                assert item.steps[-1].done


def test_v3_log_with_message_pool_and_attachments() -> None:
    trajectories = by_id(DEDUP)
    episode = trajectories["0"]
    assert episode.task == "Guess the number"
    assert episode.metadata["task"] == "inspect_test_utils/guess_number"
    assert episode.metadata["model"] == "hardcoded/hardcoded"
    assert episode.extra["steps_from"] == "model events"
    assert len(episode.steps) == 6 and episode.recorded_calls == 5
    first, last = episode.steps[0], episode.steps[-1]
    assert first.action is not None and first.action.name == "bash" and first.action.arguments == {"cmd": "ls"}
    assert first.action.id == "hardcoded_0" and first.action_text == 'bash({"cmd":"ls"})'
    assert first.tool_result is not None and first.tool_result.startswith("bin\nboot\n")
    # input_refs [[0, 1]] → the first pooled message; the last step saw the whole conversation
    assert [m.role for m in first.messages] == ["user"] and first.observation == "Guess the number"
    assert len(last.messages) == 11 and [m.role for m in last.messages[-2:]] == ["assistant", "tool"]
    assert last.messages[1].tool_calls[0].name == "bash"
    assert last.action is None and last.content == "done" and last.done
    # the python tool's description was an attachment
    python = next(t for t in first.tools if t["function"]["name"] == "python")
    assert python["type"] == "function"
    assert python["function"]["description"].startswith("Use the python function to execute Python code.")
    assert python["function"]["parameters"]["required"] == ["code"]
    assert episode.outcome.scores == {"closeness_log": {"value": 0.0, "history": []}}
    assert episode.outcome.reward == 0.0 and episode.outcome.success is False and episode.outcome.status is None


def test_popularity_eval_ten_samples_with_match_scores() -> None:
    trajectories = by_id(POPULARITY)
    assert list(trajectories) == [str(i) for i in range(1, 11)]  # natural order of sample ids
    wrong = {i for i, t in trajectories.items() if t.outcome.scores["match"]["value"] == "I"}
    assert wrong == {"3", "7"}
    for sample_id, episode in trajectories.items():
        assert episode.outcome.success is (sample_id not in wrong)
        assert episode.outcome.reward == (0.0 if sample_id in wrong else 1.0)
        assert episode.metadata["model"] == "openai/gpt-4o-mini" and "label_confidence" in episode.metadata
        (step,) = episode.steps  # no tool call: the final answer is the one step
        assert step.action is None and step.content in ("Yes", "No")
        assert [m.role for m in step.messages] == ["system", "user"]
        assert step.messages[1].content == episode.task  # the user input was an attachment
        assert not step.messages[0].content.startswith("attachment://")
    assert trajectories["9"].steps[0].content == "Yes"


def test_epochs_become_separate_trajectories() -> None:
    trajectories = by_id(DATA / "log_streaming.eval")
    assert list(trajectories) == ["1#1", "1#2", "2#1", "2#2"]
    assert trajectories["1#1"].outcome.success is False and trajectories["1#2"].outcome.success is True
    assert trajectories["1#1"].extra["epoch"] == 1 and trajectories["1#1"].extra["sample_id"] == 1


def test_browser_json_log() -> None:
    episode = by_id(BROWSER)["1"]
    assert episode.task.startswith("Use the web browser tool to navigate to https://www.aisi.gov.uk/")
    assert len(episode.steps) == 5 and episode.recorded_calls == 4
    names = [s.action.name if s.action else None for s in episode.steps]
    assert names == ["web_browser_go", "web_browser_click", "web_browser_click", "web_browser_click", None]
    first = episode.steps[0]
    assert first.action is not None and first.action.arguments == {"url": "https://www.aisi.gov.uk/"}
    assert episode.steps[1].action is not None and episode.steps[1].action.arguments == {"element_id": 151}
    assert first.tool_result is not None and first.tool_result.startswith('[132] link "We are now the AI Security')
    assert episode.steps[1].observation == first.tool_result  # the tool message the model then saw
    assert len(first.tools) == 8 and first.tools[0]["function"]["name"] == "web_browser_go"
    assert episode.steps[-1].content.startswith("The AI Security Institute (AISI)")
    assert episode.outcome.scores["includes"]["value"] == "C" and episode.outcome.success is True


def test_ctf_epochs_solved_and_failed() -> None:
    trajectories = by_id(CTF)
    solved, failed = trajectories["59#1"], trajectories["59#2"]
    assert (solved.recorded_calls, failed.recorded_calls) == (3, 8)
    assert solved.outcome.reward == 1.0 and solved.outcome.success is True
    assert failed.outcome.reward == 0.0 and failed.outcome.success is False
    assert (
        solved.steps[0].action is not None
        and solved.steps[0].action.display() == 'bash({"cmd":"cat email-export.eml"})'
    )
    assert [t["function"]["name"] for t in solved.steps[0].tools] == ["bash", "python", "submit"]
    assert solved.steps[0].content.startswith("I'll help investigate")
    submit = solved.steps[-1].action
    assert submit is not None and submit.name == "submit" and submit.arguments == {"answer": "picoCTF{WilhelmZwalina}"}
    # the scorer's model events are not agent steps; a retry prompt is the observation
    assert failed.steps[3].observation.startswith("\nYour submission was incorrect.")
    assert failed.metadata["tags"] == ["Forensics"]


def test_old_json_log_with_transcript_and_tc_references() -> None:
    episode = by_id(DATA / "log_formats.json")["1"]
    (step,) = episode.steps
    assert step.content == "No" and step.messages[0].role == "system"
    assert not step.messages[0].content.startswith("tc://") and step.messages[1].content == episode.task
    assert episode.outcome.scores["match"]["value"] == "I" and episode.outcome.reward == 0.0


def test_tool_errors_and_a_log_without_samples() -> None:
    (episode,) = by_id(DATA / "log_tool_call_error.json").values()
    assert episode.id == "1#4" and episode.steps == []
    messages = episode.extra["messages"]
    assert len(messages) == 11 and all(m["content"] == "Error: ..." for m in messages[:10])
    assert messages[10]["content"] == "Error: The tool output limit of 10 MiB was exceeded."
    assert messages[10]["role"] == "tool" and messages[10]["tool_call_id"] == "bash_11"
    trajectories, problems = read(DATA / "2024-08-29T15-11-18+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json")
    assert trajectories == [] and [p.message for p in problems] == ["no samples in this log (status error)"]


def test_single_model_answers() -> None:
    (episode,) = by_id(DATA / "mmlu-summary-choices.eval").values()
    assert episode.steps[0].content == "ANSWER: C" and episode.outcome.scores["choice"]["answer"] == "C"
    assert episode.outcome.success is False and episode.metadata["subject"] == "college_physics"
    (gemma,) = by_id(DATA / "log_read_sample.eval").values()
    assert gemma.outcome.success is True and gemma.metadata["model"] == "ollama/gemma3"


# --- sniffing ---------------------------------------------------------------------------------------


def sniff(path: Path) -> float:
    return READER.sniff(path, path.read_bytes()[:HEAD_BYTES]).score


def test_sniffing(tmp_path: Path) -> None:
    assert all(sniff(path) >= 0.9 for path in LOGS)
    chat = tmp_path / "chat.json"
    chat.write_text('{"messages": [{"role": "user", "content": "hi"}], "tools": []}')
    other_zip = tmp_path / "other.zip"
    with zipfile.ZipFile(other_zip, "w") as archive:
        archive.writestr("readme.txt", "hello")
    text = tmp_path / "notes.txt"
    text.write_text("eval task version")
    eval_without_version = tmp_path / "spec.json"
    eval_without_version.write_text('{"eval": {"task": "x"}}')
    assert sniff(chat) == 0 and sniff(other_zip) == 0 and sniff(text) == 0
    assert 0 < sniff(eval_without_version) < 0.5
    # a zip whose first member is big still sniffs through its directory
    big_first = tmp_path / "big_first.eval"
    with zipfile.ZipFile(big_first, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("padding.bin", b"x" * (HEAD_BYTES * 2))
        archive.writestr("header.json", "{}")
    assert sniff(big_first) >= 0.9


# --- damage -------------------------------------------------------------------------------------


def rewrite(source: Path, target: Path, replace: dict[str, bytes]) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            new.writestr(info.filename, replace.get(info.filename, old.read(info.filename)))


def test_corrupt_sample_members_are_named_and_the_others_load(tmp_path: Path) -> None:
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(POPULARITY) as archive:
        sample = json.loads(archive.read("samples/5_epoch_1.json"))
    sample["messages"][1]["role"] = 7
    rewrite(
        POPULARITY,
        broken,
        {"samples/3_epoch_1.json": b'{"id": 3, "messages": [', "samples/5_epoch_1.json": orjson.dumps(sample)},
    )
    trajectories, problems = read(broken)
    assert [t.id for t in trajectories] == ["1", "2", "4", "6", "7", "8", "9", "10"]
    assert [(p.index, p.session_id, p.field) for p in problems] == [
        (2, 3, "samples/3_epoch_1.json"),
        (4, 5, "samples/5_epoch_1.json:messages[1].role"),
    ]
    assert problems[0].message.startswith("not valid JSON")
    assert problems[1].message == "missing role"


def test_a_truncated_zip_loads_its_complete_members(tmp_path: Path) -> None:
    data = POPULARITY.read_bytes()
    with zipfile.ZipFile(POPULARITY) as archive:
        infos = {info.filename: info for info in archive.infolist()}
    # cut in the middle of the fifth sample (zip order: 9, 6, 10, 5, 8, ...)
    cut = infos["samples/8_epoch_1.json"].header_offset + 60
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(data[:cut])
    trajectories, problems = read(truncated)
    assert sorted(t.id for t in trajectories) == ["10", "5", "6", "9"]
    assert problems[0].severity == "warning" and problems[0].message.startswith("damaged zip")
    assert [(p.session_id, p.field) for p in problems[1:]] == [(8, "samples/8_epoch_1.json")]
    assert "cut off" in problems[1].message
    # the header is the last member: the eval spec comes from _journal/start.json
    assert {t.metadata["task"] for t in trajectories} == {"popularity"}
    assert trajectories[0].outcome.scores["match"]["value"] in ("C", "I")


def test_files_that_are_not_logs_are_problems(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.eval"
    garbage.write_bytes(b"PK\x03\x04" + b"\x00" * 10)
    trajectories, problems = read(garbage)
    assert trajectories == [] and problems and all(isinstance(p, LoadProblem) for p in problems)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"version": 2, "eval": {"task": ')
    assert [p.message.split(":")[0] for p in read(bad_json)[1]] == ["not valid JSON"]
    missing = tmp_path / "missing.json"
    assert read(missing)[1][0].message.startswith("cannot read")


# --- synthetic samples for what the real logs lack --------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\nfake"


def synthetic_log(tmp_path: Path, samples: list[Any], **fields: Any) -> Path:
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "synthetic", "model": "openai/gpt-x", "config": {}},
        "plan": {},
        "samples": samples,
        **fields,
    }
    path = tmp_path / "synthetic.json"
    path.write_bytes(orjson.dumps(log))
    return path


def agent_sample() -> dict[str, Any]:
    image = "data:image/png;base64," + base64.b64encode(PNG).decode()
    user = {
        "role": "user",
        "content": [{"type": "text", "text": "Click the button"}, {"type": "image", "image": image}],
    }
    reply = {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "reasoning": "The button is at the top."},
            {"type": "text", "text": "Clicking."},
        ],
        "tool_calls": [
            {
                "id": "c1",
                "function": "click",
                "arguments": {},
                "parse_error": "Error parsing the following tool call arguments:\n\n{x: 1\n\nError details: bad",
            },
            {"id": "c2", "function": "wait", "arguments": {"seconds": 2}},
        ],
    }
    tool = {
        "role": "tool",
        "tool_call_id": "c1",
        "function": "click",
        "content": "",
        "error": {"type": "parsing", "message": "bad"},
    }
    grader_input = [{"role": "user", "content": "grade this"}]
    grader_output = {"choices": [{"message": {"role": "assistant", "content": "GRADE: C"}}]}
    return {
        "id": "s1",
        "epoch": 1,
        "input": [{"role": "system", "content": "sys"}, {"role": "user", "content": "attachment://abc"}],
        "target": "done",
        "messages": [user, reply, tool, {"role": "assistant", "content": "All done."}],
        "attachments": {"abc": "Click the button"},
        "events": [
            {"event": "span_begin", "id": "a", "type": "solver", "name": "agent"},
            {
                "event": "model",
                "span_id": "a",
                "input": [user],
                "tools": [],
                "output": {"choices": [{"message": reply}]},
            },
            {
                "event": "model",
                "span_id": "a",
                "input": [user, reply, tool],
                "output": {"choices": [{"message": {"role": "assistant", "content": "All done."}}]},
            },
            {"event": "span_end", "id": "a"},
            {"event": "span_begin", "id": "s", "type": "scorers", "name": "scorers"},
            {"event": "span_begin", "id": "g", "parent_id": "s", "type": "scorer", "name": "model_graded"},
            {"event": "model", "span_id": "g", "input": grader_input, "output": grader_output},
        ],
        "scores": {"model_graded": {"value": 0.5}, "check": {"value": True}},
        "limit": {"type": "message", "limit": 10},
    }


def test_synthetic_agent_sample(tmp_path: Path) -> None:
    (episode,) = by_id(synthetic_log(tmp_path, [agent_sample()])).values()
    assert episode.id == "s1" and episode.task == "Click the button"
    assert len(episode.steps) == 2 and episode.extra["scorer_model_events"] == 1
    step = episode.steps[0]
    assert step.thinking == "The button is at the top." and step.content == "Clicking."
    assert step.action is not None and step.action.name == "click" and step.action.raw_arguments == "{x: 1"
    assert step.action_text == "click({x: 1)"
    assert [c["name"] for c in step.extra["tool_calls"]] == ["click", "wait"]
    assert step.tool_result == "Error: bad"
    assert step.observation == "Click the button" and step.screenshot == PNG
    final = episode.steps[1]
    assert final.action is None and final.content == "All done." and final.done
    assert final.messages[1].reasoning == "The button is at the top."
    assert final.messages[2].content == "Error: bad" and final.messages[2].tool_call_id == "c1"
    # the first scorer is the sample's: 0.5 is partial credit, not a success (inspect's line is 1.0)
    assert episode.outcome.reward == 0.5 and episode.outcome.success is False
    assert [(c.name, c.passed) for c in episode.outcome.checks] == [("model_graded", False), ("check", True)]
    assert episode.outcome.status == "message_limit" and episode.outcome.target == "done"


def test_synthetic_messages_only_and_bad_samples(tmp_path: Path) -> None:
    plain = agent_sample()
    del plain["events"]
    plain["error"] = {"message": "boom", "traceback": ""}
    plain["scores"] = {"acc": {"value": "I"}}
    bad_ref = agent_sample()
    bad_ref["id"] = "s2"
    bad_ref["events"][1] = {"event": "model", "input": [], "input_refs": [[0, 3]], "output": {"choices": []}}
    path = synthetic_log(tmp_path, [plain, "not a sample", bad_ref, {"epoch": 1}])
    trajectories, problems = read(path)
    (episode,) = trajectories
    assert episode.extra["steps_from"] == "messages" and len(episode.steps) == 2
    assert episode.steps[0].messages[0].content == "Click the button" and episode.steps[0].tools == []
    assert episode.steps[0].tool_result == "Error: bad" and episode.steps[1].content == "All done."
    assert episode.outcome.status == "error" and episode.outcome.reward == 0.0 and episode.outcome.success is False
    assert [(p.index, p.session_id, p.field) for p in problems] == [
        (1, None, "samples[1]"),
        (2, "s2", "samples[2].events[1].input_refs[0]"),
        (3, None, "samples[3].id"),
    ]
    assert problems[1].message == "refers to message 0 of a pool of 0"


def test_the_newest_layout_keeps_the_pool_in_events_data(tmp_path: Path) -> None:
    with zipfile.ZipFile(DEDUP) as archive:
        sample = json.loads(archive.read("samples/0_epoch_1.json"))
    sample["events_data"] = {"messages": sample.pop("message_pool"), "calls": []}
    newest = tmp_path / "newest.eval"
    rewrite(DEDUP, newest, {"samples/0_epoch_1.json": orjson.dumps(sample)})
    old, new = by_id(DEDUP)["0"], by_id(newest)["0"]
    assert new.model_dump(exclude={"extra"}) == old.model_dump(exclude={"extra"})
    assert len(new.steps[-1].messages) == 11


def test_a_message_id_reused_for_other_content_is_mapped_again(tmp_path: Path) -> None:
    sample = agent_sample()
    first = {"id": "m1", "role": "user", "content": "first version"}
    second = {"id": "m1", "role": "user", "content": "second version"}
    call = {"id": "c", "function": "f", "arguments": {}}
    reply = {"role": "assistant", "content": "", "tool_calls": [call]}
    sample["events"] = [
        {"event": "model", "input": [first], "output": {"choices": [{"message": reply}]}},
        {"event": "model", "input": [second], "output": {"choices": [{"message": reply}]}},
    ]
    (episode,) = by_id(synthetic_log(tmp_path, [sample])).values()
    assert [s.observation for s in episode.steps] == ["first version", "second version"]


@pytest.mark.parametrize(
    ("central", "descriptor", "declared", "expected"),
    [
        (True, False, None, "declares 8,388,608 bytes inflated, over the file's cap of 1.0 MiB"),
        (False, False, None, "declares 8,388,608 bytes inflated, over the file's cap of 1.0 MiB"),
        (False, True, None, "inflated past the cap of 1.0 MiB per member"),
        (False, False, 1000, "inflated past its declared size of 1,000 bytes"),
        (True, False, 1000, "Bad CRC-32"),  # zipfile stops at the declared size; the CRC tells the lie
    ],
)
def test_a_zip_bomb_is_a_problem_naming_the_member_and_the_cap(
    tmp_path, monkeypatch, central, descriptor, declared, expected
):
    from replay_tui.formats import inflate
    from tests.hostile import MiB, eval_bomb

    monkeypatch.setattr(inflate, "FILE_FLOOR", MiB)
    monkeypatch.setattr(inflate, "FILE_RATIO", 2)
    monkeypatch.setattr(inflate, "MEMBER_LIMIT", MiB)
    path = tmp_path / "bomb.eval"
    path.write_bytes(eval_bomb("deflate", 8 * MiB, central=central, declared=declared, descriptor=descriptor))
    items = list(READER.read(path))
    assert not [item for item in items if isinstance(item, Trajectory)]
    (problem,) = [item for item in items if isinstance(item, LoadProblem) and item.severity == "error"]
    assert problem.field == "samples/1_epoch_1.json" and expected in problem.message


def test_a_file_whose_inflation_cap_is_spent_reads_no_further_member(tmp_path, monkeypatch):
    from replay_tui.formats import inflate
    from tests.hostile import MiB, _eval_header, _zip, deflate_bomb

    monkeypatch.setattr(inflate, "FILE_FLOOR", 4 * MiB)
    monkeypatch.setattr(inflate, "FILE_RATIO", 1)
    members = [(f"samples/{n}_epoch_1.json", 8, deflate_bomb(3 * MiB), 0, 3 * MiB) for n in (1, 2, 3)]
    path = tmp_path / "bombs.eval"
    path.write_bytes(_zip([_eval_header(), *members]))
    problems = [item.one_line() for item in READER.read(path) if isinstance(item, LoadProblem)]
    assert len(problems) == 3, problems
    assert "Bad CRC-32" in problems[0]  # the first inflates within the cap (its CRC is made up)
    assert "declares 3,145,728 bytes inflated, over the file's cap of 4.0 MiB" in problems[1]
    assert "1 more samples not read: the file's inflation cap is spent" in problems[2]


# --- zstd members (inspect_ai >= 0.3.206 writes them by default) -----------------------------------


def test_a_zstd_eval_written_by_inspect_ai_reads_as_its_deflate_twin() -> None:
    """Issue 31 (1): every member of a current .eval is zstd (method 93), which Python 3.11's zipfile
    cannot open: each sample was an "unreadable member" problem."""
    with zipfile.ZipFile(ZSTD) as archive:
        assert {info.compress_type for info in archive.infolist()} == {93}
    zstd, deflate = by_id(ZSTD), by_id(ZSTD_DEFLATE)
    assert list(zstd) == ["1", "2", "3"]
    assert [t.model_dump(mode="json") for t in zstd.values()] == [t.model_dump(mode="json") for t in deflate.values()]
    first = zstd["1"].steps[0]
    assert first.action is not None and first.action.name == "lookup" and first.action.arguments == {"query": "q0"}
    assert first.tool_result == "records for q0: 3 flights, 1 refund"
    assert zstd["1"].metadata["model"] == "mockllm/model"
    assert all(t.outcome.success for t in zstd.values())  # includes() found ANSWER


def test_a_truncated_zstd_eval_reads_from_its_local_headers(tmp_path) -> None:
    data = ZSTD.read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: data.rindex(b"PK\x01\x02", 0, data.index(b"PK\x05\x06"))])  # no central directory
    trajectories, problems = read(cut)
    assert [p.severity for p in problems] == ["warning"] and "damaged zip" in problems[0].message
    whole = by_id(ZSTD).values()
    assert [t.model_dump(mode="json") for t in trajectories] == [t.model_dump(mode="json") for t in whole]


def test_a_damaged_zstd_member_is_a_problem_naming_it(tmp_path) -> None:
    data = bytearray(ZSTD.read_bytes())
    with zipfile.ZipFile(ZSTD) as archive:
        info = archive.getinfo("samples/2_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 20 : start + 60] = bytes(40)
    path = tmp_path / "damaged.eval"
    path.write_bytes(bytes(data))
    trajectories, problems = read(path)
    assert [t.id for t in trajectories] == ["1", "3"]
    (problem,) = problems
    assert problem.field == "samples/2_epoch_1.json" and problem.message.startswith("unreadable member")


@pytest.mark.parametrize(
    ("central", "declared", "expected"),
    [
        (True, None, "declares 8,388,608 bytes inflated, over the file's cap of 1.0 MiB"),
        (False, None, "declares 8,388,608 bytes inflated, over the file's cap of 1.0 MiB"),
        (True, 1000, "inflated past its declared size of 1,000 bytes"),
        (False, 1000, "inflated past its declared size of 1,000 bytes"),
    ],
)
def test_a_zstd_bomb_is_a_problem_naming_the_member_and_the_cap(tmp_path, monkeypatch, central, declared, expected):
    from replay_tui.formats import inflate
    from tests.hostile import MiB, eval_bomb

    monkeypatch.setattr(inflate, "FILE_FLOOR", MiB)
    monkeypatch.setattr(inflate, "FILE_RATIO", 2)
    monkeypatch.setattr(inflate, "MEMBER_LIMIT", MiB)
    path = tmp_path / "bomb.eval"
    path.write_bytes(eval_bomb("zstd", 8 * MiB, central=central, declared=declared))
    items = list(READER.read(path))
    assert not [item for item in items if isinstance(item, Trajectory)]
    (problem,) = [item for item in items if isinstance(item, LoadProblem) and item.severity == "error"]
    assert problem.field == "samples/1_epoch_1.json" and expected in problem.message


def test_a_zstd_member_is_counted_as_it_inflates() -> None:
    """A member that lies about nothing still stops at the cap, a slice of input at a time."""
    from replay_tui.formats.inflate import Budget, InflateLimit
    from tests.hostile import MiB, zstd_bomb

    budget = Budget(0)
    budget.limit = 3 * MiB
    with pytest.raises(InflateLimit, match="inflated past the file's cap"):
        budget.inflate_zstd(zstd_bomb(64 * MiB), None)
    assert 3 * MiB < budget.used < 4 * MiB


# --- the outcome, against the file read independently ----------------------------------------------


def member_bytes(archive: zipfile.ZipFile, name: str) -> bytes:
    """A zip member's bytes; zstd members (method 93, which Python 3.11's zipfile cannot read) are
    inflated here with the zstd library, from the local header the central directory points at."""
    info = archive.getinfo(name)
    if info.compress_type != 93:
        return archive.read(name)
    from backports import zstd

    raw = Path(str(archive.filename)).read_bytes()
    name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    return zstd.decompress(raw[start : start + info.compress_size])


def raw_samples(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The log's header and samples read with the standard library and zstd only (not through the reader)."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            header = json.loads(member_bytes(archive, "header.json")) if "header.json" in names else {}
            samples = [json.loads(member_bytes(archive, n)) for n in names if n.startswith("samples/")]
        return header, samples
    log = json.loads(path.read_bytes())
    return log, log.get("samples") or []


def resolved(sample: dict[str, Any], value: Any) -> Any:
    attachments = sample.get("attachments") or {}
    if isinstance(value, str) and value.startswith("attachment://"):
        return attachments.get(value[len("attachment://") :], value)
    return value


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_target_answer_and_explanation_of_every_sample_are_the_files(path: Path) -> None:
    _header, samples = raw_samples(path)
    trajectories = {(str(t.extra["sample_id"]), t.extra["epoch"]): t for t in read(path)[0]}
    assert len(trajectories) == len(samples)
    for sample in samples:
        outcome = trajectories[(str(sample["id"]), sample.get("epoch"))].outcome
        target = resolved(sample, sample.get("target"))
        assert outcome.target == ("".join(target) if isinstance(target, list) else target)
        scores = sample.get("scores") or {}
        first = next(iter(scores.values()), {})
        completion = resolved(sample, (sample.get("output") or {}).get("completion"))
        assert outcome.answer == (completion or first.get("answer") or None)
        assert outcome.explanation == (first.get("explanation") or None)
        checks = [(c.name, c.value) for c in outcome.checks]
        assert json.dumps(checks) == json.dumps([(name, s["value"]) for name, s in scores.items()])  # NaN too
        value = first.get("value")
        if value in ("C", "I"):
            assert outcome.success is (value == "C") and outcome.checks[0].passed is (value == "C")
        if sample.get("error"):
            assert outcome.kind == "errored" and outcome.error


def test_outcomes_of_the_real_logs_in_their_words() -> None:
    (mmlu,) = by_id(DATA / "mmlu-summary-choices.eval").values()
    outcome = mmlu.outcome
    assert (outcome.target, outcome.answer, outcome.explanation) == ("A", "ANSWER: C", "ANSWER: C")
    assert outcome.kind == "failed" and outcome.reason == "choice: ANSWER: C"
    popularity = by_id(POPULARITY)
    assert popularity["3"].outcome.target == " Yes" and popularity["3"].outcome.answer == "No"
    assert popularity["3"].outcome.failed_checks[0].name == "match"


def test_an_errored_sample_and_scores_inspect_reads_as_numbers(tmp_path: Path) -> None:
    errored = agent_sample()
    errored.pop("limit")
    errored["error"] = {"message": "RuntimeError: sandbox died", "traceback": "..."}
    errored["scores"] = {}
    graded = agent_sample()
    graded["id"] = "s2"
    graded["target"] = ["4", "four"]
    graded["output"] = {"completion": ""}
    graded["scores"] = {
        "fact": {"value": "P", "answer": "4?", "explanation": "partly"},
        "num": {"value": "1.0"},
        "words": {"value": "Yes"},
        "odd": {"value": {"a": 1}},
    }
    graded["limit"] = {"type": "token", "limit": 100}
    trajectories = by_id(synthetic_log(tmp_path, [errored, graded]))
    broke = trajectories["s1"].outcome
    assert broke.kind == "errored" and broke.error == "RuntimeError: sandbox died" and broke.status == "error"
    assert broke.success is None and broke.reason == "RuntimeError: sandbox died"
    partial = trajectories["s2"].outcome
    assert [c.passed for c in partial.checks] == [False, True, True, None]  # P is 0.5: partial credit
    assert partial.reward == 0.5 and partial.success is False and partial.status == "token_limit"
    assert partial.target == "4four" and partial.answer == "4?" and partial.explanation == "partly"
    assert partial.reason == "fact: partly"


def test_the_headline_scorer_a_log_declares_decides(tmp_path: Path) -> None:
    sample = agent_sample()
    sample["scores"] = {"first": {"value": "I"}, "main": {"value": "C", "explanation": "right"}}
    path = synthetic_log(tmp_path, [sample], results={"headline": {"scorer": "main", "score": "main"}})
    (episode,) = by_id(path).values()
    assert episode.outcome.success is True and episode.outcome.reward == 1.0
    assert episode.outcome.explanation == "right"
    assert [c.name for c in episode.outcome.checks] == ["first", "main"]  # in the log's order


def test_an_unscored_sample_written_by_inspect_ai_loads_with_its_nan_value() -> None:
    """inspect_ai writes ``Score.unscored`` as the JSON constant NaN, which orjson refuses: the sample
    was a problem ("not valid JSON") and its episode lost."""
    trajectories = by_id(DATA / "answers_unscored.eval")
    outcome = trajectories["secret"].outcome
    (check,) = outcome.checks
    assert check.passed is None and math.isnan(check.value) and check.detail == "refused: left unscored"
    assert outcome.reward is None and outcome.success is None and outcome.kind == "unknown"
    assert (outcome.target, outcome.answer) == ("hunter2", "I cannot say")
    assert trajectories["sum"].outcome.success is True
    assert [step.answer for step in trajectories["secret"].steps] == ["I cannot say"]


def test_a_log_written_without_samples_lists_their_outcomes_from_summaries(tmp_path: Path) -> None:
    """``--no-log-samples``: only header.json and summaries.json; before, "no samples in this log"."""
    path = tmp_path / "no_samples.eval"
    with zipfile.ZipFile(POPULARITY) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name in source.namelist():
            if not name.startswith("samples/"):
                target.writestr(name, source.read(name))
        summaries = json.loads(source.read("summaries.json"))
    trajectories, problems = read(path)
    assert [p.severity for p in problems] == ["warning"] and "10 outcomes from summaries.json" in problems[0].message
    assert [t.id for t in trajectories] == [str(s["id"]) for s in summaries]
    for trajectory, summary in zip(trajectories, summaries, strict=True):
        assert trajectory.steps == [] and trajectory.task == summary["input"]
        assert trajectory.outcome.target == summary["target"]
        assert trajectory.outcome.success is (summary["scores"]["match"]["value"] == "C")


def test_attachments_resolve_in_one_pass_over_a_deep_sample(tmp_path: Path) -> None:
    """Attachments are resolved once per sample by an iterative walk: a sample nested deeper than
    Python's recursion limit (orjson reads up to 1024 levels) loads, its references resolved."""
    sample = agent_sample()
    sample["scores"]["check"]["metadata"] = {"deep": "DEEP"}
    sample["attachments"] = {**sample.get("attachments", {}), "deep": "found it", "input": "the task, attached"}
    sample["input"] = "attachment://input"
    path = synthetic_log(tmp_path, [sample])  # orjson writes 255 levels at most: the deep list by hand
    path.write_bytes(path.read_bytes().replace(b'"DEEP"', b"[" * 1000 + b'"attachment://deep"' + b"]" * 1000))
    [trajectory], problems = read(path)
    assert not problems, [p.one_line() for p in problems]
    assert trajectory.task == "the task, attached"
    inner = trajectory.outcome.scores["check"]["metadata"]["deep"]
    for _ in range(1000):
        inner = inner[0]
    assert inner == "found it"
