"""Text that is safe to print: no control or format characters reach the terminal.

A report field holding a carriage return or an ANSI escape could redraw the terminal line and
show a forged verdict; such characters are printed as Python escapes (``\\r``, ``\\x1b``,
``\\u202e``) instead.
"""

from __future__ import annotations


def _escaped(char: str) -> str:
    # repr() spells out exactly the characters str.isprintable() refuses.
    return char if char.isprintable() else repr(char)[1:-1]


def printable(text: str) -> str:
    """``text`` with C0/C1 controls, DEL, bidi overrides and line separators escaped."""
    if text.isprintable():
        return text
    return "".join(_escaped(char) for char in text)
