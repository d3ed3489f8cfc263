"""Benchmark: the fast visual metrics engine against a straightforward re-implementation of the reference.

Prints, for the same inputs,
  * matching-only: merge search + matching + sub-scores on identical block lists (synthetic pages of n blocks a
    side, with 10% of lines split and 10% merged, and the blocks extracted from real page pairs);
  * end-to-end: HTML pair -> scores, the fast pipeline (one browser, vectorised blocks, incremental matching)
    against ``tests.visual.reference_impl.evaluate`` (a browser per screenshot, pixel loops, rebuilt matrices);
and for each row the speed ratio and the largest absolute difference of the four sub-scores. Optionally (issue 14)
  * batch: the 16 bundled pairs scored with ``jobs`` 1 and 2 (best of ``--repeat``), wall time, CPU time of the
    whole process tree (Chromium included) and cores busy = CPU / wall; the reports of every run must be identical
    to the first sequential run's, timings aside;
  * Design2Code: the released ``visual_score.py`` (``--d2c-script``, see ``bench/d2c_original.py`` for how to get it
    and what is patched at run time; nothing of it is vendored) on a few bundled pairs, side by side with
    replay-tui on the same pairs: per-pair seconds, the ratio, and the score differences (CLIP stubbed on both).

    python bench/bench_visual.py                 # sizes 25 50 100, bundled pairs + a 120-block page
    python bench/bench_visual.py --quick         # sizes 25 50, small pairs only (a minute or two)
    python bench/bench_visual.py --json out.json
    python bench/bench_visual.py --only-batch --batch --d2c-script /tmp/Design2Code/Design2Code/metrics/visual_score.py

The reference side is slow on purpose: at 100 blocks a side its merge search alone takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from replay_tui.visual.batch import batch_report, bundled_pairs, score_pairs
from replay_tui.visual.blocks import Block, merge_blocks_by_bbox
from replay_tui.visual.examples import example_pair
from replay_tui.visual.match import MergeStats, RatioCache, find_possible_merge
from replay_tui.visual.pipeline import VisualScorer
from replay_tui.visual.scores import sub_scores
from tests.visual import reference_impl as reference

KEYS = ("block", "text", "position", "color")
WORDS = (
    "home about contact news read more services team blog price login cart shop sale new the a of and to in "
    "for with our your delivery returns account search help order track store gift card offers"
).split()


def synthetic_blocks(n: int, seed: int) -> tuple[list[Block], list[Block]]:
    rng = random.Random(seed)
    ref_texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8))) for _ in range(n)]
    pred_texts: list[str] = []
    for text in ref_texts:
        r, words = rng.random(), text.split()
        if r < 0.1 and len(words) >= 2:
            cut = rng.randint(1, len(words) - 1)
            pred_texts += [" ".join(words[:cut]), " ".join(words[cut:])]
        elif r < 0.2 and pred_texts:
            pred_texts[-1] += " " + text
        else:
            pred_texts.append(text)

    def blocks(texts):
        out = []
        for k, t in enumerate(texts):
            out.append(
                Block(
                    t,
                    (rng.randint(0, 50) / 100, k / (n + 5), rng.randint(5, 40) / 100, 0.8 / (n + 5)),
                    (float(rng.randint(0, 255)), float(rng.randint(0, 255)), float(rng.randint(0, 255))),
                    [k],
                )
            )
        return out

    return blocks(pred_texts), blocks(ref_texts)


def fast_match(pred: list[Block], ref: list[Block]):
    ratio = RatioCache()
    stats = MergeStats()
    ref_m = merge_blocks_by_bbox(ref)
    a, b, matching = find_possible_merge(merge_blocks_by_bbox(pred), [x.copy() for x in ref_m], ratio, stats=stats)
    return sub_scores(a, b, matching, ratio), stats


def dicts(blocks: list[Block]) -> list[dict]:
    return [{"text": b.text, "bbox": b.bbox, "color": b.color} for b in blocks]


def max_diff(fast, ref: dict) -> float:
    return max(abs(getattr(fast, k) - ref[k]) for k in KEYS)


def time_it(fn, *args):
    started = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - started


def matching_rows(sizes: list[int], real_pairs: list[tuple]) -> list[dict]:
    """Synthetic block lists, then the real pages' blocks (whose reference matching time and scores were
    recorded during the end-to-end run on exactly these blocks, so they are not recomputed)."""
    rows = []
    cases = [(f"synthetic n={n}", *synthetic_blocks(n, 7 + n), None) for n in sizes]
    cases += [(f"real {name}", pred, ref, recorded) for name, pred, ref, recorded in real_pairs]
    for name, pred, ref, recorded in cases:
        (fast, stats), t_fast = time_it(fast_match, pred, ref)
        if recorded is None:
            expected, t_ref = time_it(reference.score_blocks, dicts(pred), dicts(ref))
        else:
            expected, t_ref = recorded, recorded["matching_seconds"]
        rows.append(
            {
                "case": name,
                "pred_blocks": len(pred),
                "ref_blocks": len(ref),
                "fast_s": t_fast,
                "reference_s": t_ref,
                "ratio": t_ref / t_fast,
                "max_score_diff": max_diff(fast, expected),
                "lsa_calls": stats.lsa_calls,
            }
        )
        _print_row("matching", rows[-1])
    return rows


def big_page(path: Path, seed: int, variant: bool) -> None:
    """A news-index style page with 120 text blocks; the variant splits, joins, rewords and drops some."""
    rng = random.Random(seed)
    items = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))).capitalize() for _ in range(120)]
    if variant:
        vr = random.Random(seed + 1)
        out = []
        for text in items:
            r = vr.random()
            words = text.split()
            if r < 0.08 and len(words) > 3:
                out += [" ".join(words[:2]), " ".join(words[2:])]
            elif r < 0.14 and out:
                out[-1] += " " + text
            elif r < 0.2:
                continue
            elif r < 0.3:
                words[vr.randrange(len(words))] = vr.choice(WORDS)
                out.append(" ".join(words))
            else:
                out.append(text)
        items = out
    body = "\n".join(
        f'<div class="item"><a href="#">{t}</a></div>' if k % 3 == 0 else f"<p>{t}</p>" for k, t in enumerate(items)
    )
    path.write_text(
        "<!DOCTYPE html><html><head><style>body{font-family:'Liberation Sans';margin:24px}"
        "p{margin:6px 0}.item a{color:#1a4d8f}</style></head><body><h1>Latest stories</h1>\n"
        f"{body}\n</body></html>",
        encoding="utf-8",
    )


def end_to_end_rows(pairs: list[tuple[str, Path, Path]], real_out: list) -> list[dict]:
    rows = []
    with VisualScorer() as scorer:
        scorer.score(*pairs[0][1:])  # warm the browser (its launch is paid once per run, not per pair)
        fast_results = []
        for name, ref, pred in pairs:
            result, t_fast = time_it(lambda r=ref, p=pred: scorer.score(r, p)["compat"])
            fast_results.append((name, result, t_fast))
    with ThreadPoolExecutor(1) as pool:  # the reference's Playwright per screenshot runs on its own thread
        for (name, result, t_fast), (_, ref, pred) in zip(fast_results, pairs, strict=True):
            started = time.perf_counter()
            expected = pool.submit(reference.evaluate, str(ref), str(pred)).result()
            t_ref = time.perf_counter() - started
            same_blocks = _block_tuples(result.pred.raw_blocks) == _dict_tuples(expected["raw_pred"]) and _block_tuples(
                result.ref.raw_blocks
            ) == _dict_tuples(expected["raw_ref"])
            rows.append(
                {
                    "case": name,
                    "pred_blocks": len(result.pred_bbox_merged),
                    "ref_blocks": len(result.ref_bbox_merged),
                    "fast_s": t_fast,
                    "reference_s": t_ref,
                    "ratio": t_ref / t_fast,
                    "max_score_diff": max_diff(result.scores, expected),
                    "identical_blocks": same_blocks,
                    "fast_render_s": result.seconds.get("render", 0.0),
                }
            )
            _print_row("end-to-end", rows[-1])
            if same_blocks:
                real_out.append((name, result.pred.raw_blocks, result.ref.raw_blocks, expected))
    return rows


def _block_tuples(blocks):
    return [(b.text, b.bbox, b.color) for b in blocks]


def _dict_tuples(blocks):
    return [(b["text"], tuple(float(v) for v in b["bbox"]), tuple(float(c) for c in b["color"])) for b in blocks]


def _print_row(kind: str, row: dict) -> None:
    extra = f"  identical blocks: {row['identical_blocks']}" if "identical_blocks" in row else ""
    print(
        f"{kind:>10}  {row['case']:<28} {row['pred_blocks']:>4}x{row['ref_blocks']:<4} fast {row['fast_s']:8.3f}s"
        f"  reference {row['reference_s']:9.2f}s  ratio {row['ratio']:7.1f}x  max |score diff| "
        f"{row['max_score_diff']:.2e}{extra}",
        flush=True,
    )


def tree_cpu_by_pid(pid: int | None = None) -> dict[int, float]:
    """user+sys CPU seconds of a process and of every live descendant (each with what it reaped), by pid, from /proc."""
    root = os.getpid() if pid is None else pid
    parents: dict[int, int] = {}
    cpu: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        cpu[int(entry)] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found: dict[int, float] = {}
    stack = [root]
    tick = os.sysconf("SC_CLK_TCK")
    while stack:
        current = stack.pop()
        found[current] = cpu.get(current, 0) / tick
        stack.extend(children.get(current, []))
    return found


def tree_cpu_seconds(pid: int | None = None) -> float:
    """user+sys CPU seconds of a process and every live descendant (plus what they reaped), from /proc."""
    return sum(tree_cpu_by_pid(pid).values())


def tree_cpu_since(before: dict[int, float], pid: int | None = None) -> float:
    """CPU seconds the tree spent since the ``tree_cpu_by_pid`` snapshot ``before``, per process: a
    process that left the tree unreaped in between (a Ray worker that exits, a daemon) takes its
    seconds with it, so the difference of two totals could go negative; this counts what each process
    still in the tree added (new ones whole), never less than 0."""
    return sum(max(0.0, now - before.get(pid_, 0.0)) for pid_, now in tree_cpu_by_pid(pid).items())


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _burn(seconds: float) -> int:
    ends, count = time.perf_counter() + seconds, 0
    while time.perf_counter() < ends:
        count += 1
    return count


def cpu_ceiling(seconds: float = 3.0) -> float:
    """Cores that two pure CPU-bound processes get right now: what 'cores busy' can reach on this machine
    at this moment (other containers on the same cores take the rest)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_burn, [0.01, 0.01]))  # start the workers
        pids = list(pool._processes)  # type: ignore[attr-defined]
        cpu0, started = sum(tree_cpu_seconds(p) for p in pids), time.perf_counter()
        list(pool.map(_burn, [seconds, seconds]))
        return (sum(tree_cpu_seconds(p) for p in pids) - cpu0) / (time.perf_counter() - started)


