"""``replay-tui visual`` (Design2Code visual scores of a generated page against a reference page) and
``replay-tui inspect`` (a saved visual report, or a page pair, in the inspector).

    replay-tui visual REF.html GEN.html [--json out.json] [--png-dir DIR] [--compat design2code | --mode fixed]
    replay-tui visual --ref-dir DIR --pred-dir DIR [--json out.json] [--jobs N]
    replay-tui inspect [RESULT.json | REF.html GEN.html]

Exit codes: 0 when every pair was scored (whatever the scores), 1 when some pair could not be (its status is
``error``, ``too_deep``, ``too_tall``, ``timeout`` or ``crashed``; the other pairs are still scored), 2 on a
usage error, an unreadable input or no browser.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from replay_tui.cli.common import (
    EXIT_MISMATCH,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_executor_arguments,
    add_graphics_argument,
    folder_arg,
    output_arg,
    prepare_graphics,
    print_error,
    print_warning,
    ray_executor,
)
from replay_tui.fileio import atomic_write_bytes, atomic_write_text
from replay_tui.sanitize import strip_control

if TYPE_CHECKING:
    from replay_tui.executors import RayExecutor
    from replay_tui.tui.app_base import AppBase

MATCH_ROWS = 15


def register(subparsers: Any) -> None:
    """Add the ``visual`` sub-command to an argparse sub-parsers object."""
    parser = subparsers.add_parser(
        "visual",
        help="score a generated web page against a reference page (Design2Code metrics)",
        description="Render both pages in headless Chromium, find text blocks with the colour-perturbation trick, "
        "match them and print the Design2Code scores: Block-Match, Text, Position, Color, CLIP and "
        "the final score. Default: the reference implementation's numbers (--compat design2code).",
    )
    parser.add_argument("ref", nargs="?", metavar="REF.html", help="reference page")
    parser.add_argument("pred", nargs="?", metavar="GEN.html", help="generated page")
    parser.add_argument("--ref-dir", metavar="DIR", help="batch: folder of reference pages")
    parser.add_argument(
        "--pred-dir",
        metavar="DIR",
        action="append",
        help="batch: folder of generated pages with the same names; give it twice (A, then B) to compare "
        "two versions: per-page and per-score deltas B − A with paired bootstrap intervals",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--compat", choices=["design2code"], help="reproduce the reference's numbers, quirks included (the default)"
    )
    which.add_argument(
        "--mode",
        choices=["compat", "fixed"],
        help="fixed: the metric with known defects "
        "corrected; the report lists each correction and where the two modes disagree",
    )
    parser.add_argument("--json", metavar="OUT.json", help="write the full report (blocks, matches, scores)")
    parser.add_argument("--png-dir", metavar="DIR", help="write the screenshots and an annotated copy of each")
    parser.add_argument(
        "--clip-weights",
        metavar="PATH",
        help="CLIP ViT-B/32 weights (ViT-B-32.pt); default $REPLAY_TUI_CLIP_WEIGHTS; needs the "
        "'clip' extra. Without them CLIP is null and the final score is partial",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="bound on each render of a page: load, height check and capture together (default 30)",
    )
    parser.add_argument(
        "--pair-timeout",
        type=float,
        metavar="SECONDS",
        help="bound on all the renders of a pair together (default: 4 x --timeout); a pair past it ends "
        "with status timeout and the batch goes on",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="batch: score up to N page pairs at once in one Chromium (default 1; 2 on a 2-core machine keeps "
        "both cores busy); reports keep the pair order and are the same as with --jobs 1",
    )
    add_executor_arguments(parser, "batch page pairs (a Chromium per Ray worker)")
    parser.add_argument(
        "--show-matches",
        type=int,
        default=MATCH_ROWS,
        metavar="N",
        help=f"matched pairs to list for a single pair (default {MATCH_ROWS})",
    )
    parser.add_argument(
        "--tui",
        action="store_true",
        help="open the pair in the visual-metric inspector (blocks and matches on the "
        "screenshots), or a batch in the visual batch screen",
    )
    add_graphics_argument(
        parser,
        "with --tui: a terminal graphics protocol when the terminal has one (auto), or the "
        "half-block renderer (halfblock)",
    )
    parser.set_defaults(func=run)


def register_inspect(subparsers: Any) -> None:
    """Add the ``inspect`` sub-command to an argparse sub-parsers object."""
    parser = subparsers.add_parser(
        "inspect",
        help="open a visual report (or a page pair) in the inspector",
        description="Open the visual-metric inspector on a saved pair report "
        "(replay-tui visual --json) or on REF.html GEN.html; a saved batch "
        "report, or no argument (the bundled page pairs), opens the visual "
        "batch screen.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="RESULT.json | REF.html GEN.html",
        help="a saved pair or batch report, or two pages (default: the bundled page pairs)",
    )
    parser.add_argument("--mode", choices=("compat", "fixed"), help="scoring mode (default: the report's)")
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="bound on each page's load and capture (default 30)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="a batch: score up to N page pairs at once (default 1); rows keep the pair order",
    )
    add_graphics_argument(
        parser,
        "screenshots: a terminal graphics protocol when the terminal has one (auto), or "
        "the half-block renderer everywhere (halfblock)",
    )
    parser.set_defaults(func=run_inspect)


def _mode(args: argparse.Namespace) -> str:
    return args.mode or "compat"


def _txt(value: object, style: str = "") -> Text:
    return Text(strip_control(str(value)), style=style)


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def run(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run ``visual``: scores on ``out``, one-line errors on ``err``; return the exit code."""
    try:
        return _run(args, out, err)
    except UsageError as exc:
        print_error(err, "visual", str(exc))
        return EXIT_USAGE


