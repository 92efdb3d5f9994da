"""Golden artifacts: each passing flow test's program, inputs and reference outputs, kept so an
auditor can re-run the program with the reference runtime of its format (``ckit golden check``).

Opt-in (``ckit run --golden``). The judge process is configured with the run's output
directory (``configure``); the flows tier asks ``golden_writer()`` for the writer after a PASS.
"""

from __future__ import annotations

from pathlib import Path

from kit.golden.writer import GoldenWriter

__all__ = ["GoldenWriter", "configure", "golden_writer"]

_writer: GoldenWriter | None = None


def configure(out_dir: Path | None, log_dir: Path | None = None) -> GoldenWriter | None:
    """Set this process's writer: artifacts go under ``out_dir`` (None: the run asked for none);
    failures are logged in ``log_dir`` (default: the run's ``workers/`` directory)."""
    global _writer
    if out_dir is None:
        _writer = None
    else:
        from kit.rundir import RunDir

        _writer = GoldenWriter(out_dir, log_dir or RunDir(out_dir).workers)
    return _writer


def golden_writer() -> GoldenWriter | None:
    """The judge process's writer when the run asked for artifacts, else None."""
    return _writer
