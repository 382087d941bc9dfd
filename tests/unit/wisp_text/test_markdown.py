from wisp_text.markdown import unescaped


def test_prose_loses_its_backslash_escapes() -> None:
    assert unescaped(r"Set PRAGMA foreign\_keys = ON; a\*b, \[note\] and 1\. item") == \
        "Set PRAGMA foreign_keys = ON; a*b, [note] and 1. item"


def test_code_keeps_its_backslashes() -> None:
    text = "Match `\\d+\\.txt` or\n\n```\ngrep '\\_x' file\n```\n\nthen foreign\\_keys"
    assert unescaped(text) == "Match `\\d+\\.txt` or\n\n```\ngrep '\\_x' file\n```\n\nthen foreign_keys"


def test_a_backslash_before_a_letter_is_text() -> None:
    assert unescaped(r"C:\Users\name") == r"C:\Users\name"


def test_an_escaped_backtick_opens_no_code_span() -> None:
    assert unescaped(r"Type the \` key, then foo\_bar and the \` key again") == \
        "Type the ` key, then foo_bar and the ` key again"


def test_a_longer_fence_holds_a_backtick_inside() -> None:
    assert unescaped(r"see ``a`b\_c`` and d\_e") == r"see ``a`b\_c`` and d_e"
