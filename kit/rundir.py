"""A run's output directory (``ckit run --out DIR``): every name in it, decided here once.

::

    report.json  junit.xml  results.csv  summary.md   the report formats' files (signed)
    golden-manifest.json                              with --golden: the artifacts' list (signed)
    report.dsse.json                                  the envelope over the signed files
    run.json  journal.jsonl                           what was asked; each result as it came
    workers/                                          worker-N.log, judge-N.log, evidence-N.bin,
                                                      evidence-N-judged-{0..3}.bin,
                                                      planned-ids.txt, golden-unwritten.log
    golden/                                           with --golden: the artifacts themselves

A low module (it imports no other part of the kit): the runner, the formats, signing,
verification, the repository, golden and the views all name the files through it. The report
files are a registry rather than a constant: ``kit.formats`` declares each format's file here,
so signing, verification and the submission layout follow a new format without being edited.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPORT_JSON = "report.json"
JUNIT_XML = "junit.xml"
RESULTS_CSV = "results.csv"
SUMMARY_MD = "summary.md"
#: The DSSE envelope whose statement names every signed file with its sha256.
ENVELOPE_NAME = "report.dsse.json"
#: The golden-artifact manifest a run writes with ``--golden``; signed when present.
GOLDEN_MANIFEST = "golden-manifest.json"
#: What the run was asked to do (``kit.runner.config``): ``--resume`` reads it back.
RUN_FILE = "run.json"
#: One chained, keyed line per result (``kit.runner.journal``).
JOURNAL_NAME = "journal.jsonl"
#: The workers' and judges' logs and evidence files.
WORKERS_DIR = "workers"
#: The golden artifacts (``kit.golden.names`` lays out what is inside).
GOLDEN_DIR = "golden"
#: In ``workers/``: the ids the run plans, one per line; its workers collect only these.
PLANNED_IDS = "planned-ids.txt"
#: In ``workers/``: one line per golden artifact a judge could not write.
GOLDEN_UNWRITTEN_LOG = "golden-unwritten.log"

#: The body of a report in the ``body`` format (``kit.report.body``): the report without its
#: records, then one record per line. The one list of them: written, signed and verified in
#: this order.
REPORT_HEAD = "report.head.json"
RECORDS_JSONL = "records.jsonl"
BODY_FILES: tuple[str, ...] = (REPORT_HEAD, RECORDS_JSONL)
#: Files signed when the run wrote them: absent, the statement names them not.
OPTIONAL_REPORT_FILES: tuple[str, ...] = (GOLDEN_MANIFEST,)

# The report formats' files, in the order they are written and signed. Seeded with the built-in
# formats (``kit.formats`` declares theirs from these constants; a test holds the two equal) so
# that signing and verification know them without importing the formats.
_report_files: list[str] = [REPORT_JSON, JUNIT_XML, RESULTS_CSV, SUMMARY_MD]

#: Names the directory gives to other things: no report format may take one.
_OTHER_NAMES = frozenset({ENVELOPE_NAME, GOLDEN_MANIFEST, RUN_FILE, JOURNAL_NAME, WORKERS_DIR,
                          GOLDEN_DIR, *BODY_FILES})

#: The largest file of a run directory a submission may hold (a full unit-tier report.json is a
#: few MB): the repository's layout and the golden check read each within it.
MAX_FILE_BYTES = 64 << 20
#: Each report file a statement names (report.json, junit.xml, results.csv, summary.md), as
#: signing and verification read it, and any reader of a report file.
MAX_SUBJECT_BYTES = 64 << 20


def report_files() -> tuple[str, ...]:
    """Every report format's file, in the order written: each one a required signed subject."""
    return tuple(_report_files)


def declare_report_file(name: str) -> None:
    """Add a report format's file (``kit.formats.register_format`` calls this).

    ``ValueError`` for a name that is not a plain file name or is already taken.
    """
    if not name or name != Path(name).name or name.startswith("."):
        raise ValueError(f"report file {name!r} is not a plain file name")
    if name in _report_files or name in _OTHER_NAMES:
        raise ValueError(f"report file {name!r} is already a name of the run directory")
    _report_files.append(name)


