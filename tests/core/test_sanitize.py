import pytest

from replay_tui.sanitize import excerpt, in_line, one_line, show_control, strip_control, unsafe_in_line


def test_strip_control_removes_escape_sequences_but_keeps_text():
    text = "a\x1b[31mred\x1b[0m b\x1b]0;evil title\x07c\x00d\x7fe\x9b2Jf\nline\ttab"
    assert strip_control(text) == "ared bcdef\nline\ttab"


def test_markup_is_left_alone_for_views_to_render_literally():
    assert strip_control("[bold red]x[/]") == "[bold red]x[/]"


def test_show_control_makes_controls_visible():
    assert show_control("a\x1b[1mb\x07") == "a␛[1mb\\x07"


def test_excerpt_flattens_and_cuts():
    assert excerpt("a\n\n b\x1b[2J  c", 100) == "a b c"
    cut = excerpt("word " * 100, 20)
    assert len(cut) == 20 and cut.endswith("…")


def test_bidirectional_controls_are_removed_and_shown_as_escapes():
    trojan = "access = 'user\u202e \u2066// admin\u2069 \u2066'"
    assert strip_control(trojan) == "access = 'user // admin '"
    assert "\u202e" not in one_line(trojan) and "\\u202e" in show_control(trojan)
    assert strip_control("Ελληνικά עברית العربية") == "Ελληνικά עברית العربية"  # RTL text itself stays


CLIP = "UFdORUQ="  # base64 of "PWNED"


@pytest.mark.parametrize(
    ("sequence", "what"),
    [
        ("\x1b]0;PWNED\x07", "OSC 0 (set the title), BEL-terminated"),
        ("\x1b]2;PWNED\x1b\\", "OSC 2 (set the title), ST-terminated"),
        (f"\x1b]52;c;{CLIP}\x07", "OSC 52 (write the clipboard)"),
        (f"\x1b]52;p;{CLIP}\x1b\\", "OSC 52 (the primary selection)"),
        ("\x1b]8;;http://PWNED.example/\x1b\\", "OSC 8 (a hyperlink)"),
        ("\x1b[2J", "CSI (clear the screen)"),
        ("\x1b[?1049l", "CSI with a private parameter (leave the alternate screen)"),
        ("\x1b[38;2;255;0;0m", "CSI SGR (a colour)"),
        ("\x1bP+qPWNED\x1b\\", "DCS (a terminfo query)"),
        ("\x1bPtmux;\x1b\x1b]0;PWNED\x07\x1b\\", "DCS (tmux passthrough of an OSC)"),
        ("\x1bkPWNED\x1b\\", "ESC k (screen's and tmux's window name)"),
        ("\x1b_Ga=q;PWNED\x1b\\", "APC (kitty graphics)"),
        ("\x1b^PWNED\x1b\\", "PM"),
        ("\x1bXPWNED\x1b\\", "SOS"),
        ("\x9d0;PWNED\x9c", "8-bit OSC ... ST"),
        ("\x9b2J", "8-bit CSI"),
        ("\x90PWNED\x9c", "8-bit DCS"),
        ("\x1b7\x1b8\x1bc", "two-character escapes (save, restore, reset)"),
        ("\x1b(0", "ESC with an intermediate byte (a character set)"),
    ],
)
def test_every_class_of_sequence_is_removed_whole(sequence, what):
    text = f"a{sequence}b"
    assert strip_control(text) == "ab", what
    assert in_line(text) == "ab", what
    assert unsafe_in_line(text), what


def test_a_string_never_terminated_is_removed_to_the_end():
    assert strip_control("a\x1b]0;PWNED") == "a"  # its body is a title, never text


def test_in_line_keeps_text_and_makes_tabs_and_newlines_spaces():
    assert in_line("a\tb\nc") == "a b c"
    assert unsafe_in_line("a\tb") and unsafe_in_line("a\nb") and unsafe_in_line("a\u202eb")
    assert not unsafe_in_line("plain [bold]text[/] ✓ Ελληνικά")
    assert in_line("plain ✓") == "plain ✓"