def _run(args: argparse.Namespace, out: Console, err: Console) -> int:
    from replay_tui.visual.clip import ClipUnavailable, load_clip_scorer
    from replay_tui.visual.render import RenderError

    pred_dirs: list[str] = args.pred_dir or []
    batch = bool(args.ref_dir or pred_dirs)
    if batch and (args.ref or args.pred):
        raise UsageError("give either REF.html GEN.html or --ref-dir/--pred-dir, not both")
    if batch and not (args.ref_dir and pred_dirs):
        raise UsageError("batch mode needs both --ref-dir and --pred-dir")
    if len(pred_dirs) > 2:
        raise UsageError("--pred-dir: one folder to score, or two (A, then B) to compare")
    if not batch and not (args.ref and args.pred):
        raise UsageError("expected REF.html GEN.html (or --ref-dir DIR --pred-dir DIR)")
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.pair_timeout is not None and args.pair_timeout <= 0:
        raise UsageError("--pair-timeout must be positive")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    executor = ray_executor(args)
    if executor is not None and (not batch or args.tui):
        raise UsageError("--executor ray scores batches (--ref-dir/--pred-dir) on the command line, without --tui")
    output_arg(args.json, "--json")
    folders = (folder_arg(args.ref_dir, "--ref-dir"), folder_arg(pred_dirs[0], "--pred-dir")) if batch else None
    other = folder_arg(pred_dirs[1], "--pred-dir") if len(pred_dirs) == 2 else None
    clip_scorer = None
    weights = args.clip_weights or os.environ.get("REPLAY_TUI_CLIP_WEIGHTS")
    if weights:
        try:
            clip_scorer = load_clip_scorer(weights)
        except ClipUnavailable as exc:
            print_warning(err, "visual", f"CLIP unavailable ({exc}); clip is null and the final score partial")
    if args.tui:
        return _tui(args, clip_scorer, folders, other)
    if executor is not None and folders is not None:
        return _batch_on_ray(args, out, err, executor, weights, folders, other)
    try:
        renderer, owned = renderer_factory(int(args.timeout * 1000))
    except RenderError as exc:
        raise UsageError(str(exc)) from None
    try:
        if folders is not None and other is not None:
            return _batch_compare(args, out, err, renderer, clip_scorer, folders[0], folders[1], other)
        if folders is not None:
            return _batch(args, out, err, renderer, clip_scorer, *folders)
        return _single(args, out, err, renderer, clip_scorer)
    except RenderError as exc:
        raise UsageError(str(exc)) from None
    finally:
        if owned:
            renderer.close()