def finished_report_names() -> tuple[str, ...]:
    """What a finished run leaves beside its journal, whichever format its standard declares:
    the formats' files, a body's, and the envelope. A report is never written where any of
    them is, and a run holding one is never resumed."""
    return (*report_files(), *BODY_FILES, ENVELOPE_NAME)


def worker_log_name(number: int) -> str:
    return f"worker-{number}.log"


def fork_server_log_name(number: int) -> str:
    """The log of the run's fork server ``number`` (``kit.runner.forked``: one per worker
    environment)."""
    return f"fork-server-{number}.log"


def judge_log_name(number: int) -> str:
    return f"judge-{number}.log"


def evidence_name(number: int) -> str:
    """Where worker ``number`` leaves a test's evidence for the judge (``kit.evidence_file``'s
    format, not torch's)."""
    return f"evidence-{number}.bin"


#: Tests a worker's judge may hold at once (the one it judges, the rest queued): so many
#: evidence slots (``judged_evidence_name``), taken in turn.
JUDGED_SLOTS = 4


def judged_evidence_name(number: int, slot: int) -> str:
    """Where the evidence of a test worker ``number`` ran waits for the judge while the worker
    runs the next tests (each writes ``evidence_name`` afresh): slot ``0 .. JUDGED_SLOTS - 1``."""
    return f"evidence-{number}-judged-{slot}.bin"


#: The names ``evidence_name`` and ``judged_evidence_name`` give, and no other.
_EVIDENCE_NAME = re.compile(r"evidence-[0-9]+(?:-judged-[0-9]+)?\.bin")


def is_evidence_name(name: str) -> bool:
    """Whether ``name`` (in ``workers/``) is a test's evidence: read by its judge alone, never
    after the test's verdict is journaled."""
    return _EVIDENCE_NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class RunDir:
    """A run's output directory and where each of its files lives."""

    path: Path

    def file(self, name: str) -> Path:
        return self.path / name

    @property
    def report_json(self) -> Path:
        return self.path / REPORT_JSON

    @property
    def envelope(self) -> Path:
        return self.path / ENVELOPE_NAME

    @property
    def run_file(self) -> Path:
        return self.path / RUN_FILE

    @property
    def journal(self) -> Path:
        return self.path / JOURNAL_NAME

    @property
    def workers(self) -> Path:
        return self.path / WORKERS_DIR

    @property
    def golden(self) -> Path:
        return self.path / GOLDEN_DIR

    @property
    def golden_manifest(self) -> Path:
        return self.path / GOLDEN_MANIFEST

    def holds_body(self) -> bool:
        """Whether the run wrote its report as a body (its standard's ``report_format: body``):
        the one test of which format a run directory holds (the kit never writes both)."""
        return self.file(REPORT_HEAD).is_file() and not os.path.lexists(self.report_json)

    def report_names(self) -> tuple[str, ...]:
        """The files of the report this directory holds, from its format's own list: the
        body's (``BODY_FILES``), else every report format's (``report_files()``)."""
        return BODY_FILES if self.holds_body() else report_files()

    def report_paths(self) -> tuple[Path, ...]:
        """What the run wrote of its report: each file of its format's list that is there."""
        return tuple(path for path in map(self.file, self.report_names()) if path.is_file())

    @property
    def report_file(self) -> Path:
        """The report's first file, which names it: report.json, or the body's head."""
        return self.file(self.report_names()[0])

    def has_report(self) -> bool:
        return self.report_file.is_file()

    def is_finished(self) -> bool:
        """Both the report and its envelope are there: resuming would only re-sign the run."""
        return self.has_report() and self.envelope.is_file()


@dataclass(frozen=True)
class PreviousRun:
    """The run a ``--rerun-failed`` run reruns the failures of, and the report it read (kept in
    the rerun's ``run.json``)."""

    dir: str
    report_sha256: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PreviousRun:
        return cls(dir=str(data["dir"]), report_sha256=str(data["report_sha256"]))
