"""A corpus of hostile demo files: every field and every encoding attacked, one file each.

Each :class:`Case` holds the file's bytes and what must come of it: the session ids that load as
valid episodes (after every episode is parsed) and the exit code of
``replay-tui replay --demos F --all --mode stub``. The small cases are also kept as files in
``tests/data/hostile/`` (``python -m tests.hostile tests/data/hostile`` writes them; a test checks they
match); the deep-nesting and huge-number cases are built here at test time.
"""

from __future__ import annotations

import gzip
import json
import lzma
import pickle
import struct
import sys
import zlib
from collections.abc import Callable
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

    # -- terminal escape sequences in the text of a log (issue 27: OSC 0 retitles, OSC 52 writes the clipboard)
    row = "escape sequences"
    osc = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1bP+q\x1b\\\x9b31m"
    add(
        "escapes_in_step_text",
        array(
            g1,
            good(
                2,
                instruction=f"buy{osc} a mug",
                trajectory=[
                    step(
                        0,
                        state=f"Search{osc}",
                        observation_before_llm=f"obs{osc}",
                        llm_thinking=f"think{osc}",
                        available_actions=[f"Search{osc}"],
                    )
                ],
            ),
            g3,
        ),
        {1, 2, 3},
        row=row,
    )
    add(
        "escapes_in_action",
        array(g1, good(2, trajectory=[step(0, action_executed_in_env=f"search[mug{osc}]")]), g3),
        {1, 2, 3},
        1,
        row=row,
    )

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


# == Expansion, depth and cost limits (issue 27, items 4-7) =======================================
# Inputs of other formats, built at test time into a folder (the big ones never live in the tree):
# each :class:`LimitCase` writes its input and says which exit codes ``replay --all --mode stub``
# may end with. ``tests/core/test_hostile_limits.py`` runs each in a process under a memory limit.

GiB = 2**30
MiB = 2**20
BOMBS = Path(__file__).resolve().parent / "data" / "bombs"
"""Bombs whose building costs seconds, kept as files (``tests/data/bombs/make.py`` writes them)."""
LZMA_BOMB = BOMBS / "eval_lzma_bomb.eval"
"""``eval_bomb("lzma", GiB)``: 150 KB that inflate to 1 GiB; compressing the GiB takes ~6 s of CPU."""


def _zip(members: list[tuple[str, int, bytes, int, int]], *, central: bool = True, descriptor: bool = False) -> bytes:
    """A zip of ``(name, method, compressed bytes, crc, declared size)`` members, written by hand so
    a member can declare any size and a bomb never has to exist inflated."""
    out = bytearray()
    directory = bytearray()
    for name, method, raw, crc, size in members:
        encoded = name.encode()
        zip64 = size >= 0xFFFFFFFF or len(raw) >= 0xFFFFFFFF
        extra = struct.pack("<HHQQ", 1, 16, size, len(raw)) if zip64 else b""
        sizes = (0xFFFFFFFF, 0xFFFFFFFF) if zip64 else (len(raw), size)
        offset = len(out)
        version = 63 if method == 14 else 45 if zip64 else 20
        flags = 0x02 if method == 14 else 0  # LZMA: an end-of-stream marker is present
        if descriptor:  # sizes and CRC after the data (a zip being streamed): the local header says 0
            flags |= 0x08
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, version, flags, method, 0, 0x21, 0, 0, 0, len(encoded), 0)
            out += encoded + raw + struct.pack("<IIII", 0x08074B50, crc, len(raw), size & 0xFFFFFFFF)
        else:
            out += struct.pack(
                "<IHHHHHIIIHH", 0x04034B50, version, flags, method, 0, 0x21, crc, *sizes, len(encoded), len(extra)
            )
            out += encoded + extra + raw
        central_extra = struct.pack("<HHQQQ", 1, 24, size, len(raw), offset) if zip64 else b""
        directory += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50, version, version, flags, method, 0, 0x21, crc, *sizes,
            len(encoded), len(central_extra), 0, 0, 0, 0, 0xFFFFFFFF if zip64 else offset,
        )  # fmt: skip
        directory += encoded + central_extra
    if central:
        start = len(out)
        out += directory
        count = len(members)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(directory), start, 0)
    return bytes(out)


