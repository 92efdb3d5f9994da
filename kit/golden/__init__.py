"""Golden artifacts: each passing flow test's program, inputs and reference outputs, kept so an
auditor can re-run the program with the reference runtime of its format (``ckit golden check``).

Opt-in (``ckit run --golden``). The judge process builds one ``GoldenWriter`` for the run's
output directory and hands it down to the flow judgements in its ``JudgeContext``.
"""

from __future__ import annotations

from kit.golden.writer import GoldenWriter

__all__ = ["GoldenWriter"]
