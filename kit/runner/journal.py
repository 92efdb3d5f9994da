"""The run journal: one JSON line per finished test, appended as it finishes, fsynced in groups.

``ckit run --resume`` trusts the journal for every test it does not run again, so a journal is
only read back if it is exactly what this run wrote:

- **Chained.** Each line carries ``prev``: the sha256 of the previous line's bytes (without its
  newline); the first line's ``prev`` is the run id, the sha256 of the exact bytes of
  ``run.json``. A line removed from the middle, lines swapped, or a journal moved beside another
  run's ``run.json`` (or a ``run.json`` edited after the start) break the chain.
- **Keyed.** Each line carries ``hmac``: HMAC-SHA256, under a random per-run key, of the line
  without that field. The key is made when the run starts and kept *outside* ``--out``, in
  ``<user config dir>/ckit/runs/<run id>.key`` (``$XDG_CONFIG_HOME`` or ``~/.config``; mode 600,
  directories 700). Anyone can recompute a sha256 chain, so the chain alone would let lines be
  forged; the key is what makes "append lines to journal.jsonl" not enough. A per-run random key
  rather than one derived from the vendor's signing key: ``--no-sign`` runs have no signing key,
  an encrypted one would need its passphrase at every start, and a leaked run key then exposes
  one run, not the identity that signs reports.
- **Strict.** Lines are strict JSON: details are made JSON-safe before writing (NaN becomes
  ``"nan"``, as the report spells it) and a non-finite number read back is refused, so nothing
  in the journal can break the report's renderings.

What this protects against: a run directory edited between a kill and ``--resume``: by someone
or something that can write ``--out`` (shared storage, a CI artifact, a script) but cannot read
the user's config directory, and above all the plain "append PASS lines, then resume" attack:
the kit no longer launders such lines into a signed report. What it does not protect against: a
vendor who controls the machine and the account that runs the kit can read the key (or change
the kit itself; the kit digest in the report is what a verifier checks for that). Lines removed
from the *end* are not detected either: their tests simply run again, which a new run would do.

**Durability.** Each line is written (``write(2)``) the moment its test finishes, so a killed
orchestrator (SIGKILL, a crash, an OOM kill) loses nothing: the kernel holds the bytes. Only
``fsync``, what surviving a power loss or a kernel crash takes, is grouped: it runs once
``SYNC_EVERY_LINES`` lines are unsynced or ``SYNC_WITHIN_S`` after the first unsynced line,
whichever comes first, and when the orchestrator stops executing (the run's end, an error,
Ctrl-C). A power
loss can cost the lines of that window (at most 64 tests, at most one second's), whose tests
run again on ``--resume``, as lines missing from the end always do. An fsync per line cost
6.6 ms of wall per test (about 70 s over a tier).

A torn last line (the run was killed mid-write) is discarded with a warning and cut from the
file before anything new is appended, so the next record never lands on the fragment. Any
other line that does not verify stops the resume with a one-line error and changes nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import secrets
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit import paths
from kit.errors import InputError, KitCrash
from kit.grading.sanitize import finite_or_text, json_safe
from kit.outfiles import open_for_append
from kit.results import TestRecord
from kit.rundir import RUN_FILE, RunDir
from kit.strict_json import canonical_json, loads_strict

PREV_FIELD = "prev"
MAC_FIELD = "hmac"
KEY_BYTES = 32
#: The fsync window (see the module's docstring): whichever of the two comes first.
SYNC_EVERY_LINES = 64
SYNC_WITHIN_S = 1.0
# Domain separation: this key's MACs can never be mistaken for any other use of HMAC.
_MAC_CONTEXT = b"ckit journal line v1\n"


@dataclass(frozen=True)
class RunBinding:
    """What ties a journal to one run: the run id (the first ``prev``) and the MAC key."""

    run_id: str
    key: bytes


@dataclass(frozen=True)
class JournalContents:
    """A verified journal: its records by id, and where the next line continues the chain."""

    records: dict[str, TestRecord]
    #: ``prev`` for the next line: the hash of the last complete line, or the run id.
    head: str
    #: Bytes up to and including the last newline: everything that verified.
    complete_size: int
    #: Bytes after the last newline: a line the run was killed while writing.
    torn_size: int


class Journal:
    """Appends chained, keyed lines, fsynced in groups (``SYNC_EVERY_LINES``,
    ``SYNC_WITHIN_S``); ``open_journal`` makes one that continues a verified file."""

    def __init__(self, path: Path, binding: RunBinding, head: str,
                 records: dict[str, TestRecord] | None = None) -> None:
        self.path = path
        self.binding = binding
        self._head = head
        #: Every record the file holds, as reading it back would give them (``records``).
        self._records = dict(records or {})
        self._lock = threading.Lock()
        self._fd = open_for_append(path)  # O_NOFOLLOW: a planted link is refused, not followed
        self._unsynced = 0
        #: Fsyncs the group ``SYNC_WITHIN_S`` after its first line (None: nothing unsynced).
        self._timer: threading.Timer | None = None

    def append(self, record: TestRecord) -> None:
        with self._lock:
            if record.id in self._records:  # reading the journal back would refuse it
                raise KitCrash(f"{record.id} was journaled already: a test is journaled once")
            line = encode_line(record, self._head, self.binding.key)
            # Written at once: from here a killed orchestrator loses nothing, only a power loss.
            os.write(self._fd, line + b"\n")
            self._head = line_hash(line)
            # As read back: the line's own JSON (its values made JSON-safe), not ``record``.
            self._records[record.id] = _record_of(json.loads(line), f"{self.path}: new line")
            self._unsynced += 1
            if self._unsynced >= SYNC_EVERY_LINES:
                self._sync()
            elif self._timer is None:
                self._timer = threading.Timer(SYNC_WITHIN_S, self.sync)
                self._timer.daemon = True
                self._timer.start()

    @property
    def records(self) -> dict[str, TestRecord]:
        """The journal's records by id: those verified when it was opened, then each appended,
        as ``load_journal`` would read them (without reading the file again)."""
        with self._lock:
            return dict(self._records)

    def sync(self) -> None:
        """Fsync the lines written since the last fsync, if any."""
        with self._lock:
            self._sync()

    def close(self) -> None:
        """Fsync what is unsynced, then close; appending afterwards is an error."""
        with self._lock:
            self._sync()
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def _sync(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._unsynced and self._fd >= 0:
            os.fsync(self._fd)
        self._unsynced = 0


# -- opening and loading ---------------------------------------------------------------------
def open_journal(out_dir: Path) -> Journal:
    """Verify ``out_dir``'s journal, cut a torn last line, and open it to append after it.

    Raises ``InputError`` (changing nothing) when a line does not verify or the run finished.
    """
    if run_is_finished(out_dir):
        raise InputError(f"{out_dir}: the run already finished; its report is not re-signed")
    path = RunDir(out_dir).journal
    run_id = run_id_of(out_dir)
    binding = RunBinding(run_id, run_key(run_id, may_create=not _has_complete_line(path)))
    contents = read_journal(path, binding)
    if contents.torn_size:
        _cut_torn_line(path, contents)
    return Journal(path, binding, contents.head, contents.records)


def load_journal(path: Path) -> dict[str, TestRecord]:
    """The verified records of the journal at ``path`` (beside its ``run.json``), by id."""
    if not _has_complete_line(path):
        return {}
    run_id = run_id_of(path.parent)
    return read_journal(path, RunBinding(run_id, run_key(run_id, may_create=False))).records


def read_journal(path: Path, binding: RunBinding) -> JournalContents:
    """Every complete line verified in order; a torn last line is reported, not read."""
    data = path.read_bytes() if path.exists() else b""
    complete, newline, torn = data.rpartition(b"\n")
    records: dict[str, TestRecord] = {}
    lines_of: dict[str, int] = {}
    head = binding.run_id
    for number, line in enumerate(complete.split(b"\n") if newline else [], start=1):
        record = verify_line(line, head, binding.key, f"{path}: line {number}")
        if record.id in records:
            raise InputError(
                f"{path}: line {number}: a second record for {record.id} (the first is on "
                f"line {lines_of[record.id]}); a test is journaled once, so the journal is wrong"
            )
        records[record.id], lines_of[record.id] = record, number
        head = line_hash(line)
    return JournalContents(records, head, len(complete) + len(newline), len(torn))


def run_is_finished(out_dir: Path) -> bool:
    return RunDir(out_dir).is_finished()


def _has_complete_line(path: Path) -> bool:
    with contextlib.suppress(FileNotFoundError), path.open("rb") as handle:
        return b"\n" in handle.read()
    return False


def _cut_torn_line(path: Path, contents: JournalContents) -> None:
    # Cut before anything is appended: an append would otherwise extend the fragment.
    with path.open("r+b") as handle:
        handle.truncate(contents.complete_size)
        os.fsync(handle.fileno())
    print(
        f"ckit: warning: {path}: discarded a torn last line ({contents.torn_size} bytes: the "
        "run was killed while writing it); its test runs again",
        file=sys.stderr,
    )


# -- the run and its key ---------------------------------------------------------------------
def run_id_of(out_dir: Path) -> str:
    """sha256 of ``run.json``'s bytes: unique per run (it holds the start time and output dir)."""
    source = RunDir(out_dir).run_file
    try:
        return hashlib.sha256(source.read_bytes()).hexdigest()
    except FileNotFoundError:
        raise InputError(f"{source}: not found; {out_dir} holds no run") from None


