"""``printable``: what verify prints can show a control character, never act on one."""

from __future__ import annotations

import pytest

from kit.printable import printable


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\r\x1b[2KOK", "\\r\\x1b[2KOK"),  # carriage return and an ANSI erase-line
        ("grade\u202eelbat", "grade\\u202eelbat"),  # a right-to-left override
        ("c1\x85\x9bdel\x7f", "c1\\x85\\x9bdel\\x7f"),  # C1 controls (NEL, CSI) and DEL
        ("two\nlines\ttab", "two\\nlines\\ttab"),
    ],
    ids=["cr_and_ansi", "bidi_override", "c1_and_del", "newline_and_tab"],
)
def test_control_characters_are_escaped(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_printable_text_is_unchanged() -> None:
    text = "OK: acme report, grade conformant ✅ ⚠️ café 'quoted' back\\slash"
    assert printable(text) == text