def _deflated(text: bytes) -> tuple[bytes, int]:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(text) + packer.flush(), len(text)


def deflate_bomb(size: int, prefix: bytes = b'{"id": 1, "pad": "') -> bytes:
    """A raw deflate stream of ``prefix`` then spaces that inflates to ``size`` bytes: one full-flushed
    MiB of spaces (about a KiB compressed, independent of what came before) repeated."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = packer.compress(prefix) + packer.flush(zlib.Z_FULL_FLUSH)
    block = packer.compress(b" " * MiB) + packer.flush(zlib.Z_FULL_FLUSH)
    blocks, rest = divmod(size - len(prefix), MiB)
    return head + block * blocks + packer.compress(b" " * rest) + packer.flush()


def lzma_bomb(size: int) -> bytes:
    """A zip LZMA member (version, properties, raw LZMA1 stream) of ``size`` zero bytes."""
    props = 0x5D.to_bytes(1, "little") + (1 << 18).to_bytes(4, "little")  # lc=3 lp=0 pb=2, the preset-0 dictionary
    packer = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA1, "preset": 0}])
    chunk = bytes(16 * MiB)
    blocks, rest = divmod(size, len(chunk))
    body = b"".join(packer.compress(chunk) for _ in range(blocks)) + packer.compress(bytes(rest)) + packer.flush()
    return struct.pack("<BBH", 9, 4, len(props)) + props + body


def zstd_bomb(size: int, prefix: bytes = b'{"id": 1, "pad": "') -> bytes:
    """A zstd member of ``prefix`` then spaces that inflates to ``size`` bytes: frames one after the
    other (as inspect_ai writes big members), one compressed 16 MiB frame repeated."""
    from replay_tui.formats.inflate import zstd

    chunk = 16 * MiB
    frame = zstd.compress(b" " * chunk)
    blocks, rest = divmod(size - len(prefix), chunk)
    return zstd.compress(prefix) + frame * blocks + zstd.compress(b" " * rest)


def _eval_header() -> tuple[str, int, bytes, int, int]:
    header = json.dumps({"version": 2, "status": "success", "eval": {"task": "bomb"}}).encode()
    raw, size = _deflated(header)
    return ("header.json", 8, raw, zlib.crc32(header), size)


def eval_bomb(
    method: str, size: int = 4 * GiB, *, central: bool = True, declared: int | None = None, descriptor: bool = False
) -> bytes:
    """An inspect_ai ``.eval`` whose one sample inflates to ``size`` bytes (``declared`` is what its
    headers say; by default the truth)."""
    if method == "lzma":
        member: tuple[str, int, bytes, int, int] = ("samples/1_epoch_1.json", 14, lzma_bomb(size), 0, size)
    elif method == "zstd":
        member = ("samples/1_epoch_1.json", 93, zstd_bomb(size), 0, size)
    else:
        member = ("samples/1_epoch_1.json", 8, deflate_bomb(size), 0, size)
    if declared is not None:
        member = (*member[:4], declared)
    return _zip([_eval_header(), member], central=central, descriptor=descriptor)


def billion_laughs_cassette(levels: int = 9) -> bytes:
    """A VCR cassette (under 1 KB) whose aliases expand to 9**levels strings wherever it is walked."""
    lines = [
        "interactions:",
        "- request:",
        "    method: POST",
        "    uri: https://api.openai.com/v1/chat/completions",
        "    headers:",
        '      l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
    ]
    for level in range(1, levels):
        lines.append(f"      l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * 9)}]")
    top = f"*l{levels - 1}"
    lines += [
        f"    body: {top}",
        "  response:",
        "    status: {code: 200, message: OK}",
        f"    headers: {top}",
        f"    body: {{string: {top}}}",
        "- request:",
        f"    uri: {top}",
        "version: 1",
    ]
    return ("\n".join(lines) + "\n").encode()


def recursive_alias_cassette() -> bytes:
    """A cassette whose interaction contains itself (an anchor used inside its own node)."""
    uri = b"https://api.openai.com/v1/chat/completions"
    return b"interactions:\n- &me\n  request: {uri: " + uri + b", body: '{}'}\n  again: *me\n"


def cassette(interactions: int) -> bytes:
    """A VCR cassette of ``interactions`` recorded /chat/completions calls, each one tool call."""
    out = ["interactions:"]
    for n in range(interactions):
        request = json.dumps({"model": "m", "messages": [{"role": "user", "content": f"task {n}"}]})
        response = json.dumps(
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {"id": f"c{n}", "type": "function", "function": {"name": "act", "arguments": "{}"}}
                            ],
                        }
                    }
                ]
            }
        )
        out += [
            "- request:",
            f"    body: {json.dumps(request)}",
            "    method: POST",
            "    uri: https://api.openai.com/v1/chat/completions",
            "  response:",
            f"    body: {{string: {json.dumps(response)}}}",
            "    status: {code: 200, message: OK}",
        ]
    return ("\n".join(out) + "\nversion: 1\n").encode()


# -- BrowserGym experiment folders (read with --allow-pickle) --------------------------------------


class _Reduce:
    """Pickles as ``function(*args)`` (how a crafted pickle calls an allowed constructor)."""

    def __init__(self, function: Any, args: tuple[Any, ...]) -> None:
        self.function, self.args = function, args

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return self.function, self.args


def _nested_pickle_value(depth: int) -> bytes:
    """Pickle opcodes (no recursion to write them) of a list nested ``depth`` deep."""
    return b"]" * depth + b"a" * (depth - 1)


def step_info(number: int, **obs: Any) -> dict[str, Any]:
    return {
        "step": number,
        "obs": {"goal": "click the button", "url": "http://localhost/", **obs},
        "action": "click('1')" if number == 0 else None,
        "reward": 0.0,
        "terminated": number > 0,
        "truncated": False,
        "agent_info": {"think": "click it"},
    }


def step_pickle(info: dict[str, Any], *, splice: bytes | None = None) -> bytes:
    """A gzipped step pickle of ``info``; the string ``"@"`` anywhere in it becomes ``splice`` (raw opcodes)."""
    data = pickle.dumps(info, protocol=2)
    if splice is not None:
        marker = pickle.dumps("@", protocol=2)[2:-1]  # BINUNICODE "@", then its BINPUT
        data = data.replace(marker[: marker.index(b"@") + 1], splice, 1)
    return gzip.compress(data, mtime=0)


def browsergym_folder(
    folder: Path,
    steps: list[bytes],
    summary: bytes | None = None,
    name: str = "2024-08-01_10-20-52_GenericAgent_on_miniwob.hostile_1",
) -> Path:
    """An experiment folder: ``summary_info.json`` and one ``step_<N>.pkl.gz`` per given pickle."""
    experiment = folder / name
    experiment.mkdir(parents=True)
    if summary is None:
        summary = json.dumps({"n_steps": len(steps), "cum_reward": 1.0, "err_msg": None, "terminated": True}).encode()
    (experiment / "summary_info.json").write_bytes(summary)
    for number, data in enumerate(steps):
        (experiment / f"step_{number}.pkl.gz").write_bytes(data)
    return experiment


def axtree(depth: int, *, cycle: bool = False) -> dict[str, Any]:
    """An AX tree that is one chain ``depth`` nodes deep (the last pointing back at the second: a cycle)."""
    nodes = []
    for n in range(depth):
        children = [str(n + 1)] if n + 1 < depth else (["1"] if cycle else [])
        nodes.append({"nodeId": str(n), "childIds": children, "role": {"value": "generic"}, "ignored": True})
    nodes[0]["role"] = {"value": "RootWebArea"}
    nodes[0]["ignored"] = False
    nodes[0]["name"] = {"value": "page"}
    return {"nodes": nodes}


def zero_stride_screenshot(side: int = 40_000) -> bytes:
    """A ~300-byte pickle whose screenshot is a ``side`` x ``side`` RGB array over one byte (strides 0)."""
    import numpy

    array = _Reduce(numpy.ndarray, ((side, side, 3), "u1", b"\x00", 0, (0, 0, 0)))
    return step_pickle(step_info(0, screenshot=array))


# -- quadratic shapes (issue 29 builds the prompts in linear memory; here only bounded) ------------


def long_chat_jsonl(messages: int = 10_000) -> bytes:
    """One OpenAI-chat episode of ``messages`` messages on one JSON Lines line (about 1 MB): every
    other message is a tool call, so each step's prompt is every message before it."""
    chat: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n in range(messages // 2):
        call = {"id": f"c{n}", "type": "function", "function": {"name": "act", "arguments": "{}"}}
        chat.append({"role": "assistant", "content": None, "tool_calls": [call]})
        chat.append({"role": "tool", "tool_call_id": f"c{n}", "content": "ok"})
    return json.dumps({"id": "long", "messages": chat[:messages]}).encode() + b"\n"


def pooled_eval(events: int = 20_000) -> bytes:
    """An ``.eval`` (about 70 KB) whose one sample has ``events`` model events, event k referring to
    the first k messages of a pool of ``events`` messages (the shape inspect_ai writes since 0.3.x)."""
    pool = [{"role": "user" if n % 2 == 0 else "assistant", "content": "m"} for n in range(events)]
    reply = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "function": "act", "arguments": {}}],
    }
    model_events = [
        {"event": "model", "input_refs": [[0, k + 1]], "output": {"choices": [{"message": reply}]}}
        for k in range(events)
    ]
    sample = {"id": 1, "epoch": 1, "events": model_events, "events_data": {"messages": pool}}
    text = json.dumps(sample).encode()
    raw, size = _deflated(text)
    return _zip([_eval_header(), ("samples/1_epoch_1.json", 8, raw, zlib.crc32(text), size)])


