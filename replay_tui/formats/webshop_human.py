"""WebShop's own session logs (the web_agent_site Flask app; AgentGym's ``all_trajs/*.jsonl``) as trajectories.

The site logs one JSON line per page it serves: ``{page, url, goal, content?}`` with ``page`` one of
``index``, ``search_results``, ``item_page``, ``item_sub_page``, ``done``, and ``reward`` /
``reward_info`` on the ``done`` line. The HTML is not stored and neither is the action: each step is
rebuilt from a page transition, as the WebShop tool call and the env action string the seed's
grammar uses (:mod:`replay_tui.actions`):

=====================================================  ==================================================
transition                                             step's action
=====================================================  ==================================================
any page -> search_results with new keywords           ``Search{keywords}`` / ``search[<keywords>]``
search_results -> same keywords, other page            ``Next`` / ``Prev`` (``click[Next >]``, ``click[< Prev]``)
item_page / item_sub_page -> search_results            ``Prev`` (the item page's ``< Prev`` button)
anything -> index                                      ``Back_to_Search`` (``click[Back to Search]``)
any page -> item_page of another item                  ``select_item{item_id}`` / ``click[<ASIN>]``
item_page -> same item, an option chosen               ``select_option{value}`` / ``click[<value>]``
item_sub_page -> item_page of the same item            ``Prev``
item_page -> item_sub_page                             ``Description`` ... (``click[description]``...)
anything -> done                                       ``Buy_Now`` / ``click[Buy Now]``
=====================================================  ==================================================

The same page served twice in a row (a reload) is no step: it is counted in the step's ``extra["reloads"]``.
Observations are a text rendering of what the log knows about the page (kind, url, keywords, result
ASINs, item, chosen options), in the seed's ``[button] ... [button_]`` style; product titles, prices
and option choices were in the HTML, which is not logged. No prompt, thinking or tool schemas: the
sessions are human (MTurk).

Outcome: the ``done`` line's ``reward`` (success = 1.0), ``status`` ``purchased`` or ``not purchased``,
``reward_info`` (``engine/goal.py: get_reward``) verbatim in ``scores`` and as checks (type,
attributes, options, price), the goal (ASIN, options, attributes, price ceiling) as ``target`` and the
bought item (ASIN, options, price) as ``answer``.

A file is one session, usually; lines of several sessions (another session id in the url, or a new
goal) are split into one episode each. Reading is line by line; a bad line is a LoadProblem and the
other lines still load.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote, urlsplit

import orjson

from replay_tui.actions import BACK_TO_SEARCH, BUY_NOW, NEXT, PREV, format_env_action
from replay_tui.episodes.model import Outcome, OutcomeCheck, ToolCall, Trajectory, TrajectoryStep
from replay_tui.episodes.problems import LoadProblem
from replay_tui.fileio import bounded_lines, open_regular
from replay_tui.formats.base import HEAD_BYTES, Detection, EpisodeSummary, ReadItem
from replay_tui.formats.reread import CHANGED, changed, deferred, indexed
from replay_tui.pyliteral import literal_eval

PAGES = ("index", "search_results", "item_page", "item_sub_page", "done")
"""The page kinds web_agent_site logs."""

STATES = {"index": "Search", "search_results": "Result", "item_page": "Item", "item_sub_page": "Item", "done": "Done"}
"""Page kind -> the seed's state names (Search, Result, Item)."""

SUB_PAGE_TOOLS = {"description": "Description", "features": "Features", "reviews": "Reviews"}
"""Item sub-pages with a WebShop tool; ``Attributes`` has none (``click[attributes]``, tool ``Attributes``)."""

MAX_LINE = 16 * 1024 * 1024
"""A line longer than this is a problem and is skipped unread (a page log line is a few KB)."""

_LITERAL_LIMIT = 64 * 1024
"""Longest url segment decoded as a Python literal (keywords list, options dict)."""