def _batch_on_ray(
    args, out: Console, err: Console, executor: RayExecutor, weights: str | None, folders: tuple[Path, Path], other
) -> int:
    """The batch (or the A/B batches) scored by Ray workers, each with its own Chromium; no browser here."""
    from replay_tui.executors import ExecutorError, ScorerRecipe, score_pairs_on_ray
    from replay_tui.visual.render import RenderError

    pair_ms = None if args.pair_timeout is None else int(args.pair_timeout * 1000)
    recipe = ScorerRecipe(timeout_ms=int(args.timeout * 1000), clip_weights=weights, pair_timeout_ms=pair_ms)

    def score(todo, mode, started, scored, failed) -> None:
        score_pairs_on_ray(
            executor,
            recipe,
            todo,
            mode,
            on_start=started,
            on_scored=lambda index, report: scored(index, report, None),
            on_error=failed,
        )

    try:
        with executor:
            if other is not None:
                return _batch_compare(args, out, err, None, None, folders[0], folders[1], other, score=score)
            return _batch(args, out, err, None, None, *folders, score=score)
    except (ExecutorError, RenderError) as exc:
        raise UsageError(str(exc)) from None


def _scorer(args: argparse.Namespace, renderer, clip_scorer):
    from replay_tui.visual.pipeline import VisualScorer

    pair_ms = None if args.pair_timeout is None else int(args.pair_timeout * 1000)
    return VisualScorer(renderer=renderer, clip_scorer=clip_scorer, pair_timeout_ms=pair_ms)


def _print_isolation(out: Console, layers: Sequence[str]) -> None:
    """Which sandbox layers were active (issue 15; the README explains each): the network namespace is missing
    where the OS refuses it."""
    if layers:
        missing = "" if "netns" in layers else " (no network namespace: unshare is missing or not allowed here)"
        out.print(_txt("renderer sandbox: " + ", ".join(layers) + missing, "dim"), soft_wrap=True)


def _default_renderer(timeout_ms: int):
    from replay_tui.visual import render

    return render.renderer_factory(timeout_ms)


# (timeout_ms) -> (renderer, close it when done); tests swap in a shared browser.
renderer_factory = _default_renderer


