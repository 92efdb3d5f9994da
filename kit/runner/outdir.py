"""Which directory a run may write into: a new or empty one, or its own when resumed.

Whatever ``--out`` already holds (another run's report, a planted link) would otherwise be
overwritten or followed, so a new run takes only a directory with nothing in it, and a resume
only a directory laid out as the kit left it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kit.errors import InputError
from kit.rundir import JOURNAL_NAME, RUN_FILE, WORKERS_DIR, finished_report_names

#: What a resumable run directory may hold under these names, and of which kind.
_RUN_LAYOUT = ((RUN_FILE, stat.S_ISREG), (JOURNAL_NAME, stat.S_ISREG), (WORKERS_DIR, stat.S_ISDIR))


def refuse_dangling_link(out: Path) -> None:
    """``--out`` naming a link to nowhere would create its target, wherever that is."""
    if out.is_symlink() and not out.exists():
        raise InputError(
            f"{out}: --out is a symbolic link to {os.readlink(out)}, which does not exist; "
            "name a real directory"
        )


def _entries_text(names: list[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def claim_new_out_dir(out_dir: Path) -> None:
    """Create ``out_dir``, or accept it if it is an empty directory; refuse anything else."""
    try:
        out_dir.mkdir(parents=True)
        return
    except FileExistsError:
        pass
    except OSError as exc:
        raise InputError(f"{out_dir}: cannot create the output directory: {exc.strerror}") from None
    if not stat.S_ISDIR(os.lstat(out_dir).st_mode):
        raise InputError(f"{out_dir}: --out must be a directory; this is a file or a link")
    names = sorted(os.listdir(out_dir))
    if names:
        raise InputError(
            f"{out_dir} is not empty (it holds {_entries_text(names)}): --out must be a new or "
            f"empty directory; to finish a run there use `ckit run --resume {out_dir}`"
        )


def check_run_dir_layout(out_dir: Path) -> None:
    """Before a resume reads or writes: ``out_dir`` holds a run, and no link where it writes."""
    if not out_dir.is_dir():
        raise InputError(f"{out_dir}: not a directory; --resume takes a run's output directory")
    for name, is_kind in _RUN_LAYOUT:
        path = out_dir / name
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            if name == RUN_FILE:
                raise InputError(f"{path}: not found; {out_dir} holds no run to resume") from None
            continue
        if not is_kind(mode):
            raise InputError(
                f"{path}: not what a kit run leaves there (a link, a pipe or the wrong kind of "
                f"file); {out_dir} cannot be resumed"
            )


def refuse_finished_run(out_dir: Path) -> None:
    """A resume rewrites the report files, so it must find none: that run already finished."""
    present = [name for name in finished_report_names() if os.path.lexists(out_dir / name)]
    if present:
        raise InputError(
            f"{out_dir} already holds {_entries_text(present)}: that run finished and its "
            "report is never overwritten; start a new run with another --out"
        )