def batch_run(scorer: VisualScorer, jobs: int) -> tuple[float, float, str, dict]:
    """The bundled pairs once with ``jobs``: wall seconds, tree CPU seconds, the report sans timings, phase sums."""
    pairs = bundled_pairs()
    phases: dict[str, float] = {}

    def scored(index, report, result):
        pairs[index].report = report
        for key, value in result.seconds.items():
            phases[key] = phases.get(key, 0.0) + value

    cpu0, started = tree_cpu_seconds(), time.perf_counter()
    score_pairs(scorer, pairs, "compat", on_scored=scored, jobs=jobs)
    wall, cpu = time.perf_counter() - started, tree_cpu_seconds() - cpu0
    text = json.dumps(_without_timings(batch_report(pairs, "compat").model_dump(mode="json")), sort_keys=True)
    return wall, cpu, text, phases


def batch_rows(jobs_list: list[int], repeat: int) -> list[dict]:
    """Each ``jobs`` ``repeat`` times, interleaved (1, 2, 1, 2, ...) so that a change in the machine's load hits
    every setting alike; the best wall time of each is reported."""
    rows = []
    reference_text = None
    runs: dict[int, list] = {jobs: [] for jobs in jobs_list}
    ceilings = []
    with VisualScorer() as scorer:
        scorer.score(*example_pair("11202", "move"))  # warm the browser and the page pool
        scorer.renderer.page_seconds.clear()
        for _ in range(repeat):
            ceilings.append(cpu_ceiling())
            for jobs in jobs_list:
                wall, cpu, text, phases = batch_run(scorer, jobs)
                reference_text = reference_text or text
                runs[jobs].append((wall, cpu, text == reference_text, phases))
        pages = sorted(scorer.renderer.page_seconds)
    print(
        f"{'renders':>10}  {len(pages)} page renders (navigation + capture): median {pages[len(pages) // 2]:.3f}s"
        f"  p95 {pages[int(len(pages) * 0.95)]:.3f}s  max {pages[-1]:.3f}s  (over 1 s: {sum(p > 1 for p in pages)})",
        flush=True,
    )
    print(
        f"{'ceiling':>10}  two pure CPU-bound processes got {', '.join(f'{c:.2f}' for c in ceilings)} cores "
        "(the most 'cores busy' can show now)",
        flush=True,
    )
    for jobs in jobs_list:
        best = min(runs[jobs], key=lambda r: r[0])
        render_share = best[3].get("render", 0.0) / max(best[3].get("total", 0.0), 1e-9)
        rows.append(
            {
                "jobs": jobs,
                "pairs": len(bundled_pairs()),
                "best_wall_s": best[0],
                "walls_s": [r[0] for r in runs[jobs]],
                "cpu_s": best[1],
                "cores_busy": best[1] / best[0],
                "per_pair_s": best[0] / len(bundled_pairs()),
                "render_share": render_share,
                "identical_to_sequential": all(r[2] for r in runs[jobs]),
                "load_average": os.getloadavg()[0],
                "cpu_ceiling_cores": max(ceilings),
                "render_p95_s": pages[int(len(pages) * 0.95)],
                "render_max_s": pages[-1],
            }
        )
        row = rows[-1]
        print(
            f"{'batch':>10}  jobs {jobs}: best of {repeat} {row['best_wall_s']:6.2f}s "
            f"({', '.join(f'{w:.2f}' for w in row['walls_s'])})  {row['per_pair_s']:.3f}s/pair  "
            f"CPU {row['cpu_s']:6.2f}s  cores busy {row['cores_busy']:.2f}  render {render_share:.0%} of pair time  "
            f"identical to jobs 1: {row['identical_to_sequential']}  load {row['load_average']:.1f}",
            flush=True,
        )
    return rows


