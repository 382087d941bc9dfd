import random
import re

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


def test_a_run_that_does_not_close_is_literal() -> None:
    assert unescaped(r"``a\_b and ```c\_d") == r"``a_b and ```c_d"


# the one regex this module was, exact but quadratic: the reference the scan must agree with
_REFERENCE = re.compile(r"(```.*?```|(`+)[^`].*?(?<!`)\2(?!`))|\\([!-/:-@\[-`{-~])", re.DOTALL)


def test_the_scan_agrees_with_the_regex_it_replaced() -> None:
    draw = random.Random(31)
    for _ in range(20_000):
        text = "".join(draw.choice("``\\a_\n") for _ in range(draw.randint(0, 30)))
        assert unescaped(text) == _REFERENCE.sub(lambda m: m[1] or m[3], text), text


def test_hostile_runs_of_backticks_are_read_in_one_pass() -> None:
    # 2,000 runs of distinct lengths, none closed: the regex scanned 6 MB for a closer from each (40 s)
    text = "".join("`" * n + "a" + "x" * 2000 for n in range(1, 2000))
    assert unescaped(text + "\\_") == text + "_"