def run_key_path(run_id: str) -> Path:
    return paths.user_config_dir() / "runs" / f"{run_id}.key"


def run_key(run_id: str, *, may_create: bool) -> bytes:
    """The run's MAC key; made only while nothing is journaled yet (a new or empty run)."""
    path = run_key_path(run_id)
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        if not may_create:
            raise InputError(
                f"{path}: this run's journal key is missing (removed, or {RUN_FILE} changed since "
                "the run started), so its journal cannot be trusted; start a new run"
            ) from None
        return _create_key(path)
    if len(key) != KEY_BYTES:
        raise InputError(f"{path}: not a journal key ({len(key)} bytes, not {KEY_BYTES})")
    return key


def _create_key(path: Path) -> bytes:
    _make_private_dirs(path.parent)
    key = secrets.token_bytes(KEY_BYTES)
    # O_EXCL: never replace a key another process made; 0o600: only this user may read it.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    return key


def _make_private_dirs(directory: Path) -> None:
    """Create missing directories one by one, each 700 (mkdir's mode is masked by umask)."""
    for missing in reversed([d for d in (directory, *directory.parents) if not d.exists()]):
        with contextlib.suppress(FileExistsError):
            missing.mkdir(mode=0o700)
        missing.chmod(0o700)


# -- lines -----------------------------------------------------------------------------------
def line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def line_mac(key: bytes, fields: Mapping[str, Any]) -> str:
    """HMAC of a line's fields other than the MAC itself (``prev`` included: the chain)."""
    unsigned = {name: value for name, value in fields.items() if name != MAC_FIELD}
    return hmac.new(key, _MAC_CONTEXT + canonical_json(unsigned), hashlib.sha256).hexdigest()


