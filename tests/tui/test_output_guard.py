"""The frame guard: what a forgotten call site lets into a strip never reaches the terminal as a sequence."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.segment import ControlType, Segment
from rich.style import Style
from textual._compositor import ChopsUpdate, InlineUpdate, LayoutUpdate
from textual.geometry import Region
from textual.strip import Strip

from replay_tui.tui.output_guard import guard_update, safe_strip

HOSTILE = "x\x1b]0;PWNED\x07\x1b]52;c;UFdORUQ=\x1b\\\x1bkPWNED\x1b\\\x1b[2J\x9d0;PWNED\x9c\ty\u202e"


def rendered(update) -> str:
    return update.render_segments(Console(color_system="truecolor", force_terminal=True))


def test_a_strip_with_sequences_keeps_its_text_and_width_and_loses_the_sequences():
    strip = Strip([Segment("ok ", Style(bold=True)), Segment(HOSTILE, Style(color="red"))])
    safe = safe_strip(strip)
    assert safe.text.startswith("ok x y") and "PWNED" not in safe.text and "\x1b" not in safe.text
    assert safe.cell_length == strip.cell_length and cell_len(safe.text) == cell_len(strip.text)
    assert [segment.style for segment in safe] == [segment.style for segment in strip]


def test_a_clean_strip_is_passed_as_it_is():
    strip = Strip([Segment("plain ✓ [b]markup[/b] Ελληνικά", Style(italic=True))])
    assert safe_strip(strip) is strip


def test_control_segments_and_a_bare_cursor_move_pass():
    """How textual-image places a sixel picture: a cursor move, then the sixel data as a control."""
    sixel = Segment("\x1bPq#0;2;0;0;0#0~~\x1b\\", control=((ControlType.CURSOR_FORWARD, 0),))
    strip = Strip([Segment("\x1b[3;4H"), sixel, Segment("\x1b[5;6H")])
    assert list(safe_strip(strip)) == list(strip)


def test_every_kind_of_update_is_guarded():
    def strip() -> Strip:
        return Strip([Segment("a" + HOSTILE)])

    layout = guard_update(LayoutUpdate([[strip()], [strip(), strip()]], Region(0, 0, 80, 2)))
    chops = guard_update(ChopsUpdate([{0: strip(), 30: None}], [(0, 0, 80)], [[30, 80]]))
    inline = guard_update(InlineUpdate([strip(), strip()]))
    for update in (layout, chops, inline):
        output = rendered(update)
        assert "PWNED" not in output and "]52;" not in output and "\x1bk" not in output, output
        assert "\x9d" not in output and "\u202e" not in output and "\t" not in output