def _check_file(path: str, what: str) -> Path:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{what} {path!r} is not a readable file")
    try:
        with p.open("rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise UsageError(f"{what} {path!r}: {exc.strerror or exc}") from None
    return p


def _single(args, out: Console, err: Console, renderer, clip_scorer) -> int:
    from replay_tui.visual.models import FAILED_STATUSES
    from replay_tui.visual.report import score_and_report

    ref = _check_file(args.ref, "reference")
    pred = _check_file(args.pred, "generated page")
    mode = _mode(args)
    with _scorer(args, renderer, clip_scorer) as scorer:
        report, result = score_and_report(scorer, ref, pred, mode)
    _print_pair(out, report, args.show_matches)
    _print_isolation(out, report.sandbox)
    if args.png_dir:
        _write_pngs(Path(args.png_dir), pred.stem, result)
        out.print(_txt(f"screenshots written to {args.png_dir}", "dim"))
    if args.json:
        atomic_write_text(args.json, report.model_dump_json(by_alias=True, indent=2))
        out.print(_txt(f"report written to {args.json}", "dim"))
    return EXIT_MISMATCH if report.result.status in FAILED_STATUSES else EXIT_OK


def _tui(args: argparse.Namespace, clip_scorer, folders: tuple[Path, Path] | None, other: Path | None = None) -> int:
    """Open the inspector on a pair, or the batch screen on the folders (Chromium starts in the app);
    with a second pred folder the screen compares B with A."""
    timeout_ms = int(args.timeout * 1000)
    if folders is not None:
        from replay_tui.tui.visual.batch import VisualBatchApp
        from replay_tui.visual.batch import discover_pairs

        ref_dir, pred_dir = folders
        pairs, missing = discover_pairs(ref_dir, [pred_dir] if other is None else [pred_dir, other])
        if not pairs:
            raise UsageError(f"no page pairs in {ref_dir} and {pred_dir}")
        app: AppBase = VisualBatchApp(
            pairs, mode=_mode(args), timeout_ms=timeout_ms, clip_scorer=clip_scorer, missing=missing, jobs=args.jobs
        )
    else:
        from replay_tui.tui.visual.inspector import InspectorApp

        ref = _check_file(args.ref, "reference")
        pred = _check_file(args.pred, "generated page")
        app = InspectorApp(ref, pred, mode=_mode(args), timeout_ms=timeout_ms, clip_scorer=clip_scorer)
    prepare_graphics(args)
    app.theme_from_config().run()
    return EXIT_OK


def _scores_table(report) -> Table:
    from replay_tui.visual.scores import RENORMALISED

    result = report.result
    s = result.scores
    table = Table(title=f"Design2Code visual scores ({result.mode})", header_style="bold")
    renormalised = s.final_renormalised is not None
    for name in ("Block-Match", "Text", "Position", "Color", "CLIP", "Final"):
        table.add_column(name, justify="right")
    if renormalised:
        table.add_column(RENORMALISED, justify="right")
    final = _fmt(s.final) + (" (partial)" if s.final_partial else "")
    table.add_row(
        _fmt(s.block),
        _fmt(s.text),
        _fmt(s.position),
        _fmt(s.color),
        _fmt(s.clip),
        Text(final, style="bold"),
        *([Text(_fmt(s.final_renormalised), style="bold")] if renormalised else []),
    )
    if report.compat is not None:
        c = report.compat.scores
        table.add_row(
            *(Text(_fmt(v), style="dim") for v in (c.block, c.text, c.position, c.color, c.clip)),
            Text(_fmt(c.final) + " compat", style="dim"),
            *([Text(_fmt(c.final_renormalised), style="dim")] if renormalised else []),
        )
    return table


def _print_pair(out: Console, report, show: int) -> None:
    from replay_tui.visual.scores import RENORMALISED

    result = report.result
    out.print(_scores_table(report))
    status_style = "green" if result.status == "ok" else "yellow"
    line = Text()
    line.append("status: ")
    line.append(result.status, style=status_style)
    line.append(
        f"   blocks: generated {len(result.pred.blocks)} / reference {len(result.ref.blocks)}"
        f"   matched: {sum(m.kept for m in result.matches)}"
    )
    out.print(line)
    if result.reason:
        out.print(_txt(f"why {result.status}: {result.reason}", "yellow"), soft_wrap=True)
    elif result.error:
        out.print(_txt(f"error: {result.error}", "red"), soft_wrap=True)
    if result.scores.final_partial:
        out.print(
            _txt(
                "CLIP is not computed (no weights given): Final counts it as 0 and is partial (the reference's "
                f"number); {RENORMALISED} is the mean of the other four",
                "yellow",
            ),
            soft_wrap=True,
        )
    for side, page in (("generated", result.pred), ("reference", result.ref)):
        for note in page.notes + page.render_errors:
            out.print(_txt(f"{side}: {note}", "yellow"), soft_wrap=True)
        if page.blocked_requests:
            out.print(_txt(f"{side}: {len(page.blocked_requests)} network request(s) blocked", "dim"))
    if result.corrections:
        out.print(Text("corrections applied (fixed mode):", style="bold"))
        for name in result.corrections:
            out.print(_txt(f"  - {name}"))
    for d in report.disagreements:
        out.print(
            _txt(
                f"disagrees with compat on {d.score}: {_fmt(d.compat)} -> {_fmt(d.fixed)}: " + "; ".join(d.reasons),
                "magenta",
            ),
            soft_wrap=True,
        )
    kept = [m for m in result.matches if m.kept]
    if kept and show > 0:
        table = Table(title="Matched blocks", header_style="bold")
        for name in ("generated text", "reference text", "text", "position", "color"):
            table.add_column(
                name, overflow="fold", justify="right" if name in ("text", "position", "color") else "left"
            )
        for m in kept[:show]:
            table.add_row(
                _txt(_short(result.pred.blocks[m.pred].text)),
                _txt(_short(result.ref.blocks[m.ref].text)),
                _fmt(m.text),
                _fmt(m.position),
                _fmt(m.color),
            )
        out.print(table)
        if len(kept) > show:
            out.print(_txt(f"... {len(kept) - show} more in --json", "dim"))


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _write_pngs(folder: Path, stem: str, result) -> None:
    import cv2

    for side, page, blocks in (
        ("pred", result.pred, result.pred_blocks or result.pred_bbox_merged),
        ("ref", result.ref, result.ref_blocks or result.ref_bbox_merged),
    ):
        if page.image is None:
            continue
        bgr = page.image[:, :, ::-1]
        ok, png = cv2.imencode(".png", bgr)
        if ok:
            atomic_write_bytes(folder / f"{stem}_{side}.png", png.tobytes())
        annotated = bgr.copy()
        h, w = annotated.shape[:2]
        for block in blocks:
            x, y, bw, bh = block.bbox
            cv2.rectangle(annotated, (int(x * w), int(y * h)), (int((x + bw) * w), int((y + bh) * h)), (40, 160, 40), 1)
        ok, png = cv2.imencode(".png", annotated)
        if ok:
            atomic_write_bytes(folder / f"{stem}_{side}_blocks.png", png.tobytes())


def _batch_compare(
    args, out: Console, err: Console, renderer, clip_scorer, ref_dir: Path, pred_a: Path, pred_b: Path, score=None
) -> int:
    """Score both folders against the references, then B against A per score (paired intervals)."""
    from replay_tui.visual.compare import VisualCompareError, compare_batches

    reports: list = []
    for pred_dir in (pred_a, pred_b):
        _batch(args, out, err, renderer, clip_scorer, ref_dir, pred_dir, collect=reports, write_json=False, score=score)
    try:
        comparison = compare_batches(reports[0], reports[1])
    except VisualCompareError as exc:
        raise UsageError(str(exc)) from None
    table = Table(
        title=f"B ({_folder_name(pred_b)}) − A ({_folder_name(pred_a)}) on {comparison.pages} pages",
        header_style="bold",
    )
    for name, justify in (
        ("score", "left"),
        ("A", "right"),
        ("B", "right"),
        ("B − A", "right"),
        ("95% CI", "right"),
        ("better", "right"),
        ("worse", "right"),
        ("same", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for score in comparison.scores:
        table.add_row(
            score.score,
            _fmt(score.mean_a),
            _fmt(score.mean_b),
            f"{score.difference:+.4f}",
            f"[{score.low:+.4f}, {score.high:+.4f}]",
            str(score.better),
            str(score.worse),
            str(score.same),
        )
    out.print(table)
    pages = Table(title="per page (B − A)", header_style="bold")
    pages.add_column("file")
    for name in ("final", "block", "text", "position", "color"):
        pages.add_column(name, justify="right")
    for pair in comparison.pairs:
        pages.add_row(
            _txt(pair.name),
            *(
                "—" if pair.delta(name) is None else f"{pair.delta(name):+.4f}"
                for name in ("final", "block", "text", "position", "color")
            ),
        )
    out.print(pages)
    for line in (
        comparison.warnings
        + ([f"only in A: {', '.join(comparison.only_a[:10])}"] if comparison.only_a else [])
        + ([f"only in B: {', '.join(comparison.only_b[:10])}"] if comparison.only_b else [])
    ):
        out.print(_txt(line, "yellow"), soft_wrap=True)
    if args.json:
        atomic_write_text(args.json, comparison.model_dump_json(indent=2))
        out.print(_txt(f"comparison written to {args.json}", "dim"))
    return EXIT_OK


def _folder_name(path: Path) -> str:
    return strip_control(path.name or str(path))


def _batch(
    args,
    out: Console,
    err: Console,
    renderer,
    clip_scorer,
    ref_dir: Path,
    pred_dir: Path,
    *,
    collect: list | None = None,
    write_json: bool = True,
    score: Callable[..., None] | None = None,
) -> int:
    """Score a folder against the references: ``score(todo, mode, started, scored)`` when given (on Ray),
    else with ``renderer`` here."""
    from replay_tui.visual.batch import discover_pairs, page_names, score_pairs
    from replay_tui.visual.models import (
        FAILED_STATUSES,
        SCORE_COLUMNS,
        BatchReport,
        BatchRow,
        as_mode,
        batch_means,
        renormalised_mean,
    )
    from replay_tui.visual.scores import RENORMALISED

    names = page_names(ref_dir)
    if not names:
        raise UsageError(f"no .html files in {ref_dir}")
    todo, _ = discover_pairs(ref_dir, [pred_dir])
    found = {pair.ref.name for pair in todo}
    missing = [n for n in names if n not in found]
    mode = _mode(args)
    rows: list[BatchRow] = []
    pairs = []
    layers: list[str] = list(getattr(renderer, "isolation", ()))  # on Ray: what the workers' reports say
    with Progress(
        TextColumn("[bold]scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[name]}"),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("pairs", total=len(todo), name="")

        def started(index: int) -> None:
            progress.update(task, name=strip_control(todo[index].ref.name))

        def scored(index: int, report, _result) -> None:
            rows.append(BatchRow.from_report(todo[index].ref.name, report))
            if not layers:
                layers.extend(report.sandbox)
            if args.json:
                pairs.append(report)
            progress.advance(task)

        def failed(index: int, exc: Exception) -> None:  # one pair's failure never stops the batch
            rows.append(BatchRow.failed(todo[index].ref.name, f"{type(exc).__name__}: {exc}"))
            progress.advance(task)

        if score is not None:
            score(todo, mode, started, scored, failed)
        else:
            with _scorer(args, renderer, clip_scorer) as scorer:
                score_pairs(scorer, todo, mode, on_start=started, on_scored=scored, on_error=failed, jobs=args.jobs)
    means = batch_means(rows)
    table = Table(title=f"Design2Code visual scores ({mode}): {len(rows)} pairs", header_style="bold")
    table.add_column("file")
    table.add_column("status")
    for name in SCORE_COLUMNS:
        table.add_column(name, justify="right")
    renormalised = renormalised_mean(rows)
    if renormalised is not None:
        table.add_column("final (4, renorm.)", justify="right")
    reasons = any(r.reason for r in rows)
    if reasons:
        table.add_column("why", overflow="fold", ratio=1)
    for row in rows:
        table.add_row(
            _txt(row.name),
            _txt(row.status, "green" if row.status == "ok" else "yellow"),
            *(_fmt(getattr(row, c)) for c in SCORE_COLUMNS),
            *([_fmt(row.final_renormalised)] if renormalised is not None else []),
            *([_txt(row.reason or "", "dim")] if reasons else []),
        )
    table.add_row(
        Text("mean", style="bold"),
        "",
        *(Text(_fmt(means[c]), style="bold") for c in SCORE_COLUMNS),
        *([Text(_fmt(renormalised), style="bold")] if renormalised is not None else []),
    )
    out.print(table)
    # The reference's runner prints the unweighted per-column means over files, in this order.
    out.print(Text("means  " + "  ".join(f"{c}={_fmt(means[c])}" for c in SCORE_COLUMNS)))
    if any(r.clip is None for r in rows):
        out.print(_txt("CLIP not computed: final is partial (CLIP counted as 0)", "yellow"))
    if renormalised is not None:
        out.print(_txt(f"{RENORMALISED}: mean {_fmt(renormalised)} (the mean of the other four scores)", "yellow"))
    failures = [r for r in rows if r.status in FAILED_STATUSES]
    for row in failures:
        out.print(_txt(f"{row.name}: {row.status}: {row.reason or 'not scored'}", "red"), soft_wrap=True)
    _print_isolation(out, layers)
    if missing:
        out.print(
            _txt(
                f"{len(missing)} reference page(s) without a generated page, skipped: "
                + ", ".join(missing[:10])
                + (" ..." if len(missing) > 10 else ""),
                "yellow",
            ),
            soft_wrap=True,
        )
    report = BatchReport(
        ref_dir=str(ref_dir),
        pred_dir=str(pred_dir),
        mode=as_mode(mode),
        rows=rows,
        means=means,
        missing=missing,
        pairs=pairs,
        sandbox=layers,
    )
    if collect is not None:
        collect.append(report)
    if args.json and write_json:
        atomic_write_text(args.json, report.model_dump_json(by_alias=True, indent=2))
        out.print(_txt(f"report written to {args.json}", "dim"))
    return EXIT_MISMATCH if failures else EXIT_OK


def inspect_app(paths: list[str], mode: str | None, *, timeout_ms: int = 30_000, jobs: int = 1) -> AppBase:
    """The app for ``inspect``: a saved pair report, a saved batch report, or REF.html GEN.html; in
    the config's theme, remembering the one chosen (:meth:`AppBase.theme_from_config`)."""
    return _inspect_app(paths, mode, timeout_ms=timeout_ms, jobs=jobs).theme_from_config()


def _inspect_app(paths: list[str], mode: str | None, *, timeout_ms: int, jobs: int) -> AppBase:
    from replay_tui.tui.visual.batch import VisualBatchApp
    from replay_tui.tui.visual.inspector import InspectorApp
    from replay_tui.visual.batch import bundled_pairs, pairs_from_report
    from replay_tui.visual.models import BatchReport, ReportFileError, read_report

    if not paths:
        return VisualBatchApp(bundled_pairs(), mode=mode or "compat", timeout_ms=timeout_ms, jobs=jobs)
    if len(paths) == 2:
        for path in paths:
            if not Path(path).is_file():
                raise UsageError(f"{path}: no such page")
        return InspectorApp(paths[0], paths[1], mode=mode or "compat", timeout_ms=timeout_ms)
    if len(paths) != 1:
        raise UsageError("inspect takes RESULT.json or REF.html GEN.html")
    try:
        report = read_report(paths[0])
    except ReportFileError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(report, BatchReport):
        return VisualBatchApp(pairs_from_report(report), mode=mode or report.mode, timeout_ms=timeout_ms, jobs=jobs)
    for path in (report.ref, report.pred):
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such page (the report's pages are rendered again for the screenshots)")
    chosen = mode or report.mode
    return InspectorApp(
        report.ref, report.pred, mode=chosen, timeout_ms=timeout_ms, report=report if chosen == report.mode else None
    )


def run_inspect(args: argparse.Namespace, out: Console, err: Console) -> int:
    """Run ``inspect``: open the app; a :class:`UsageError` before it starts."""
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    app = inspect_app(args.paths, args.mode, timeout_ms=int(args.timeout * 1000), jobs=args.jobs)
    prepare_graphics(args)
    app.run()
    return EXIT_OK