D2C_PAIRS = (("11202", "drop"), ("13470", "reword"), ("2310", "move"), ("9656", "recolour"))


def d2c_rows(script: Path, count: int, repeat: int, batch: list[dict]) -> list[dict]:
    """The released Design2Code metric against replay-tui on the same pairs (CLIP stubbed on both sides)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import d2c_original

    from replay_tui.visual.render import find_chromium

    chosen = [example_pair(page, variant) for page, variant in D2C_PAIRS[:count]]
    with tempfile.TemporaryDirectory(prefix="bench-d2c-") as tmp:
        prepared = d2c_original.prepare(script, Path(tmp), find_chromium())
        print(
            f"{'d2c':>10}  {script} (sha256 {prepared['script_sha256'][:12]}; IndentationError fixed at line "
            f"{prepared['indentation_fixed_at_line']}; colour: {prepared['colour']}; CLIP stubbed)",
            flush=True,
        )
        original = d2c_original.run_pairs(prepared, chosen, Path(tmp))
    rows = []
    with VisualScorer() as scorer:
        scorer.score(*chosen[0])  # warm
        for (ref, pred), theirs in zip(chosen, original, strict=True):
            times = []
            for _ in range(repeat):
                result, seconds = time_it(lambda r=ref, p=pred: scorer.score(r, p)["compat"])
                times.append(seconds)
            diff = max(abs(getattr(result.scores, k) - theirs[k]) for k in KEYS)
            rows.append(
                {
                    "case": f"{ref.stem}/{pred.parent.name}",
                    "d2c_s": theirs["seconds"],
                    "ours_single_s": min(times),
                    "ratio_single": theirs["seconds"] / min(times),
                    "max_score_diff": diff,
                    "d2c_scores": {k: theirs[k] for k in KEYS},
                    "our_scores": {k: getattr(result.scores, k) for k in KEYS},
                }
            )
            r = rows[-1]
            print(
                f"{'d2c':>10}  {r['case']:<16} original {r['d2c_s']:6.2f}s  replay-tui one pair "
                f"{r['ours_single_s']:.3f}s ({r['ratio_single']:.1f}x)  max |score diff| {diff:.2e}",
                flush=True,
            )
    for row in batch:
        for r in rows:
            r[f"ratio_batch_jobs{row['jobs']}"] = r["d2c_s"] / row["per_pair_s"]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes and small pages only")
    parser.add_argument("--sizes", type=int, nargs="*", help="synthetic block counts (default 25 50 100)")
    parser.add_argument("--no-e2e", action="store_true", help="matching-only")
    parser.add_argument("--json", metavar="OUT", help="write the rows as JSON")
    parser.add_argument("--batch", action="store_true", help="the 16 bundled pairs with --jobs 1 and 2")
    parser.add_argument("--jobs", type=int, nargs="*", default=[1, 2], help="batch: the jobs to run (default 1 2)")
    parser.add_argument("--repeat", type=int, default=3, help="batch and d2c: runs of replay-tui, best taken")
    parser.add_argument(
        "--d2c-script", metavar="PATH", help="<Design2Code checkout>/Design2Code/metrics/visual_score.py"
    )
    parser.add_argument("--d2c-pairs", type=int, default=4, help="pairs the original scores (default 4, ~10 s each)")
    parser.add_argument(
        "--only-batch", action="store_true", help="skip the internal-reference rows (batch and d2c only)"
    )
    args = parser.parse_args(argv)
    if args.batch or args.d2c_script:
        batch = batch_rows(args.jobs, args.repeat) if args.batch else []
        d2c = d2c_rows(Path(args.d2c_script), args.d2c_pairs, args.repeat, batch) if args.d2c_script else []
        _print_issue14_summary(batch, d2c)
        if args.only_batch:
            if args.json:
                Path(args.json).write_text(json.dumps({"batch": batch, "d2c": d2c}, indent=2))
            return 0
    sizes = args.sizes if args.sizes is not None else ([25, 50] if args.quick else [25, 50, 100])
    e2e: list[dict] = []
    real: list = []
    with tempfile.TemporaryDirectory(prefix="bench-visual-") as tmp:
        pairs = [
            (f"{page}/{variant}", *example_pair(page, variant))
            for page, variant in (("11202", "move"), ("13470", "reword"), ("9656", "drop"))
        ]
        if not args.quick:
            ref, pred = Path(tmp) / "big_ref.html", Path(tmp) / "big_pred.html"
            big_page(ref, 5, False)
            big_page(pred, 5, True)
            pairs.append(("120-block page", ref, pred))
        if not args.no_e2e:
            e2e = end_to_end_rows(pairs, real)
    match = matching_rows(sizes, real)
    big_e2e = [r for r in e2e if min(r["pred_blocks"], r["ref_blocks"]) >= 100]
    big_match = [r for r in match if min(r["pred_blocks"], r["ref_blocks"]) >= 90]
    print()
    print("summary")
    if e2e:
        median = statistics.median(r["ratio"] for r in e2e)
        big = ", ".join("{:.1f}x".format(r["ratio"]) for r in big_e2e)
        print(
            f"  end-to-end ratio: median {median:.1f}x over {len(e2e)} pairs"
            + (f"; pages with 100+ blocks: {big}" if big_e2e else "")
        )
    print("  matching-only ratio: " + ", ".join("{}: {:.1f}x".format(r["case"], r["ratio"]) for r in match))
    if big_match:
        print("  matching-only, ~100 blocks: " + ", ".join("{:.1f}x".format(r["ratio"]) for r in big_match))
    worst = max((r["max_score_diff"] for r in e2e + match), default=0.0)
    print(f"  largest score difference (any row): {worst:.3e}")
    if args.json:
        Path(args.json).write_text(json.dumps({"end_to_end": e2e, "matching": match}, indent=2))
    return 0


def _print_issue14_summary(batch: list[dict], d2c: list[dict]) -> None:
    print()
    print("summary (issue 14)")
    for row in batch:
        print(
            f"  batch jobs {row['jobs']}: {row['best_wall_s']:.2f}s for {row['pairs']} pairs, "
            f"{row['per_pair_s']:.3f}s/pair, cores busy {row['cores_busy']:.2f}, "
            f"identical to jobs 1: {row['identical_to_sequential']}"
        )
    if len(batch) >= 2:
        speedup = batch[0]["best_wall_s"] / batch[-1]["best_wall_s"]
        print(f"  speed-up jobs {batch[-1]['jobs']} vs {batch[0]['jobs']}: {speedup:.2f}x")
    if d2c:
        median = statistics.median(r["d2c_s"] for r in d2c)
        print(f"  Design2Code original: median {median:.2f}s per pair over {len(d2c)} pairs")
        print(
            "  per-pair ratio, one pair at a time: " + ", ".join(f"{r['case']} {r['ratio_single']:.1f}x" for r in d2c)
        )
        for row in batch:
            print(f"  per-pair ratio vs the batch with jobs {row['jobs']}: {median / row['per_pair_s']:.1f}x")
        print(f"  largest score difference to the original: {max(r['max_score_diff'] for r in d2c):.2e}")


if __name__ == "__main__":
    sys.exit(main())