_SNIFF_KEYS = (re.compile(rb'"page"\s*:'), re.compile(rb'"url"\s*:'), re.compile(rb'"goal"\s*:'))


@dataclass
class _Page:
    """One logged page visit, its url and content decoded."""

    line: int
    kind: str
    url: str
    record: dict[str, Any]
    session: str | None = None
    goal: dict[str, Any] | None = None
    keywords: list[str] | None = None
    results: list[str] = field(default_factory=list)
    page_no: int | None = None
    asin: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    sub_page: str | None = None
    reward: float | None = None
    reward_info: dict[str, Any] | None = None

    @property
    def query(self) -> str:
        return " ".join(self.keywords or [])

    def same_place(self, other: _Page) -> bool:
        return self.kind == other.kind and self.url == other.url


@dataclass
class _Episode:
    """The pages of one session, gathered line by line."""

    index: int
    session: str | None
    goal: dict[str, Any] | None
    id: str
    pages: list[_Page] = field(default_factory=list)
    reloads: dict[int, int] = field(default_factory=dict)
    """Position in ``pages`` -> how many more times that page was served right after."""
    extra: dict[str, Any] = field(default_factory=dict)


def _literal(text: str) -> Any:
    """A Python literal as the site wrote it into its urls (``['red', 'mug']``, ``{'size': '8'}``), or None."""
    if len(text) > _LITERAL_LIMIT:
        return None
    try:
        return literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _keywords(value: Any) -> list[str] | None:
    if isinstance(value, str):
        value = _literal(value) if value.lstrip().startswith("[") else value.split()
    if isinstance(value, list) and all(isinstance(word, str) for word in value):
        return list(value)
    return None


