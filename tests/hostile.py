"""A corpus of hostile demo files: every field and every encoding attacked, one file each.

Each :class:`Case` holds the file's bytes and what must come of it: the session ids that load as
valid episodes (after every episode is parsed) and the exit code of
``replay-tui replay --demos F --all --mode stub``. The small cases are also kept as files in
``tests/data/hostile/`` (``python -m tests.hostile tests/data/hostile`` writes them; a test checks they
match); the deep-nesting and huge-number cases are built here at test time.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEEP = 5000
"""Nesting depth of the deep cases (msgspec and the json module recurse past ~1,000)."""
DIGITS = 5000
"""Digits of the huge-integer cases (Python refuses to convert more than 4,300)."""
FIXTURE_LIMIT = 8 * 1024
"""Cases up to this size are kept as fixture files; larger ones are only generated."""


def step(number: Any = 0, **overrides: Any) -> dict[str, Any]:
    """A decision step the stub policy replays exactly."""
    data: dict[str, Any] = {
        "step_number": number,
        "observation_before_llm": "WebShop [button] Search [button_]",
        "llm_action_name": "Search",
        "llm_action_arguments": {"keywords": "red mug"},
        "state": "Search",
        "available_actions": ["Search"],
        "action_executed_in_env": "search[red mug]",
        "reward": 0.0,
        "done": False,
    }
    data.update(overrides)
    return data


def good(session_id: Any = 1, **overrides: Any) -> dict[str, Any]:
    """A small valid episode: one search step, then a click that ends it."""
    data: dict[str, Any] = {
        "session_id": session_id,
        "instruction": "buy a red mug",
        "trajectory": [
            step(0),
            step(
                1,
                observation_before_llm="[button] B0RED [button_] red mug",
                llm_action_name="select_item",
                llm_action_arguments={"item_id": "B0RED"},
                state="Result",
                available_actions=["select_item", "Back_to_Search"],
                action_executed_in_env="click[B0RED]",
                reward=1.0,
                done=True,
            ),
        ],
        "final_reward": 1.0,
        "success": True,
        "completed_by_backup": False,
    }
    data.update(overrides)
    return data


def js(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def array(*parts: bytes | dict[str, Any]) -> bytes:
    """A JSON array of episodes, given as dicts or as raw JSON bytes, one per line."""
    return b"[\n" + b",\n".join(p if isinstance(p, bytes) else js(p) for p in parts) + b"\n]\n"


def lines(*parts: bytes | dict[str, Any]) -> bytes:
    """JSON Lines: one episode per line."""
    return b"\n".join(p if isinstance(p, bytes) else js(p) for p in parts) + b"\n"


def splice(template: dict[str, Any], marker: str, raw: bytes) -> bytes:
    """The episode ``template`` as JSON with the string value ``marker`` replaced by raw JSON bytes."""
    return js(template).replace(js(marker), raw)


def deep_array(depth: int = DEEP) -> bytes:
    return b"[" * depth + b"]" * depth


def deep_object(depth: int = DEEP) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


BIG = b"9" * DIGITS


@dataclass(frozen=True)
class Case:
    name: str
    data: bytes
    valid: frozenset[int]
    """Session ids that load as valid episodes once every episode is parsed."""
    exit: int
    """Exit code of ``replay --all --mode stub``: 0 replayed, 2 unreadable or nothing usable."""
    row: str
    """The row of issue 19's table (or the family) the case belongs to."""

    @property
    def suffix(self) -> str:
        return ".jsonl" if self.name.endswith("_jsonl") else ".json"

    @property
    def filename(self) -> str:
        return self.name.removesuffix("_jsonl") + self.suffix

    def write(self, folder: Path) -> Path:
        path = folder / self.filename
        path.write_bytes(self.data)
        return path