def encode_line(record: TestRecord, prev: str, key: bytes) -> bytes:
    """The journal line for ``record`` after the line whose hash is ``prev`` (no newline)."""
    fields = {**journal_fields(record), PREV_FIELD: prev}
    return canonical_json({**fields, MAC_FIELD: line_mac(key, fields)})


def journal_fields(record: TestRecord) -> dict[str, Any]:
    """``record`` as strict JSON: what the report would make of it, so nothing is lost."""
    fields: dict[str, Any] = json_safe(record.to_json())
    if not math.isfinite(record.duration_s):
        # Durations come from a monotonic clock; a bad one must not make the journal unreadable.
        fields["duration_s"] = 0.0
        fields["details"]["duration_s"] = finite_or_text(record.duration_s)
    return fields


def verify_line(line: bytes, prev: str, key: bytes, where: str) -> TestRecord:
    """The record ``line`` holds, if this run wrote it right after the line hashing to ``prev``."""
    fields = loads_strict(line, what=where, error=InputError)
    if not isinstance(fields, dict) or not isinstance(fields.get(MAC_FIELD), str):
        raise InputError(f"{where}: not a journal line of this kit (no {MAC_FIELD})")
    not_finite = _first_non_finite(fields)  # 1e999 parses as inf; the MAC cannot even be computed
    if not_finite is not None:
        raise InputError(f"{where}: {not_finite} is not a finite number")
    if not hmac.compare_digest(fields[MAC_FIELD].encode(), line_mac(key, fields).encode()):
        raise InputError(
            f"{where}: its MAC does not verify: the line was not written by this run "
            "(added or edited after it); the journal is not trusted"
        )
    if fields.get(PREV_FIELD) != prev:
        raise InputError(
            f"{where}: does not follow the line before it: journal lines were removed or "
            "reordered; the journal is not trusted"
        )
    return _record_of(fields, where)


def _record_of(fields: dict[str, Any], where: str) -> TestRecord:
    """A verified line's record, its fields checked: the kit's own bugs must not pass either."""
    duration = fields.get("duration_s")
    if isinstance(duration, bool) or not isinstance(duration, int | float):
        raise InputError(f"{where}: duration_s is not a number")
    if not isinstance(fields.get("id"), str):
        raise InputError(f"{where}: the record has no test id")
    try:
        record = TestRecord.from_json(fields)
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{where}: not a test record ({exc!r})") from None
    return record


def _first_non_finite(value: Any, name: str = "") -> str | None:
    """The dotted name of the first NaN or infinity in ``value``, if any."""
    if isinstance(value, float) and not math.isfinite(value):
        return name or "a value"
    items: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        items = [(f"{name}.{key}" if name else str(key), item) for key, item in value.items()]
    elif isinstance(value, list):
        items = [(f"{name}[{index}]", item) for index, item in enumerate(value)]
    for item_name, item in items:
        found = _first_non_finite(item, item_name)
        if found is not None:
            return found
    return None
