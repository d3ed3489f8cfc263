from replay_tui.sanitize import excerpt, one_line, show_control, strip_control


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