def _cases() -> list[Case]:
    cases: list[Case] = []

    def add(name: str, data: bytes, valid: set[int] | tuple[int, ...] = (), exit: int | None = None, *, row: str):
        usable = frozenset(valid)
        cases.append(Case(name, data, usable, (0 if usable else 2) if exit is None else exit, row))

    g1, g3 = good(1), good(3)
    truncated_tail = b",\n" + js(good(4))[:40]  # an episode cut short: the file ends inside it

    # -- JSON nested thousands of levels deep ------------------------------------------------
    row = "deep nesting"
    add("deep_top_array", deep_array(), row=row)
    add("deep_top_object_jsonl", deep_object(), row=row)
    add("deep_unclosed", b"[" * DEEP, row=row)
    add("deep_after_good", array(g1, deep_array()), {1}, row=row)
    add("deep_in_episode", array(g1, splice(good(2, extra="@"), "@", deep_array()), g3), {1, 3}, row=row)
    add("deep_objects_in_episode", array(g1, splice(good(2, extra="@"), "@", deep_object()), g3), {1, 3}, row=row)
    deep_step = good(2)
    deep_step["trajectory"][0]["llm_action_arguments"] = {"keywords": "@"}
    add("deep_in_step", array(g1, splice(deep_step, "@", deep_array()), g3), {1, 3}, row=row)
    add("deep_in_session_id", array(g1, splice(good("@"), "@", deep_array()), g3), {1, 3}, row=row)
    add("deep_in_episode_jsonl", lines(g1, splice(good(2, extra="@"), "@", deep_object()), g3), {1, 3}, row=row)
    add(
        "deep_in_truncated_file",
        array(g1, splice(good(2, extra="@"), "@", deep_array()), g3)[:-3] + truncated_tail,
        {1, 3},
        2,
        row=row,
    )
    add("deep_200_levels", array(g1, splice(good(2, extra="@"), "@", deep_array(200)), g3), {1, 3}, row=row)
    add(
        "deep_brackets_inside_a_string",
        array(g1, good(2, instruction="[" * DEEP + "{" * 10), g3),
        {1, 2, 3},
        row=row,
    )
    add(
        "deep_prompt_text",
        array(g1, good(2, trajectory=[step(0, llm_prompt="[" * DEEP + "]" * DEEP)]), g3),
        {1, 2, 3},
        row=row,
    )

    # -- numbers out of range ---------------------------------------------------------------
    row = "numbers out of range"
    big_reward = good(2)
    big_reward["trajectory"][1]["reward"] = "@"
    add("float_overflow_reward", array(g1, splice(big_reward, "@", b"1e400"), g3), {1, 3}, row=row)
    add("float_overflow_final_reward", array(g1, splice(good(2, final_reward="@"), "@", b"1e400"), g3), {1, 3}, row=row)
    add("float_overflow_negative", array(g1, splice(good(2, final_reward="@"), "@", b"-1e400"), g3), {1, 3}, row=row)
    add("float_overflow_session_id", array(g1, splice(good("@"), "@", b"1e400"), g3), {1, 3}, row=row)
    add("float_overflow_extra_field", array(g1, splice(good(2, debug="@"), "@", b"1e400"), g3), {1, 3}, row=row)
    add("float_overflow_jsonl", lines(g1, splice(good(2, final_reward="@"), "@", b"1e400"), g3), {1, 3}, row=row)
    add(
        "float_overflow_truncated",
        array(g1, splice(good(2, final_reward="@"), "@", b"1e400"), g3)[:-3] + truncated_tail,
        {1, 3},
        2,
        row=row,
    )
    add("float_underflow_is_zero", array(g1, splice(good(2, final_reward="@"), "@", b"1e-400"), g3), {1, 2, 3}, row=row)
    add("big_int_session_id", array(g1, splice(good("@"), "@", BIG), g3), {1, 3}, row=row)
    add("big_int_session_id_jsonl", lines(g1, splice(good("@"), "@", BIG), g3), {1, 3}, row=row)
    add(
        "big_int_session_id_truncated",
        array(g1, splice(good("@"), "@", BIG), g3)[:-3] + truncated_tail,
        {1, 3},
        2,
        row=row,
    )
    big_step = good(2)
    big_step["trajectory"][0]["step_number"] = "@"
    add("big_int_step_number", array(g1, splice(big_step, "@", BIG), g3), {1, 3}, row=row)
    big_extra = good(2)
    big_extra["trajectory"][0]["tokens"] = "@"
    add("big_int_in_step_extra", array(g1, splice(big_extra, "@", BIG), g3), {1, 3}, row=row)
    add("big_int_reward_string", array(g1, good(2, final_reward="9" * DIGITS), g3), {1, 3}, row=row)
    add("huge_session_id_2_70", array(g1, splice(good("@"), "@", str(2**70).encode()), g3), {1, 3}, row=row)
    add("huge_session_id_2_63", array(g1, splice(good("@"), "@", str(2**63).encode()), g3), {1, 3}, row=row)
    add("huge_session_id_negative", array(g1, splice(good("@"), "@", str(-(2**63) - 1).encode()), g3), {1, 3}, row=row)
    add("largest_session_id", array(g1, good(2**63 - 1), g3), {1, 2**63 - 1, 3}, row=row)
    add("float_id_1e300", array(g1, splice(good("@"), "@", b"1e300"), g3), {1, 3}, row=row)
    add("session_id_string_1e400", array(g1, good("1e400"), g3), {1, 3}, row=row)
    add("reward_string_inf", array(g1, good(2, final_reward="inf"), g3), {1, 3}, row=row)
    add("reward_string_nan", array(g1, good(2, final_reward="NaN"), g3), {1, 3}, row=row)
    # Python's json writes NaN/Infinity: a problem on the field, the file itself is fine (exit 0)
    add("nan_literal", array(g1, splice(good(2, final_reward="@"), "@", b"NaN"), g3), {1, 3}, row=row)
    add("infinity_literal", array(g1, splice(good(2, final_reward="@"), "@", b"Infinity"), g3), {1, 3}, row=row)

    # -- wrong-typed ids -------------------------------------------------------------------
    row = "wrong-typed ids"
    add("session_id_float_integer", array(g1, splice(good("@"), "@", b"2.0"), g3), {1, 2, 3}, row=row)
    add("session_id_float_fraction", array(g1, good(2.5), g3), {1, 3}, row=row)
    add("session_id_list", array(g1, good([1, 2]), g3), {1, 3}, row=row)
    add("session_id_object", array(g1, good({"id": 2}), g3), {1, 3}, row=row)
    add("session_id_bool", array(g1, good(True), g3), {1, 3}, row=row)
    add("session_id_null", array(g1, good(None), g3), {1, 3}, row=row)
    add("session_id_empty_string", array(g1, good(""), g3), {1, 3}, row=row)
    add("session_id_text", array(g1, good("two"), g3), {1, 3}, row=row)
    add("session_id_padded_string", array(g1, good(" 2 "), g3), {1, 2, 3}, row=row)
    add("session_id_string_float", array(g1, good("2.0"), g3), {1, 2, 3}, row=row)
    add("session_id_float_jsonl", lines(g1, good(2.5), g3), {1, 3}, row=row)
    add("session_id_list_truncated", array(g1, good([1, 2]), g3)[:-3] + truncated_tail, {1, 3}, 2, row=row)
    add("session_id_duplicate_as_float", array(g1, splice(good("@"), "@", b"1.0"), g3), {1, 3}, row=row)
    add("session_id_escape_sequences", array(g1, good("\x1b[31mred\x1b]0;title\x07"), g3), {1, 3}, row=row)
    add("session_id_markup", array(g1, good("[bold red]x[/]"), g3), {1, 3}, row=row)
    add("session_id_long_string", array(g1, good("x" * 100_000), g3), {1, 3}, row=row)
    for value, tag in ((0.0, "float_integer"), (0.5, "float_fraction"), ([0], "list"), (False, "bool")):
        typed = good(2)
        typed["trajectory"][0]["step_number"] = value
        add(f"step_number_{tag}", array(g1, typed, g3), {1, 2, 3} if tag == "float_integer" else {1, 3}, row=row)

    # -- encodings --------------------------------------------------------------------------
    row = "encodings"

    def with_instruction(raw: bytes) -> bytes:
        return array(g1, splice(good(2, instruction="@"), "@", raw), g3)

    text = array(g1, good(2, instruction="café crème brûlée"), g3).decode("utf-8")
    add("utf8_bom", b"\xef\xbb\xbf" + text.encode("utf-8"), {1, 2, 3}, row=row)
    add("utf8_bom_jsonl", b"\xef\xbb\xbf" + lines(g1, good(2, instruction="café"), g3), {1, 2, 3}, row=row)
    for codec, bom in (
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
        ("utf-32-le", b"\xff\xfe\x00\x00"),
        ("utf-32-be", b"\x00\x00\xfe\xff"),
    ):
        tag = codec.replace("-", "")
        add(f"{tag}_bom", bom + text.encode(codec), {1, 2, 3}, row=row)
        add(f"{tag}_no_bom", text.encode(codec), {1, 2, 3}, row=row)
    add("utf16le_odd_length", b"\xff\xfe" + text.encode("utf-16-le")[:-1], {1, 2, 3}, 2, row=row)
    add(
        "utf16le_lone_surrogate",
        b"\xff\xfe" + text.encode("utf-16-le").replace("é".encode("utf-16-le"), b"\x00\xd8", 1),
        {1},
        2,
        row=row,
    )
    add("latin1_file", text.encode("latin-1"), {1, 3}, row=row)
    add(
        "latin1_everywhere",
        array(*(good(i, instruction=word) for i, word in ((1, "thé"), (2, "café"), (3, "crème"))))
        .decode()
        .encode("latin-1"),
        set(),
        row=row,
    )
    add("cp1252_quotes", array(g1, good(2, instruction="“quoted”"), g3).decode().encode("cp1252"), {1, 3}, row=row)
    invalid_obs = good(2)
    invalid_obs["trajectory"][1]["observation_before_llm"] = "@"
    add("invalid_utf8_in_observation", array(g1, splice(invalid_obs, "@", b'"bad \xff\xfe"'), g3), {1, 3}, row=row)
    add("invalid_utf8_in_instruction", with_instruction(b'"caf\xe9"'), {1, 3}, row=row)
    add("invalid_utf8_in_key", array(g1, js(good(2)).replace(b'"instruction"', b'"in\xc3x"'), g3), {1, 3}, row=row)
    add("invalid_utf8_jsonl", lines(g1, splice(good(2, instruction="@"), "@", b'"caf\xe9"'), g3), {1, 3}, row=row)
    add(
        "invalid_utf8_truncated",
        array(g1, splice(good(2, instruction="@"), "@", b'"caf\xe9"'), g3)[:-3] + truncated_tail,
        {1, 3},
        2,
        row=row,
    )
    add("overlong_utf8", with_instruction(b'"\xc0\xaf"'), {1, 3}, row=row)
    add("utf8_encoded_surrogate", with_instruction(b'"\xed\xa0\x80"'), {1, 3}, row=row)
    add("lone_surrogate_escape", with_instruction(b'"\\ud800"'), {1, 3}, 2, row=row)
    add("garbage_byte_between_episodes", array(g1, g3).replace(b",\n", b",\xff\n", 1), {1, 3}, 2, row=row)
    add("nul_bytes_in_string", with_instruction(b'"a\x00b"'), {1, 3}, 2, row=row)
    add("gzip_named_json", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\xae\x05\x00", row=row)
    add("binary_after_bracket", b"[" + bytes(range(256)), row=row)
    add("unknown_bom_like_bytes", b"\xfe\xfe\xfe" + text.encode(), row=row)

    # -- top-level shapes -------------------------------------------------------------------
    row = "top-level shapes"
    add("top_object_wrapper", js({"episodes": [g1, g3]}), row=row)
    add("top_object_empty", b"{}", row=row)
    add("top_array_numbers", b"[1, 2, 3]", row=row)
    add("top_array_empty", b"[]", row=row)
    add("top_array_mixed", b'[null, true, "x", 1.5, [], {}]', row=row)
    add("top_array_of_arrays", js([[g1], [g3]]), row=row)
    add("top_string", b'"hello"', row=row)
    add("top_number", b"42", row=row)
    add("top_null", b"null", row=row)
    add("only_whitespace", b" \n\t\r\n ", row=row)
    add("empty_file", b"", row=row)
    add("single_episode_object", js(good(7)), {7}, row=row)
    add("jsonl_numbers_jsonl", b"1\n2\n3\n", row=row)
    add("jsonl_crlf_blank_lines_jsonl", js(g1) + b"\r\n\r\n" + js(g3) + b"\r\n", {1, 3}, row=row)
    # a bad line is one bad record, like a bad episode: the file is usable (exit 0)
    add("jsonl_garbage_line_jsonl", lines(g1, b"not json at all", g3), {1, 3}, row=row)
    add("jsonl_wrapper_object_jsonl", lines({"episodes": [g1]}, g3), {3}, row=row)
    add("trailing_comma", array(g1, g3)[:-3] + b",\n]\n", {1, 3}, 2, row=row)
    add("line_comments", b"// demos\n" + array(g1, g3), row=row)
    add("python_repr_not_json", repr([g1, g3]).encode(), row=row)
    add("duplicate_keys", array(g1, js(good(2))[:-1] + b', "session_id": 3}'), {1, 3}, row=row)
    add("trailing_garbage", array(g1, g3) + b"}}]]garbage", {1, 3}, 2, row=row)

    # -- fields of the wrong shape ----------------------------------------------------------
    row = "field shapes"
    add("trajectory_numbers", array(g1, good(2, trajectory=[1, 2, 3]), g3), {1, 3}, row=row)
    add("trajectory_object", array(g1, good(2, trajectory={"0": step(0)}), g3), {1, 3}, row=row)
    add("trajectory_missing", array(g1, {"session_id": 2}, g3), {1, 3}, row=row)
    add("trajectory_null", array(g1, good(2, trajectory=None), g3), {1, 3}, row=row)
    add("trajectory_empty", array(g1, good(2, trajectory=[]), g3), {1, 2, 3}, row=row)
    add("step_number_object", array(g1, good(2, trajectory=[step({"n": 0})]), g3), {1, 3}, row=row)
    add("arguments_list", array(g1, good(2, trajectory=[step(0, llm_action_arguments=[1])]), g3), {1, 3}, row=row)
    add(
        "arguments_bad_json_string",
        array(g1, good(2, trajectory=[step(0, llm_action_arguments="{oops", action_executed_in_env="")]), g3),
        {1, 3},
        row=row,
    )
    add("instruction_list", array(g1, good(2, instruction=["a"]), g3), {1, 3}, row=row)
    add("instruction_number", array(g1, good(2, instruction=5), g3), {1, 3}, row=row)
    add("success_maybe", array(g1, good(2, success="maybe"), g3), {1, 3}, row=row)
    add("backup_number", array(g1, good(2, completed_by_backup=2), g3), {1, 3}, row=row)
    add("final_reward_text", array(g1, good(2, final_reward="lots"), g3), {1, 3}, row=row)
    odd_event = good(2, trajectory=[*good(2)["trajectory"], {"type": 5}])
    add("sub_event_type_number", array(g1, odd_event, g3), {1, 3}, row=row)
    add("long_instruction", array(g1, good(2, instruction="x" * 200_000), g3), {1, 2, 3}, row=row)
    deep_arguments = step(0, llm_action_arguments="[" * DEEP + "]" * DEEP)
    add("arguments_deep_json_string", array(g1, good(2, trajectory=[deep_arguments]), g3), {1, 3}, row=row)
    odd_prompt = "[{1: 2}, 'text', {'role': 'user', 'content': 'x', 'model_config': 1}]"
    add("prompt_not_a_message", array(g1, good(2, trajectory=[step(0, llm_prompt=odd_prompt)]), g3), {1, 2, 3}, row=row)
    big_prompt = "[{'role': 'user', 'content': 1" + "0" * DIGITS + "}]"
    add("prompt_huge_integer", array(g1, good(2, trajectory=[step(0, llm_prompt=big_prompt)]), g3), {1, 2, 3}, row=row)
    message_prompt = "[{'role': ['a'], 'content': {'text': 5}}]"
    add("prompt_odd_types", array(g1, good(2, trajectory=[step(0, llm_prompt=message_prompt)]), g3), {1, 2, 3}, row=row)
    return cases


CASES: list[Case] = _cases()
BY_NAME: dict[str, Case] = {case.name: case for case in CASES}
assert len(BY_NAME) == len(CASES), "case names must be unique"
assert len({case.filename for case in CASES}) == len(CASES), "file names must be unique"


def fixture_cases() -> list[Case]:
    """The cases small enough to be kept as files in ``tests/data/hostile/``."""
    return [case for case in CASES if len(case.data) <= FIXTURE_LIMIT]


def write_corpus(folder: Path, cases: list[Case] | None = None) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return {case.name: case.write(folder) for case in (CASES if cases is None else cases)}


if __name__ == "__main__":  # python -m tests.hostile tests/data/hostile
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/hostile")
    written = write_corpus(target, fixture_cases())
    print(f"wrote {len(written)} fixture files to {target}")
