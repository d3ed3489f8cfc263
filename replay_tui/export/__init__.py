"""Reports, one package: a replay run (:mod:`.run`), a comparison of runs (:mod:`.comparison`) and a
comparison of two logs by task (:mod:`.outcomes`), in JSON, Markdown, CSV, HTML and JUnit XML (no
Textual). They escape, format and write through one module of helpers, :mod:`.text`.

A run's report is what most callers write, so its names are importable from the package itself,
each imported on first use: the package is imported for its format names (the command line's choices),
and that must not build the run report's models.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replay_tui.export.run import (
        CONFIDENCE,
        CSV_COLUMNS,
        CSV_OUTCOME_COLUMNS,
        CSV_VERDICT_COLUMNS,
        DEFAULT_TITLE,
        GROUP_STEPS_SHOWN,
        INTERVAL_METHOD,
        INTERVAL_NOTE,
        MD_MAX_GROUPS,
        SUITE_NAME,
        Interval,
        Intervals,
        agreement_phrase,
        group_dict,
        headline,
        missed_lines,
        outcome_pairs,
        outcome_phrase,
        outcome_run_pairs,
        render_report,
        report_dict,
        report_intervals,
        report_json,
        verdict,
        write_report,
    )
    from replay_tui.export.text import (
        FORMAT_ALIASES,
        FORMATS,
        HTML_DIFF_CHARS,
        MD_MAX_CHARS,
        MD_MAX_ROWS,
        SUFFIX_FORMATS,
        ExportError,
        clean,
        csv_cell,
        format_for_path,
        md_code,
        md_lines,
        md_text,
        normalize_format,
    )

__all__ = [
    "CONFIDENCE",
    "CSV_COLUMNS",
    "CSV_OUTCOME_COLUMNS",
    "CSV_VERDICT_COLUMNS",
    "DEFAULT_TITLE",
    "FORMATS",
    "FORMAT_ALIASES",
    "GROUP_STEPS_SHOWN",
    "HTML_DIFF_CHARS",
    "INTERVAL_METHOD",
    "INTERVAL_NOTE",
    "MD_MAX_CHARS",
    "MD_MAX_GROUPS",
    "MD_MAX_ROWS",
    "SUFFIX_FORMATS",
    "SUITE_NAME",
    "ExportError",
    "Interval",
    "Intervals",
    "agreement_phrase",
    "clean",
    "csv_cell",
    "format_for_path",
    "group_dict",
    "headline",
    "md_code",
    "md_lines",
    "md_text",
    "missed_lines",
    "normalize_format",
    "outcome_pairs",
    "outcome_phrase",
    "outcome_run_pairs",
    "render_report",
    "report_dict",
    "report_intervals",
    "report_json",
    "verdict",
    "write_report",
]


def __getattr__(name: str) -> Any:
    """A name of :mod:`.text` (the formats, light), else of :mod:`.run`, imported when first asked for."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    text = importlib.import_module("replay_tui.export.text")
    home = text if hasattr(text, name) else importlib.import_module("replay_tui.export.run")
    return getattr(home, name)
