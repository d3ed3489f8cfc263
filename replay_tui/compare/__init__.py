"""Compare run B against run A (the baseline): one comparison, whichever runs it pairs.

One result model (:mod:`~replay_tui.compare.model`: pairs, their changes of outcome, divergences,
the paired statistics, the keys one run only has) that two kinds fill; what differs between them is in
modules named for it:

- how pairs are made: replay runs of the same recorded inputs by (demo file, episode) and step label,
  the identity alignment (:mod:`~replay_tui.compare.runs`, the runs read by
  :mod:`~replay_tui.compare.run_files`, their inputs checked by :mod:`~replay_tui.compare.identity`);
  two logs' own runs by task key, their calls and messages aligned (:mod:`~replay_tui.compare.logs`,
  :mod:`~replay_tui.compare.alignment`); three or more replay runs' agreement
  (:mod:`~replay_tui.compare.agreement`);
- how an outcome reads: one table of words per kind (:mod:`~replay_tui.compare.vocabulary`).

Pure: no Textual, no terminal. The names callers use are re-exported here.
"""

from replay_tui.compare.agreement import Agreement, agreement_matrix
from replay_tui.compare.alignment import Divergence, Row, RowKind, TimelineRow, align, calls_of, global_alignment
from replay_tui.compare.identity import DemoIdentity, RunInfo, run_info
from replay_tui.compare.logs import (
    OutcomeComparison,
    PassK,
    RunsComparison,
    TaskPair,
    compare_many,
    compare_outcomes,
    pair_task,
    pass_hat_k,
    score_of,
    success_of,
)
from replay_tui.compare.model import CompareError, PairedComparison, Unpaired
from replay_tui.compare.run_files import (
    LoadedRun,
    RunSteps,
    StepRow,
    demo_identities,
    is_repeat_report,
    load_run_data,
    load_run_file,
    repeat_runs,
)
from replay_tui.compare.runs import CLUSTER_NOTE, Comparison, EpisodePair, Overlap, StepPair, compare_runs
from replay_tui.compare.vocabulary import (
    EPISODE_FLIPS,
    FLIP_LABELS,
    FLIPS,
    SHOWN_FLIPS,
    TASK_CHANGES,
    EpisodeFlip,
    Flip,
    run_label,
    signed_pp,
)

__all__ = [
    "CLUSTER_NOTE",
    "EPISODE_FLIPS",
    "FLIPS",
    "FLIP_LABELS",
    "SHOWN_FLIPS",
    "TASK_CHANGES",
    "Agreement",
    "CompareError",
    "Comparison",
    "DemoIdentity",
    "Divergence",
    "EpisodeFlip",
    "EpisodePair",
    "Flip",
    "LoadedRun",
    "OutcomeComparison",
    "Overlap",
    "PairedComparison",
    "PassK",
    "Row",
    "RowKind",
    "RunInfo",
    "RunSteps",
    "RunsComparison",
    "StepPair",
    "StepRow",
    "TaskPair",
    "TimelineRow",
    "Unpaired",
    "agreement_matrix",
    "align",
    "calls_of",
    "compare_many",
    "compare_outcomes",
    "compare_runs",
    "demo_identities",
    "global_alignment",
    "is_repeat_report",
    "load_run_data",
    "load_run_file",
    "pair_task",
    "pass_hat_k",
    "repeat_runs",
    "run_info",
    "run_label",
    "score_of",
    "signed_pp",
    "success_of",
]