@dataclass(frozen=True)
class LimitCase:
    name: str
    build: Callable[[Path], Path]
    """Writes the input under the folder; returns what ``--demos`` gets."""
    exits: frozenset[int]
    row: str
    argv: tuple[str, ...] = ()
    problem: str = ""
    """Text the loader's problems must contain (the named cap or walker limit)."""


def _limit_cases() -> list[LimitCase]:
    cases: list[LimitCase] = []

    def add(
        name: str, build: Callable[[Path], bytes | Path], *, row: str, suffix: str = "", exits=(2,), argv=(), problem=""
    ):
        def write(folder: Path) -> Path:
            made = build(folder)
            if isinstance(made, Path):
                return made
            path = folder / f"{name}{suffix}"
            path.write_bytes(made)
            return path

        cases.append(LimitCase(name, write, frozenset(exits), row, tuple(argv), problem))

    row = "decompression and expansion"
    inflated = "bytes inflated, over the file's cap"
    add("eval_deflate_bomb", lambda _: eval_bomb("deflate"), row=row, suffix=".eval", problem=inflated)
    no_directory = lambda _: eval_bomb("deflate", central=False)  # noqa: E731
    add("eval_deflate_bomb_no_central_directory", no_directory, row=row, suffix=".eval", problem=inflated)
    streamed = lambda _: eval_bomb("deflate", central=False, descriptor=True)  # noqa: E731
    add("eval_deflate_bomb_streamed", streamed, row=row, suffix=".eval", problem="inflated past the cap")
    lying = lambda _: eval_bomb("deflate", declared=1000)  # noqa: E731
    add("eval_deflate_bomb_declared_small", lying, row=row, suffix=".eval", problem="Bad CRC-32")
    lying_local = lambda _: eval_bomb("deflate", central=False, declared=1000)  # noqa: E731
    problem = "past its declared size"
    add("eval_deflate_bomb_declared_small_no_directory", lying_local, row=row, suffix=".eval", problem=problem)
    add("eval_lzma_bomb", lambda _: LZMA_BOMB.read_bytes(), row=row, suffix=".eval", problem=inflated)
    add("eval_zstd_bomb", lambda _: eval_bomb("zstd"), row=row, suffix=".eval", problem=inflated)
    lying_zstd = lambda _: eval_bomb("zstd", declared=1000)  # noqa: E731
    add("eval_zstd_bomb_declared_small", lying_zstd, row=row, suffix=".eval", problem="past its declared size")
    add("yaml_billion_laughs", lambda _: billion_laughs_cassette(), row=row, suffix=".yaml", problem="aliases")
    add("yaml_recursive_alias", lambda _: recursive_alias_cassette(), row=row, suffix=".yaml", problem="aliases")

    row = "browsergym depth and size"
    allow = ("--allow-pickle",)

    def experiment(first: Callable[[], bytes] | None, summary: bytes | None = None) -> Callable[[Path], Path]:
        """A folder of two steps, the first one hostile (no steps at all: ``first`` None), built when the
        case is (not when this module is imported: the deep pickles take a second)."""
        return lambda folder: browsergym_folder(
            folder, [] if first is None else [first(), step_pickle(step_info(1))], summary
        )

    cycle: list[Any] = []
    cycle.append(cycle)
    add(
        "browsergym_pickle_cycle",
        experiment(lambda: step_pickle(step_info(0, open_pages_urls=cycle))),
        row=row,
        exits=(0,),
        argv=allow,
    )
    deep = lambda: step_pickle(step_info(0, open_pages_urls="@"), splice=_nested_pickle_value(3000))  # noqa: E731
    add("browsergym_pickle_3000_deep", experiment(deep), row=row, exits=(0,), argv=allow)
    deep_tree = lambda: step_pickle(step_info(0, axtree_object=axtree(20_000)))  # noqa: E731
    add("browsergym_axtree_20000_deep", experiment(deep_tree), row=row, exits=(0,), argv=allow)
    cyclic_tree = lambda: step_pickle(step_info(0, axtree_object=axtree(50, cycle=True)))  # noqa: E731
    add("browsergym_axtree_cycle", experiment(cyclic_tree), row=row, exits=(0,), argv=allow)
    deep_summary = b'{"n_steps": 1, "cum_reward": 1.0, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    problem = "summary_info.json"
    add(
        "browsergym_summary_100000_deep",
        experiment(lambda: step_pickle(step_info(0)), deep_summary),
        row=row,
        exits=(0,),
        argv=allow,
        problem=problem,
    )
    add("browsergym_summary_100000_deep_no_pickles", experiment(None, deep_summary), row=row, problem=problem)
    add(
        "browsergym_zero_stride_screenshot",
        experiment(zero_stride_screenshot),
        row=row,
        exits=(0,),
        argv=allow,
        problem="screenshot",
    )

    row = "quadratic prompts"
    add("chat_one_episode_10000_messages", lambda _: long_chat_jsonl(), row=row, suffix=".jsonl", exits=(0,))
    add("eval_20000_events_on_a_pool", lambda _: pooled_eval(), row=row, suffix=".eval", exits=(0,))
    return cases


QUADRATIC = frozenset({"chat_one_episode_10000_messages", "eval_20000_events_on_a_pool"})
"""The shapes that were quadratic before issue 29 (each step's prompt a list of its own); since then
a step's prompt is a view of the shared messages (:class:`replay_tui.episodes.model.MessageView`,
``input_refs`` ranges of the ``.eval`` pool) and is built on demand."""

LIMIT_CASES: list[LimitCase] = _limit_cases()
LIMITS_BY_NAME: dict[str, LimitCase] = {case.name: case for case in LIMIT_CASES}

if __name__ == "__main__":  # python -m tests.hostile tests/data/hostile
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/data/hostile")
    written = write_corpus(target, fixture_cases())
    print(f"wrote {len(written)} fixture files to {target}")
