"""Readers of agent logs, one module per format, behind one registry.

Each reader module defines ``READER``: a :class:`~replay_tui.formats.base.Reader` that sniffs a
file's head (detection by content, not by name) and streams :class:`~replay_tui.episodes.model.Trajectory`
objects or :class:`~replay_tui.episodes.problems.LoadProblem` values (a bad record never hides the
others). ``replay-tui formats`` lists them; ``--format NAME`` skips detection.
"""

from replay_tui.formats.base import Detection, EpisodeSummary, IndexingReader, Reader, ReadItem
from replay_tui.formats.registry import (
    FORMATS,
    FormatError,
    FormatInfo,
    allowing_pickles,
    choose_reader,
    detect,
    read_trajectories,
    reader_for,
)

__all__ = [
    "FORMATS",
    "Detection",
    "EpisodeSummary",
    "FormatError",
    "FormatInfo",
    "IndexingReader",
    "ReadItem",
    "Reader",
    "allowing_pickles",
    "choose_reader",
    "detect",
    "read_trajectories",
    "reader_for",
]
