"""The episode player: one simulated WebShop session driven by a scripted, plausibly fallible
agent, recorded step by step as the demo-file contract's trajectory."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from replay_tui.actions import format_env_action
from replay_tui.formats.webshop_demos.synth.draws import pick
from replay_tui.formats.webshop_demos.synth.goals import (
    goal_info,
    goal_pairs,
    goals_by_category,
    near_titles,
    off_parts,
)
from replay_tui.formats.webshop_demos.synth.pages import (
    collapse,
    render_detail,
    render_done,
    render_item,
    render_results,
    render_search,
)
from replay_tui.formats.webshop_demos.synth.products import (
    CENTS,
    PAIRS36,
    Product,
    ResultSet,
    price_pair,
    sibling_values,
    style_title,
    title_case,
)
from replay_tui.formats.webshop_demos.synth.prompts import join_words, system_prefix
from replay_tui.formats.webshop_demos.synth.thinking import Thoughts
from replay_tui.formats.webshop_demos.synth.vocabulary import (
    ALT_WORDS,
    BRANDS,
    BULLETS,
    DESCRIPTIONS,
    EDGE_WORDS,
    FEATURES,
    GROUP_POOLS,
    PRICE_RANGE,
    SHOE_WORDS,
)

# Outcome mix of non-quirk content: success, partial reward, zero reward, completed by the backup agent.
_OUTCOMES: tuple[tuple[str, float], ...] = (("success", 0.55), ("partial", 0.30), ("zero", 0.05), ("backup", 0.10))


class Episode(Thoughts):
    """Builds one episode: a simulated WebShop session driven by a scripted, plausibly fallible agent."""

    def __init__(self, session_id: int, rng: random.Random) -> None:
        self.rng = rng
        self.session_id = session_id
        self.goal_index = rng.randrange(len(goal_pairs()))
        g = self.info = goal_info(self.goal_index)
        lo, hi = PRICE_RANGE[g.category]
        self.target_low, self.target_high = price_pair(rng, rng.uniform(lo, hi), 0.2)
        self.budget = float((math.floor(self.target_high / 10) + 1 + pick(rng, ((0, 5), (1, 3), (2, 2)))) * 10)
        self.instruction = f"{g.base}, and price lower than {self.budget:.2f} dollars"
        self.what = " ".join(g.core) or g.queries[0]
        self.qwords = [w for w in dict.fromkeys(g.core) if w not in EDGE_WORDS]
        self.trajectory: list[dict[str, Any]] = []
        self.n_steps = 0
        self.history: list[str] = []
        self.with_history = rng.random() < 0.4
        self.raw = render_search(self.instruction)
        self.rsets: dict[str, ResultSet] = {}
        self.rs: ResultSet | None = None
        self.page = 0
        self.visited: list[str] = []
        self.asins: set[str] = set()
        self.seen: dict[str, Product] = {}  # products shown on results pages, by ASIN
        self.item: Product | None = None
        self.selected: dict[str, str] = {}
        self.left_results: list[Product] = []  # the results page left with Back_to_Search
        self.note = ""  # what the agent learned on the last item page, for its next thought
        self.same_category = goals_by_category()[g.category]
        self.all_goals = goal_pairs()
        self.target = self._make_target()

    # ---- products -------------------------------------------------------------------------------

    def _asin(self) -> str:
        pairs = PAIRS36
        while True:
            n = self.rng.getrandbits(42)
            asin = f"B0{pairs[n % 1296]}{pairs[n // 1296 % 1296]}{pairs[n // 1679616 % 1296]}{pairs[n >> 32]}"
            if asin not in self.asins:
                self.asins.add(asin)
                return asin

    def _make_target(self) -> Product:
        g, rng = self.info, self.rng
        core = [w for w in g.core if w != "size"]
        text = " ".join(core)
        extra = [a for a in g.attributes if a not in text]
        # Every goal attribute is in the title (in the query words or the first feature).
        feats = [" & ".join(title_case(a.split()) for a in extra)] if extra else []
        feats += rng.sample(FEATURES[g.category], 2)
        title = style_title(rng, rng.choice(BRANDS), title_case(core), feats[:2], g.category)
        return Product(
            self._asin(),
            title,
            self.target_low,
            self.target_high,
            "target",
            g.category,
            len(g.attributes),
            1.0,
            g.noun,
            goal_values=True,
        )

    def _make_near(self, in_budget: bool | None = None) -> Product:
        g, rng = self.info, self.rng
        hits = int(rng.random() * len(g.attributes))  # always misses at least one attribute
        pool = near_titles(self.goal_index, hits)
        title, noun = pool[int(rng.random() * len(pool))]
        if in_budget is None:
            in_budget = rng.random() < 0.7
        amount = (0.3 + 0.6 * rng.random() if in_budget else 1.05 + 0.55 * rng.random()) * self.budget
        low, high = price_pair(rng, amount, 0.0 if in_budget else 0.25)
        if in_budget and high >= self.budget:
            low = high = max(1.0, self.budget - 1.01)
        return Product(
            self._asin(), title, low, high, "near", g.category, hits, 1.0, noun, goal_values=rng.random() < 0.6
        )

    def _make_off(self) -> Product:
        # The hot path of generation (most search results are unrelated items): keep it lean.
        r = self.rng.random
        same = self.same_category
        index = same[int(r() * len(same))] if same and r() < 0.7 else int(r() * len(self.all_goals))
        titles, noun, category = off_parts(index)
        low = max(1, int((0.2 + 1.2 * r()) * self.budget)) + CENTS[int(r() * len(CENTS))]
        high = low
        if r() < 0.25:
            high = max(1, int(low * (1.2 + 0.7 * r()))) + CENTS[int(r() * len(CENTS))]
            high = max(high, low)
        return Product(self._asin(), titles[int(r() * len(titles))], low, high, "off", category, 0, 0.0, noun)

    def _details(self, p: Product) -> None:
        """Option groups, description and feature bullets, created on the first visit."""
        if p.groups is not None:
            return
        rng, g = self.rng, self.info
        pools = GROUP_POOLS[p.category]
        groups: dict[str, list[str]] = {}
        if p.goal_values and p.category == g.category:
            for group, value in g.options:
                groups[group] = sibling_values(group, value, p.category, rng, rng.randint(2, 5))
        for group in pools:
            if group not in groups and rng.random() < 0.3:
                pool = list(pools[group])
                if group == "size" and p.category == "fashion" and SHOE_WORDS.intersection(g.core):
                    pool = [f"{x / 2:g}" for x in range(12, 25)]
                values = rng.sample(pool, min(len(pool), rng.randint(3, 6)))
                groups[group] = values
        p.groups = [(group, groups[group]) for group in [*pools, *groups] if group in groups]
        p.groups = list(dict(p.groups).items())
        desc = rng.sample(DESCRIPTIONS[p.category], 2)
        p.description = " ".join(s.format(noun=p.noun.lower()) for s in desc)
        bullets = rng.sample(BULLETS[p.category], rng.randint(3, 5))
        if p.kind == "target":
            bullets.insert(0, f"{title_case(g.attributes[0].split()).upper()}: {bullets.pop()}")
        if rng.random() < 0.3:
            bullets = [f"【{b.split()[0].upper()}】 {b}" for b in bullets]
        p.bullets = tuple(bullets)

    def _result_set(
        self, query: str, target_at: tuple[int, int] | None = None, pinned: Product | None = None
    ) -> ResultSet:
        rs = self.rsets.get(query)
        if rs is None:
            rs = self.rsets[query] = ResultSet(query, target_at, pinned)
        return rs

    def _page_products(self, rs: ResultSet, page: int) -> list[Product]:
        products = rs.pages.get(page)
        if products is not None:
            return products
        rng = self.rng
        target_page = rs.target_at is not None and rs.target_at[0] == page
        near_prob = 0.4 if target_page else (0.3 if rs.target_at is not None else 0.15)
        products = []
        for i in range(10):
            if rs.target_at == (page, i):
                products.append(self.target)
            elif rs.pinned is not None and page == 1 and i == 0:
                products.append(rs.pinned)
            elif rng.random() < near_prob:
                products.append(self._make_near())
            else:
                products.append(self._make_off())
        if target_page:
            # The agent's possible mistakes need candidates: two near misses (one in budget) and two off items.
            slots = [i for i, p in enumerate(products) if p.kind != "target"]
            rng.shuffle(slots)
            near = [i for i in slots if products[i].kind == "near"]
            off = [i for i in slots if products[i].kind == "off"]
            while len(near) < 2 and len(off) > 2:
                i = off.pop()
                products[i] = self._make_near()
                near.append(i)
            if not any(products[i].high < self.budget for i in near):
                products[near[0]] = self._make_near(in_budget=True)
            while len(off) < 2 and len(near) > 2:
                i = near.pop()
                products[i] = self._make_off()
                off.append(i)
        rs.pages[page] = products
        for p in products:
            self.seen.setdefault(p.asin, p)
        return products

    # ---- decision steps -------------------------------------------------------------------------

    def _emit(
        self, ctx: tuple[str, str, int, str], name: str, args: dict[str, Any], thinking: str, new_raw: str
    ) -> None:
        obs, state, page, prompt = ctx
        if state == "Search":
            available = ["Search"]
        elif page > 1:
            available = ["select_item", "Next", "Prev", "Back_to_Search"]
        else:
            available = ["select_item", "Next", "Back_to_Search"]
        action = format_env_action(name, args)
        self.trajectory.append(
            {
                "step_number": self.n_steps,
                "observation_before_llm": obs,
                "llm_prompt": prompt,
                "llm_thinking": thinking,
                "llm_action_name": name,
                "llm_action_arguments": args,
                "state": state,
                "available_actions": available,
                "action_executed_in_env": action,
                "observation_after_action": new_raw,
                "reward": 0.0,
                "done": False,
            }
        )
        self.n_steps += 1
        self.history.append(action)
        self.raw = new_raw

    def _ctx(self) -> tuple[str, str, int, str]:
        obs = "Current observation:\n" + collapse(self.raw)
        state = "Result" if "[button] Back to Search [button_]" in self.raw else "Search"
        if state == "Search":
            tools: tuple[str, ...] = ("Search",)
        elif self.page > 1:
            tools = ("select_item", "Next", "Prev", "Back_to_Search")
        else:
            tools = ("select_item", "Next", "Back_to_Search")
        user = obs
        if state == "Result" and self.with_history and self.history:
            recent = self.history[-5:]
            first = len(self.history) - len(recent) + 1
            user += "\n\nPrevious actions:\n" + "\n".join(f"{first + i}. {a}" for i, a in enumerate(recent))
        # Same text as repr([{"role": "system", ...}, {"role": "user", ...}]), with the system part cached.
        prompt = f"{system_prefix(tools)}{user!r}}}]"
        return obs, state, self.page, prompt

    def _results_raw(self) -> str:
        assert self.rs is not None
        return render_results(self.instruction, self.page, self._page_products(self.rs, self.page), self.visited)

    def search(self, query: str, thinking: str, target_at: tuple[int, int] | None) -> None:
        ctx = self._ctx()
        self.rs = self._result_set(query, target_at)
        self.page, self.visited = 1, []
        self._emit(ctx, "Search", {"keywords": query, "max_price": f"{self.budget:.2f}"}, thinking, self._results_raw())

    def next_page(self) -> None:
        assert self.rs is not None
        thinking = self._think_next(self._page_products(self.rs, self.page))
        ctx = self._ctx()
        self.page += 1
        self._emit(ctx, "Next", {}, thinking, self._results_raw())

    def prev_page(self) -> None:
        thinking = self._think_prev()
        ctx = self._ctx()
        self.page -= 1
        self._emit(ctx, "Prev", {}, thinking, self._results_raw())

    def back_to_search(self) -> None:
        assert self.rs is not None
        thinking = self._think_back(self._page_products(self.rs, self.page))
        ctx = self._ctx()
        self.left_results = self._on_page()
        self.rs, self.page, self.visited = None, 0, []
        self._emit(ctx, "Back_to_Search", {}, thinking, render_search(self.instruction))

    def select(self, p: Product, thinking: str | None = None) -> None:
        assert self.rs is not None
        if thinking is None:
            thinking = self._think_select(p, self._page_products(self.rs, self.page))
        ctx = self._ctx()
        self._details(p)
        self.item, self.selected = p, {}
        if p.asin not in self.visited:
            self.visited.append(p.asin)
        self._emit(ctx, "select_item", {"item_id": p.asin}, thinking, render_item(self.instruction, p, self.selected))

    # ---- item-page sub-events -------------------------------------------------------------------

    def _item_action(
        self, name: str, args: dict[str, Any], new_raw: str, reward: float = 0.0, done: bool = False
    ) -> None:
        assert self.item is not None
        options = ["Description", "Features", "Reviews", "Buy_Now", "Prev"]
        options += [v for _, values in self.item.groups or () for v in values]
        self.trajectory.append(
            {
                "type": "item_page_action",
                "llm_action": {"name": name, "arguments": args},
                "observation_before_action": self.raw,
                "available_options": options,
                "observation_after_action": new_raw,
                "reward": reward,
                "done": done,
            }
        )
        self.history.append(format_env_action(name, args))

    def detail(self, detail: str) -> None:
        assert self.item is not None
        page = render_detail(self.instruction, self.item, detail)
        self._item_action(detail.capitalize(), {}, page)
        self.trajectory.append(
            {"type": "detail_exploration", "detail": detail, "action": f"click[{detail}]", "observation": page}
        )
        item_raw = render_item(self.instruction, self.item, self.selected)
        self.trajectory.append(
            {"type": "back_from_detail", "action": "click[< Prev]", "observation_after_action": item_raw}
        )
        self.history.append("click[< Prev]")
        self.raw = item_raw

    def choose(self, group: str, value: str) -> None:
        assert self.item is not None
        self.selected[group] = value
        new_raw = render_item(self.instruction, self.item, self.selected, clicked=value)
        self._item_action("select_option", {"value": value}, new_raw)
        self.trajectory.append(
            {
                "type": "customization_click",
                "option_type": group,
                "option_value": value,
                "action": f"click[{value}]",
                "observation_after_action": new_raw,
            }
        )
        self.raw = new_raw

    def leave_item(self) -> None:
        new_raw = self._results_raw()
        self._item_action("Prev", {}, new_raw)
        self.raw, self.item = new_raw, None

    def reward(self, p: Product, selected: dict[str, str]) -> float:
        g = self.info
        n = len(g.attributes) + len(g.options) + 1
        hits = sum(1 for group, value in g.options if selected.get(group) == value)
        price_ok = 1 if p.high < self.budget else 0
        return (p.attr_hits + hits + price_ok) / n * p.r_type

    def buy(self) -> float:
        assert self.item is not None
        r = self.reward(self.item, self.selected)
        done_raw = render_done(self.item.asin, self.selected, r)
        self._item_action("Buy_Now", {}, done_raw, r, True)
        self.trajectory.append(
            {
                "type": "agent_buy",
                "action": "click[Buy Now]",
                "observation_after_action": done_raw,
                "reward": r,
                "done": True,
            }
        )
        self.raw = done_raw
        return r

    # ---- scripted agent -------------------------------------------------------------------------

    def _alt_query(self) -> str:
        g, rng = self.info, self.rng
        if len(g.queries) > 1:
            return g.queries[1]
        words = list(g.core)
        extra = [a for a in (*g.stated, *(v for _, v in g.options)) if a not in g.queries[0]]
        if extra and rng.random() < 0.6:
            variant = " ".join([*words, rng.choice(extra)])
        elif len(words) > 3:
            variant = " ".join(words[-rng.randint(2, 3) :])
        else:
            variant = ""
        if not variant or variant == g.queries[0]:
            variant = f"{g.queries[0]} {rng.choice(ALT_WORDS).lower()}"
        return variant

    def _peek(self, candidates: Sequence[Product]) -> None:
        """Open a tempting item, maybe read about it, and go back to the results."""
        rng, g = self.rng, self.info
        p = rng.choice(candidates)
        ov = join_words(self._overlap(p)[:4]) or "some of the keywords"
        thinking = self._lead() + rng.choice(
            (
                f"{p.asin} ({p.short(6)}, {p.price}) mentions {ov}. I should check its details before deciding.",
                f"Let me inspect {p.asin}; the title looks related to {self.what}, but I'm not sure it is "
                f"{g.stated[0] if g.stated else 'the right product'}.",
            )
        )
        self.select(p, thinking)
        if rng.random() < 0.5:
            self.detail(rng.choice(("description", "features", "features")))
        self.leave_item()
        missing_opt = [v for grp, v in g.options if all(grp != name for name, _ in p.groups or ())]
        if p.low >= self.budget:
            self.note = f"{p.asin} costs {p.price}, which is over the {self._budget()} budget."
        elif p.kind == "off":
            self.note = f"{p.asin} turned out to be {p.short(5)}, not what the customer asked for."
        elif missing_opt:
            self.note = f"{p.asin} does not offer the {missing_opt[0]} option."
        else:
            missing = [a for a in g.attributes if a not in p.title.lower()]
            self.note = f"{p.asin} doesn't mention {missing[0] if missing else 'the key attributes'}."

    def _on_page(self) -> list[Product]:
        assert self.rs is not None
        return self._page_products(self.rs, self.page)

    def _unvisited(self, kinds: tuple[str, ...]) -> list[Product]:
        return [p for p in self._on_page() if p.kind in kinds and p.asin not in self.visited]

    def play(self) -> tuple[float, bool]:
        """Run the episode; return (final reward, completed by backup)."""
        outcome = pick(self.rng, _OUTCOMES)
        if outcome == "backup":
            return self._play_backup(), True
        return self._play_normal(outcome), False

    def _play_normal(self, outcome: str) -> float:
        rng, g = self.rng, self.info
        target_at = (pick(rng, ((1, 0.6), (2, 0.22), (3, 0.12), (4, 0.06))), rng.randrange(10))
        research = rng.random() < 0.15
        first = g.queries[0]
        if research:
            second = self._alt_query()
            self.search(first, self._think_search(first), None)
            if rng.random() < 0.35:
                self.next_page()
            self.back_to_search()
            self.search(second, self._think_research(second), target_at)
        else:
            self.search(first, self._think_search(first), target_at)
        while self.page < target_at[0]:
            peek = self._unvisited(("near", "off"))
            if peek and rng.random() < 0.25:
                self._peek(peek)
            self.next_page()
        if target_at[0] < 5 and rng.random() < 0.1:
            self.next_page()
            self.prev_page()
        peek = self._unvisited(("near",))
        if peek and rng.random() < 0.15:
            self._peek(peek)

        mode = outcome
        if outcome == "partial":
            mode = "wrong_option" if g.options and rng.random() < 0.5 else "near"
        if mode in ("success", "wrong_option"):
            item = self.target
        elif mode == "near":
            on_page = self._unvisited(("near", "off", "target")) if self.rs is not None else []
            cands = [p for p in on_page if p.kind == "near" and p.high < self.budget]
            item = rng.choice(cands or [p for p in self._on_page() if p.kind == "near" and p.high < self.budget])
        else:
            cands = self._unvisited(("off",))
            item = rng.choice(cands or [p for p in self._on_page() if p.kind == "off"])
        self.select(item)
        for d in ("description", "features", "reviews"):
            if rng.random() < {"description": 0.35, "features": 0.25, "reviews": 0.08}[d]:
                self.detail(d)
        goal = dict(g.options)
        wrong = rng.choice([grp for grp, _ in g.options]) if mode == "wrong_option" else None
        for group, values in item.groups or ():
            if group in goal and goal[group] in values:
                if group == wrong:
                    others = [v for v in values if v != goal[group]]
                    if others and rng.random() < 0.6:
                        self.choose(group, rng.choice(others))
                    continue
                self.choose(group, goal[group])
            elif rng.random() < 0.5:
                self.choose(group, values[0] if rng.random() < 0.5 else rng.choice(values))
        return self.buy()

    def _play_backup(self) -> float:
        rng, g = self.rng, self.info
        budget = rng.randint(6, 11)
        target_at = (pick(rng, ((1, 0.3), (2, 0.3), (3, 0.2), (4, 0.1), (5, 0.1))), rng.randrange(10))
        self.search(g.queries[0], self._think_search(g.queries[0]), target_at)
        researched = False
        while self.n_steps < budget:
            remaining = budget - self.n_steps
            choices: list[tuple[str, float]] = []
            if self.page < 5:
                choices.append(("next", 3.0))
            if self.page > 1:
                choices.append(("prev", 0.7))
            if self._unvisited(("near", "off")):
                choices.append(("peek", 2.5))
            if not researched and remaining >= 2:
                choices.append(("research", 0.8))
            action = pick(rng, choices)
            if action == "next":
                self.next_page()
            elif action == "prev":
                self.prev_page()
            elif action == "peek":
                self._peek(self._unvisited(("near", "off")))
            else:
                researched = True
                query = self._alt_query()
                self.back_to_search()
                self.search(query, self._think_research(query), None)
        return self._backup()

    def _backup(self) -> float:
        """LASER-style fallback: re-find the most promising item seen so far and buy it."""
        rng, g = self.rng, self.info
        if self.target.asin in self.seen:
            candidate = self.target
        else:
            near = [p for p in self.seen.values() if p.kind == "near"] or list(self.seen.values())
            candidate = max(near, key=lambda p: len(self._overlap(p)))
        search_raw = render_search(self.instruction)
        self.trajectory.append(
            {"type": "backup_agent_reset", "action": "click[Back to Search]", "observation_after_action": search_raw}
        )
        rs = ResultSet(candidate.title, None, candidate)
        self.rs, self.page, self.visited = rs, 1, []
        self.trajectory.append(
            {
                "type": "backup_agent_search",
                "action": f"search[{candidate.title}]",
                "observation_after_action": self._results_raw(),
            }
        )
        self._details(candidate)
        self.item, self.selected = candidate, {}
        self.trajectory.append(
            {
                "type": "backup_agent_click",
                "action": f"click[{candidate.asin}]",
                "observation_after_action": render_item(self.instruction, candidate, {}),
            }
        )
        goal = dict(g.options)
        for group, values in candidate.groups or ():
            if group in goal and goal[group] in values and rng.random() < 0.75:
                value = goal[group]
            elif group in goal or rng.random() < 0.4:
                value = values[0]
            else:
                continue
            self.selected[group] = value
            self.trajectory.append(
                {
                    "type": "backup_agent_option",
                    "option_type": group,
                    "option_value": value,
                    "action": f"click[{value}]",
                    "observation_after_action": render_item(self.instruction, candidate, self.selected, clicked=value),
                }
            )
        r = self.reward(candidate, self.selected)
        self.trajectory.append(
            {
                "type": "backup_agent_buy",
                "action": "click[Buy Now]",
                "observation_after_action": render_done(candidate.asin, self.selected, r),
                "reward": r,
                "done": True,
            }
        )
        return r