def _options(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        value = _literal(value)
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return dict(value)
    return None


def _page_no(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value) < 10:
        return int(value)
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


_ROUTES = {"search_results": 4, "item_page": 6, "item_sub_page": 7, "done": 4}
"""Route name -> segments in its url (web_agent_site/app.py's @app.route patterns)."""


def _url_parts(url: str) -> list[str]:
    path = urlsplit(url).path
    return [unquote(part) for part in path.split("/")[1:]]


def _parse_page(record: dict[str, Any], line: int, problems: list[tuple[str, str]]) -> _Page | None:
    """A line's record as a page; ``problems`` gets ``(field, message)`` for what is wrong in it."""
    kind = record.get("page")
    if not isinstance(kind, str):
        problems.append(("page", f"expected a page name ({', '.join(PAGES)}), got {_kind_of(kind)}"))
        return None
    if kind not in PAGES:
        problems.append(("page", f"unknown page {kind[:40]!r}; known pages: {', '.join(PAGES)}"))
        return None
    url = record.get("url")
    if not isinstance(url, str):
        problems.append(("url", f"expected the page's url as text, got {_kind_of(url)}"))
        return None
    page = _Page(line=line, kind=kind, url=url, record={k: v for k, v in record.items() if k != "goal"})
    goal = record.get("goal")
    if isinstance(goal, dict):
        page.goal = goal
    elif goal is not None:
        problems.append(("goal", f"expected an object, got {_kind_of(goal)}"))
    content = record.get("content")
    if content is None:
        content = {}
    elif not isinstance(content, dict):
        problems.append(("content", f"expected an object, got {_kind_of(content)}; the url is used instead"))
        content = {}

    try:
        parts = _url_parts(url)
    except ValueError:
        parts = []
    route = parts[0] if parts else ""
    segments: list[str] = []
    if route in _ROUTES:
        segments = parts[1:]
    elif kind == "index" and parts:
        segments = parts[:1]
    if segments and segments[0]:
        page.session = segments[0]

    def segment(position: int) -> str | None:
        return segments[position] if route == kind and len(segments) > position else None

    if kind in ("search_results", "item_page", "item_sub_page"):
        url_keywords = segment(1 if kind == "search_results" else 2)
        page.keywords = _keywords(content.get("keywords"))
        if page.keywords is None and url_keywords is not None:
            page.keywords = _keywords(url_keywords)
        if page.keywords is None:
            problems.append(("content.keywords", "no search keywords in the content or the url"))
        page.page_no = _page_no(content.get("page"))
        if page.page_no is None:
            page.page_no = _page_no(segment(2 if kind == "search_results" else 3))
    if kind == "search_results":
        asins = content.get("search_result_asins")
        if isinstance(asins, list):
            page.results = [str(asin) for asin in asins if isinstance(asin, (str, int))]
        elif asins is not None:
            problems.append(("content.search_result_asins", f"expected a list, got {_kind_of(asins)}"))
    if kind in ("item_page", "item_sub_page", "done"):
        asin = content.get("asin")
        if not isinstance(asin, str) or not asin:
            asin = segment(1)
        page.asin = asin or None
        if page.asin is None:
            problems.append(("content.asin", "no item asin in the content or the url"))
        options = _options(content.get("options"))
        if options is None:
            url_options = segment({"item_page": 4, "item_sub_page": 5, "done": 2}[kind])
            options = _options(url_options) if url_options is not None else None
        page.options = options or {}
    if kind == "item_sub_page":
        sub_page = segment(4)
        page.sub_page = sub_page or None
        if page.sub_page is None:
            problems.append(("url", "no sub-page (Description, Features, Reviews, Attributes) in the url"))
    if kind == "done":
        if "reward" in record:
            page.reward = _number(record["reward"])
            if page.reward is None:
                problems.append(("reward", f"expected a number, got {_kind_of(record['reward'])}"))
        info = record.get("reward_info")
        if isinstance(info, dict):
            page.reward_info = info
        elif info is not None:
            problems.append(("reward_info", f"expected an object, got {_kind_of(info)}"))
    return page


def _kind_of(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "an object", list: "a list", str: "text", bool: "a boolean"}.get(type(value), "a number")


def _instruction(goal: dict[str, Any] | None) -> str:
    text = (goal or {}).get("instruction_text")
    return text if isinstance(text, str) else ""


def _options_text(options: dict[str, Any]) -> str:
    return ", ".join(f"{name}: {value}" for name, value in options.items()) if options else "none"


def render(page: _Page, instruction: str) -> str:
    """The page as text, in the seed's ``[button] ... [button_]`` style, from what the log holds."""
    lines = [f"WebShop page: {page.kind}", f"URL: {page.url}", "Instruction:", instruction]
    if page.kind == "index":
        lines.append("[button] Search [button_]")
    elif page.kind == "search_results":
        lines.append(f"[button] {BACK_TO_SEARCH} [button_]")
        lines.append(f"Search keywords: {page.query}")
        lines.append(f"Page {page.page_no if page.page_no is not None else '?'}")
        if page.page_no is not None and page.page_no > 1:
            lines.append(f"[button] {PREV} [button_]")
        lines.append(f"[button] {NEXT} [button_]")
        lines += [f"[button] {asin} [button_]" for asin in page.results]
        lines.append("(product titles and prices are not in the log)")
    elif page.kind in ("item_page", "item_sub_page"):
        lines.append(f"[button] {BACK_TO_SEARCH} [button_]")
        lines.append(f"[button] {PREV} [button_]")
        lines.append(f"Item: {page.asin or '?'}")
        lines.append(f"Found by search: {page.query} (page {page.page_no if page.page_no is not None else '?'})")
        lines.append(f"Selected options: {_options_text(page.options)}")
        if page.kind == "item_sub_page":
            lines.append(f"Showing: {page.sub_page or '?'}")
            lines.append("(the sub-page's text is not in the log)")
        else:
            lines += [f"[button] {name} [button_]" for name in ("Description", "Features", "Reviews", BUY_NOW)]
            lines.append("(the product's title, price and option choices are not in the log)")
    else:
        content = page.record.get("content")
        price = content.get("price") if isinstance(content, dict) else None
        lines.append("Thank you for shopping with us!")
        lines.append(f"Purchased: {page.asin or '?'}")
        lines.append(f"Options: {_options_text(page.options)}")
        if _number(price) is not None:
            lines.append(f"Price: ${price}")
        lines.append(f"Reward: {page.reward if page.reward is not None else '?'}")
        if page.reward_info:
            lines.append("Reward info: " + ", ".join(f"{key}={value}" for key, value in page.reward_info.items()))
    return "\n".join(lines)


def _call(name: str, arguments: dict[str, Any] | None = None) -> tuple[ToolCall, str]:
    args = dict(arguments or {})
    return ToolCall(name=name, arguments=args), format_env_action(name, args)


def transition(before: _Page, after: _Page) -> tuple[ToolCall | None, str, str]:
    """The action that leads from ``before`` to ``after``: (tool call, env action string, how it was read).

    The tool call is None when no WebShop action explains the transition.
    """
    kind = after.kind
    if kind == "done":
        return (*_call("Buy_Now"), "done page: Buy Now")
    if kind == "index":
        return (*_call("Back_to_Search"), "index page: Back to Search")
    if kind == "search_results":
        if after.keywords is None:
            return None, "", "search results without keywords"
        if before.keywords == after.keywords:
            if before.kind == "search_results" and before.page_no is not None and after.page_no is not None:
                if after.page_no > before.page_no:
                    return (*_call("Next"), "same search, later page: Next")
                if after.page_no < before.page_no:
                    return (*_call("Prev"), "same search, earlier page: Prev")
            if before.kind in ("item_page", "item_sub_page"):
                return (*_call("Prev"), "item page back to its search results: Prev")
        return (*_call("Search", {"keywords": after.query}), "search results for new keywords: Search")
    if kind == "item_page":
        if after.asin is None:
            return None, "", "item page without an asin"
        if before.asin == after.asin and before.kind == "item_sub_page":
            return (*_call("Prev"), "sub-page back to its item page: Prev")
        if before.asin == after.asin and before.kind == "item_page":
            chosen = [(n, v) for n, v in after.options.items() if before.options.get(n) != v]
            if chosen:
                name, value = chosen[-1]
                how = f"option {name} chosen: select_option"
                if len(chosen) > 1:
                    how += f" ({len(chosen)} options changed at once; the last is the action)"
                return (*_call("select_option", {"value": str(value)}), how)
            return None, "", "same item page, no option chosen"
        return (*_call("select_item", {"item_id": after.asin}), "item page of another item: select_item")
    sub = (after.sub_page or "").strip()
    if not sub:
        return None, "", "sub-page without a name"
    tool = SUB_PAGE_TOOLS.get(sub.lower())
    if tool is not None:
        return (*_call(tool), f"sub-page {sub}: {tool}")
    return ToolCall(name=sub), f"click[{sub.lower()}]", f"sub-page {sub}: no WebShop tool, click[{sub.lower()}]"


def build(episode: _Episode) -> Trajectory:
    """The trajectory of one gathered session: one step per page transition."""
    instruction = _instruction(episode.goal)
    pages = episode.pages
    steps: list[TrajectoryStep] = []
    for position, (before, after) in enumerate(pairwise(pages)):
        call, text, how = transition(before, after)
        extra: dict[str, Any] = {
            "page": before.kind,
            "url": before.url,
            "line": before.line,
            "record": before.record,
            "next_page": after.kind,
            "next_url": after.url,
            "next_line": after.line,
            "transition": how,
        }
        if episode.reloads.get(position):
            extra["reloads"] = episode.reloads[position]
        if call is not None and call.name == "select_option":
            extra["option_name"] = next(
                (
                    n
                    for n, v in after.options.items()
                    if before.options.get(n) != v and str(v) == call.arguments["value"]
                ),
                None,
            )
        steps.append(
            TrajectoryStep(
                index=len(steps),
                observation=render(before, instruction),
                action=call,
                action_text=text,
                tool_result=render(after, instruction),
                reward=after.reward if after.kind == "done" else None,
                done=after.kind == "done",
                state=STATES[before.kind],
                extra=extra,
                kind="decision",
            )
        )
    done = next((page for page in reversed(pages) if page.kind == "done"), None)
    extra = dict(episode.extra)
    if pages:
        extra.update(first_line=pages[0].line, last_line=pages[-1].line)
        if episode.reloads.get(len(pages) - 1):
            extra["final_reloads"] = episode.reloads[len(pages) - 1]
    goal = episode.goal if isinstance(episode.goal, dict) else {}
    if done is not None:
        content = done.record.get("content")
        bought = content if isinstance(content, dict) else {"asin": done.asin, "options": done.options}
        extra["purchased"] = bought
        outcome = Outcome(
            reward=done.reward,
            success=None if done.reward is None else done.reward == 1.0,
            status="purchased",
            scores=dict(done.reward_info or {}),
            target=_goal_text(goal),
            answer=_product_text(bought.get("asin"), bought.get("options"), bought.get("price")),
            checks=_reward_checks(done.reward_info or {}, goal, bought),
        )
    else:
        outcome = Outcome(success=False, status="not purchased", target=_goal_text(goal))
    return Trajectory(
        id=episode.id,
        format=READER.name,
        task=instruction,
        metadata=dict(episode.goal or {}),
        steps=steps,
        outcome=outcome,
        extra=extra,
    )


class WebshopHumanReader:
    name = "webshop-human"
    label = "WebShop session logs (AgentGym all_trajs JSONL)"
    description = (
        "observation = the page before the action rendered as text (kind, url, keywords, result ASINs, item, "
        "options; no HTML in the log), action = the page transition as a WebShop tool call + env action "
        "(search[...], click[...]); no prompt or thinking (human sessions); outcome = the done line's reward"
    )

    def sniff(self, path: Path, head: bytes) -> Detection:
        text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
        if text[:1] != b"{":
            return Detection.no("not JSON lines of page visits")
        lines = text.split(b"\n")
        complete = lines if len(head) < HEAD_BYTES else lines[:-1]
        for raw in complete[:5]:
            if not raw.strip():
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                return Detection.no("the first line is not a JSON object")
            missing = [key for key in ("page", "url", "goal") if key not in record]
            if missing:
                return Detection.no(f"the first record has no {', '.join(missing)} field")
            if record["page"] not in PAGES:
                return Detection(0.3, f"page {str(record['page'])[:30]!r} is not a web_agent_site page")
            return Detection.yes("JSON lines of page visits (page, url, goal)")
        if all(pattern.search(lines[0]) for pattern in _SNIFF_KEYS):
            return Detection(0.6, "a first line with page, url and goal that does not parse in the head")
        return Detection.no("the first lines are not JSON objects")

    def read(self, path: Path) -> Iterator[ReadItem]:
        for item, _ in self._located(path):
            yield item

    def index(self, path: Path) -> Iterator[EpisodeSummary | LoadProblem]:
        """Every session's summary, in :meth:`read`'s order, one session held at a time;
        ``locator`` = where its first line is and the count of its id before it, for :meth:`load`
        to read from there to the session's end (its outcome, too, when first asked)."""
        for item, where in self._located(path):
            if isinstance(item, LoadProblem):
                yield item
            elif where is not None:
                yield deferred(item, where.emitted, where, partial(self._session, path, where))

    def load(self, path: Path, summary: EpisodeSummary) -> Trajectory | LoadProblem:
        """The session ``summary`` points at, read from its first line to its last."""
        found = self._session(path, summary.locator)
        if isinstance(found, Trajectory) and not indexed(found, summary):
            return changed(path.name, summary)
        return found

    def _session(self, path: Path, where: _SessionAt) -> ReadItem:
        for item, at in self._located(path, where):
            if at is not None:
                return item
            if isinstance(item, LoadProblem) and item.message.startswith("cannot read"):
                return item
        return LoadProblem(file=path.name, index=where.emitted, session_id=where.sid, message=CHANGED)

    def _located(self, path: Path, resume: _SessionAt | None = None) -> Iterator[tuple[ReadItem, _SessionAt | None]]:
        try:
            handle = open_regular(path)
        except OSError as exc:
            yield LoadProblem(file=path.name, message=f"cannot read: {exc.strerror or exc}"), None
            return
        with handle:
            if resume is not None:
                handle.seek(resume.offset)
            yield from self._read(path, handle, resume)

    def _read(
        self, path: Path, handle: IO[bytes], resume: _SessionAt | None = None
    ) -> Iterator[tuple[ReadItem, _SessionAt | None]]:
        """The file's sessions, each with where it starts (``resume``: from a session's start, as the
        whole read reached it: its line number, the sessions before, its id's count)."""
        current: _Episode | None = None
        started: _SessionAt | None = None
        emitted = resume.emitted if resume is not None else 0
        seen: dict[str, int] = {resume.sid: resume.part - 1} if resume is not None else {}

        def problem(line: int, name: str | None, message: str, session: Any = None) -> LoadProblem:
            where = f"line {line}" + (f".{name}" if name else "")
            if session is None and current is not None:
                session = current.session
            return LoadProblem(file=path.name, index=emitted, session_id=session, field=where, message=message)

        try:
            for offset, number, raw in _lines_at(handle, resume.line - 1 if resume is not None else 0):
                if raw is None:
                    yield problem(number, None, f"line longer than {MAX_LINE // (1024 * 1024)} MiB, skipped"), None
                    continue
                if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
                if not raw.strip():
                    continue
                try:
                    record = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    yield problem(number, None, f"not JSON: {exc}"), None
                    continue
                if not isinstance(record, dict):
                    yield problem(number, None, f"expected a JSON object, got {_kind_of(record)}"), None
                    continue
                found: list[tuple[str, str]] = []
                page = _parse_page(record, number, found)
                session = page.session if page is not None else None
                for name, message in found:
                    yield problem(number, name, message, session), None
                if page is None:
                    continue
                if current is not None and self._starts_new(current, page):
                    yield build(current), started
                    emitted += 1
                    current = None
                if current is None:
                    sid = page.session or path.stem
                    seen[sid] = seen.get(sid, 0) + 1
                    started = _SessionAt(offset, number, emitted, sid, seen[sid])
                    current = _Episode(
                        index=emitted,
                        session=page.session,
                        goal=None,
                        id=sid if seen[sid] == 1 else f"{sid}#{seen[sid]}",
                    )
                    if seen[sid] > 1:
                        current.extra["part"] = seen[sid]
                if current.goal is None and page.goal is not None:
                    current.goal = page.goal
                    if not isinstance(page.goal.get("instruction_text"), str):
                        got = _kind_of(page.goal.get("instruction_text"))
                        yield problem(number, "goal.instruction_text", f"expected the task as text, got {got}"), None
                if current.pages and current.pages[-1].same_place(page):
                    last = len(current.pages) - 1
                    current.reloads[last] = current.reloads.get(last, 0) + 1
                    continue
                current.pages.append(page)
        except OSError as exc:
            message = f"cannot read further: {exc.strerror or exc}"
            yield LoadProblem(file=path.name, index=emitted, message=message), None
        if current is not None:
            yield build(current), started

    @staticmethod
    def _starts_new(current: _Episode, page: _Page) -> bool:
        if page.session is not None and current.session is not None and page.session != current.session:
            return True
        if page.goal is not None and current.goal is not None:
            return _instruction(page.goal) != _instruction(current.goal)
        return False


READER = WebshopHumanReader()


@dataclass(frozen=True, slots=True)
class _SessionAt:
    """Where an indexed session starts: its first line's offset and number, the sessions before it,
    its id and the how-manieth part of that id it is (a session split by a new goal)."""

    offset: int
    line: int
    emitted: int
    sid: str
    part: int


def _lines_at(handle: IO[bytes], before: int) -> Iterator[tuple[int, int, bytes | None]]:
    """:func:`~replay_tui.fileio.bounded_lines` with each line's offset, numbered after ``before``."""
    lines = bounded_lines(handle, MAX_LINE)
    while True:
        offset = handle.tell()
        try:
            number, raw = next(lines)
        except StopIteration:
            return
        yield offset, number + before, raw


def _product_text(asin: Any, options: Any, price: Any) -> str | None:
    """``B09LYLKLVX, options {"color": "grey"}, $129.99``: a product and what was chosen, as text."""
    if not asin:
        return None
    parts = [str(asin)]
    if isinstance(options, dict) and options:
        parts.append("options " + ", ".join(f"{key}: {value}" for key, value in options.items()))
    elif isinstance(options, list) and options:
        parts.append("options " + ", ".join(str(value) for value in options))
    if isinstance(price, int | float) and not isinstance(price, bool):
        parts.append(f"${price:g}")
    return ", ".join(parts)


def _goal_text(goal: dict[str, Any]) -> str | None:
    """The goal the site judged against: its product, options, attributes and price ceiling."""
    text = _product_text(goal.get("asin"), goal.get("goal_options"), None)
    if text is None:
        return None
    attributes = goal.get("attributes")
    if isinstance(attributes, list) and attributes:
        text += ", attributes " + ", ".join(str(a) for a in attributes)
    price = goal.get("price_upper")
    if isinstance(price, int | float) and not isinstance(price, bool) and 0 < price < 1_000_000:
        text += f", under ${price:g}"
    return text


def _reward_checks(info: dict[str, Any], goal: dict[str, Any], bought: dict[str, Any]) -> list[OutcomeCheck]:
    """``reward_info`` (``engine/goal.py: get_reward``, verbose) as checks: the product type
    (``r_type``: query, category and title match), the goal's attributes (``r_att``, the fraction
    found), its options (``r_option``) and the price ceiling (``r_price``)."""
    checks: list[OutcomeCheck] = []
    r_type = info.get("r_type")
    if isinstance(r_type, int | float):
        said = [f"{key} {info[key]}" for key in ("query_match", "category_match", "title_score") if key in info]
        checks.append(OutcomeCheck(name="type", passed=r_type == 1.0, value=r_type, detail=", ".join(said)))
    r_att = info.get("r_att")
    if isinstance(r_att, int | float):
        wanted = goal.get("attributes")
        listed = ", ".join(map(str, wanted)) if isinstance(wanted, list) else ""
        detail = f"{r_att:.0%} of the goal's attributes found" + (f" ({listed})" if listed else "")
        checks.append(OutcomeCheck(name="attributes", passed=r_att == 1.0, value=r_att, detail=detail))
    r_option = info.get("r_option")
    if isinstance(r_option, int | float):
        wanted, chosen = goal.get("goal_options"), bought.get("options")
        wanted_text = ", ".join(map(str, wanted.values() if isinstance(wanted, dict) else wanted or []))
        chosen_text = ", ".join(f"{k}: {v}" for k, v in chosen.items()) if isinstance(chosen, dict) else ""
        detail = f"goal options: {wanted_text}; chosen: {chosen_text or 'none'}"
        checks.append(OutcomeCheck(name="options", passed=r_option == 1.0, value=r_option, detail=detail))
    r_price = info.get("r_price")
    if isinstance(r_price, bool):
        price, ceiling = bought.get("price"), goal.get("price_upper")
        checks.append(
            OutcomeCheck(name="price", passed=r_price, value=r_price, detail=f"paid {price}, goal under {ceiling}")
        )
    return checks
