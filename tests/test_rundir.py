"""``kit.rundir``: the run directory's names in one place, and the formats' files all signed.

The signed subjects follow the report formats: a run directory written and signed the kit's way
names exactly the formats' files, a format registered in-process is signed (and then required by
verification and the submission layout) without signing being told, and no module of the kit
spells a run directory name itself.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

import kit
import kit.formats.files
import kit.rundir
from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.errors import InputError, VerificationError
from kit.formats import ReportFormat, formats, register_format, write_report_files
from kit.grading import build_report, collect_environment
from kit.hashing import sha256_file
from kit.repository.layout import required_files
from kit.results import Status, TestRecord
from kit.rundir import (
    BODY_FILES,
    ENVELOPE_NAME,
    GOLDEN_DIR,
    GOLDEN_MANIFEST,
    GOLDEN_UNWRITTEN_LOG,
    JOURNAL_NAME,
    JUDGED_SLOTS,
    JUNIT_XML,
    PLANNED_IDS,
    RECORDS_JSONL,
    REPORT_HEAD,
    REPORT_JSON,
    RESULTS_CSV,
    RUN_FILE,
    SUMMARY_MD,
    WORKERS_DIR,
    RunDir,
    evidence_name,
    finished_report_names,
    judge_log_name,
    judged_evidence_name,
    report_files,
    worker_log_name,
)
from kit.signing.keyring import add_public_key
from kit.signing.keys import generate_private_key, private_key_pem, write_private_key
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.vendors import SkipManifest, load_vendor
from kit.verification.verify import VerifiedReport, verify_envelope

KIT_SOURCES = Path(kit.__file__).parent
VENDOR = "acme"


# -- a real run directory, written and signed the kit's way ---------------------------------
def _report() -> dict[str, Any]:
    """A report the kit builds itself: one op of the unit tier, every test passing."""
    finished = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(minutes=5)
    standard = load_standard()
    vendor = dataclasses.replace(load_vendor("cpu"), id=VENDOR)
    test_ids = [t for t in standard.test_ids("unit") if t.startswith("unit/opinfo/add/float32/")]
    return build_report(
        records=[TestRecord(t, Status.PASS, 0.25) for t in test_ids],
        standard=standard,
        vendor=vendor,
        skips=SkipManifest(entries=()),
        environment=collect_environment(DeviceInfo("cpu", 1, "x86_64")),
        run={"tiers": ["unit"], "select": ["unit/opinfo/add/float32/*"], "timeout_s": 60.0,
             "started_at": (finished - dt.timedelta(minutes=5)).isoformat(),
             "finished_at": finished.isoformat(), "workers": 1, "complete": False},
        clock=RunDate(finished.date()),
    )


@dataclasses.dataclass(frozen=True)
class SignedDir:
    run_dir: RunDir
    keyring: Path

    def verify(self) -> VerifiedReport:
        return verify_envelope(self.run_dir.envelope, keyring_dir=self.keyring)


def _write_and_sign(root: Path) -> SignedDir:
    run_dir = RunDir(root / "run")
    write_report_files(_report(), run_dir.path)
    key = generate_private_key()
    key_path = root / "keys" / f"{VENDOR}.pem"
    write_private_key(key_path, private_key_pem(key, None), force=False)
    add_public_key(root / "keyring", VENDOR, key.public_key())
    sign_output_dir(run_dir.path, key_path, None)
    return SignedDir(run_dir, root / "keyring")


def test_the_formats_declare_their_files_from_the_run_directory() -> None:
    assert tuple(fmt.filename for fmt in formats()) == report_files()
    assert report_files() == (REPORT_JSON, JUNIT_XML, RESULTS_CSV, SUMMARY_MD)
    assert finished_report_names() == (*report_files(), *BODY_FILES, ENVELOPE_NAME)


def test_every_format_file_is_a_signed_subject(tmp_path: Path) -> None:
    signed = _write_and_sign(tmp_path)
    subjects = signed.verify().subjects
    assert [s.name for s in subjects] == [fmt.filename for fmt in formats()]
    for subject in subjects:
        assert subject.sha256 == sha256_file(signed.run_dir.file(subject.name))
    assert sorted(p.name for p in signed.run_dir.path.iterdir()) == sorted(
        (*report_files(), ENVELOPE_NAME)
    )


# -- a format added in-process ---------------------------------------------------------------
class TinyFormat(ReportFormat):
    """One line: the grade. Enough to be a report file of its own."""

    filename = "grade.txt"

    def render(self, report: Mapping[str, Any]) -> bytes:
        return f"{report['grade']['name']}\n".encode()


@pytest.fixture
def registries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The format and report-file registries as they are now, restored after the test."""
    monkeypatch.setattr(kit.rundir, "_report_files", list(report_files()))
    monkeypatch.setattr(kit.formats.files, "_FORMATS", list(formats()))


@pytest.mark.usefixtures("registries")
def test_a_registered_format_is_written_signed_and_required(tmp_path: Path) -> None:
    register_format(TinyFormat())
    signed = _write_and_sign(tmp_path)
    verified = signed.verify()
    subjects = {s.name: s.sha256 for s in verified.subjects}
    assert list(subjects) == [fmt.filename for fmt in formats()]
    tiny = signed.run_dir.file(TinyFormat.filename)
    assert subjects[tiny.name] == sha256_file(tiny)
    assert tiny.read_text() == f"{verified.grade_name}\n"
    assert tiny.name in required_files()
    tiny.unlink()
    with pytest.raises(VerificationError, match=f"subject file {TinyFormat.filename} is missing"):
        signed.verify()


@pytest.mark.usefixtures("registries")
@pytest.mark.parametrize(
    ("name", "why"),
    [
        (REPORT_JSON, "already a name of the run directory"),
        (RUN_FILE, "already a name of the run directory"),
        (ENVELOPE_NAME, "already a name of the run directory"),
        (GOLDEN_DIR, "already a name of the run directory"),
        ("../grade.txt", "not a plain file name"),
        (".hidden", "not a plain file name"),
        ("", "not a plain file name"),
    ],
)
def test_a_format_cannot_take_a_name_already_taken(name: str, why: str) -> None:
    before = (report_files(), formats())
    clashing = type("Clashing", (TinyFormat,), {"filename": name})()
    with pytest.raises(ValueError, match=why):
        register_format(clashing)
    assert (report_files(), formats()) == before


def test_run_dir_paths() -> None:
    run_dir = RunDir(Path("/runs/a"))
    assert run_dir.report_json == Path("/runs/a") / REPORT_JSON
    assert run_dir.envelope.name == ENVELOPE_NAME
    assert run_dir.run_file.name == RUN_FILE
    assert run_dir.journal.name == JOURNAL_NAME
    assert run_dir.workers.name == WORKERS_DIR
    assert run_dir.golden.name == GOLDEN_DIR
    assert run_dir.golden_manifest.name == GOLDEN_MANIFEST


def test_a_run_is_finished_once_report_and_envelope_are_files(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    run_dir.report_json.write_text("{}\n")
    assert not run_dir.is_finished()
    run_dir.envelope.mkdir()  # not a file
    assert not run_dir.is_finished()
    run_dir.envelope.rmdir()
    run_dir.envelope.write_text("{}\n")
    assert run_dir.is_finished()


def test_a_body_run_is_known_by_its_head_and_finished_with_its_envelope(tmp_path: Path) -> None:
    run_dir = RunDir(tmp_path)
    assert not run_dir.holds_body() and run_dir.report_names() == report_files()
    run_dir.file(REPORT_HEAD).write_text("{}\n")
    assert run_dir.holds_body() and run_dir.report_names() == BODY_FILES
    assert run_dir.report_file == tmp_path / REPORT_HEAD and run_dir.has_report()
    assert run_dir.report_paths() == (tmp_path / REPORT_HEAD,)  # what is there of the list
    run_dir.file(RECORDS_JSONL).write_text("")
    assert run_dir.report_paths() == tuple(tmp_path / name for name in BODY_FILES)
    assert not run_dir.is_finished()
    run_dir.envelope.write_text("{}\n")
    assert run_dir.is_finished()


def test_a_report_json_beside_a_head_makes_the_directory_a_report_json_run(tmp_path: Path
                                                                           ) -> None:
    # The kit writes one format; signing and reading must take the same one when both are there.
    run_dir = RunDir(tmp_path)
    run_dir.file(REPORT_HEAD).write_text("{}\n")
    run_dir.report_json.write_text("{}\n")
    assert not run_dir.holds_body() and run_dir.report_file == run_dir.report_json


@pytest.mark.parametrize("planted", [REPORT_HEAD, REPORT_JSON])
def test_no_report_is_written_beside_another_formats(planted: str, tmp_path: Path) -> None:
    """A body is never written beside a report.json, nor report.json beside a body."""
    sys.path.insert(0, str(Path(__file__).parent / "verification"))
    from body_helpers import body_report

    from kit.report.body import write_body_files

    (tmp_path / planted).write_text("another run's\n")
    write = write_body_files if planted == REPORT_JSON else write_report_files
    with pytest.raises(InputError, match=f"already holds {planted}"):
        write(body_report() if planted == REPORT_JSON else _report(), tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [planted]


def test_run_and_merge_name_the_files_of_the_format_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kit.cli.cmd_run import say_report_files

    json_run, body_run = RunDir(tmp_path / "json"), RunDir(tmp_path / "body")
    for run_dir, names in ((json_run, report_files()), (body_run, BODY_FILES)):
        run_dir.path.mkdir()
        for name in names:
            run_dir.file(name).write_text("")
        say_report_files(run_dir.path)
    said = capsys.readouterr().err.splitlines()
    assert said == [*(f"report: {json_run.file(name)}" for name in report_files()),
                    *(f"report: {body_run.file(name)}" for name in BODY_FILES),
                    f"views: `ckit render {body_run.path}` renders them from the body"]


# -- no name of the run directory spelled outside kit/rundir.py ------------------------------
#: File names: none may appear in any string of the kit (messages name them through constants).
FILE_NAMES = (REPORT_JSON, JUNIT_XML, RESULTS_CSV, SUMMARY_MD, ENVELOPE_NAME, GOLDEN_MANIFEST,
              RUN_FILE, JOURNAL_NAME, GOLDEN_UNWRITTEN_LOG, PLANNED_IDS)
#: Directory names are ordinary words ("workers" is also a field of run.json and the report):
#: only their use as a path segment or as a constant's value counts.
DIR_NAMES = (WORKERS_DIR, GOLDEN_DIR)
#: The numbered files of ``workers/``, as f-string templates (``{}`` for the number).
NUMBERED = (*(name(7).replace("7", "{}") for name in
                (worker_log_name, judge_log_name, evidence_name)),
            *(judged_evidence_name(7, slot).replace("7", "{}") for slot in range(JUDGED_SLOTS)))
_PATH_CALLS = frozenset({"Path", "PurePath", "PurePosixPath", "joinpath"})
#: Modules allowed to spell a name, and why. Empty: every module names the files through
#: ``kit.rundir``. (Docstrings and comments may mention the files: they are prose.)
ALLOWED: dict[str, str] = {}


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of string statements: docstrings, and the strings documenting attributes."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}


def _template(node: ast.JoinedStr) -> str:
    return "".join(str(part.value) if isinstance(part, ast.Constant) else "{}"
                   for part in node.values)


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _as_path_segment(node: ast.AST) -> Iterator[ast.AST]:
    """The expressions used as a path segment or as a module or class constant's value."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        yield node.right
    elif isinstance(node, ast.Call) and _call_name(node) in _PATH_CALLS:
        yield from node.args
    elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        yield node.value


def _spelled_names(source: str) -> Iterator[tuple[int, str]]:
    tree = ast.parse(source)
    prose = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            yield from ((node.lineno, name) for name in FILE_NAMES if name in node.value)
        if isinstance(node, ast.JoinedStr):
            yield from ((node.lineno, name) for name in NUMBERED if name in _template(node))
        for segment in _as_path_segment(node):
            if isinstance(segment, ast.Constant) and segment.value in DIR_NAMES:
                yield segment.lineno, str(segment.value)


def test_no_module_spells_a_run_directory_name() -> None:
    found = []
    for path in sorted(KIT_SOURCES.rglob("*.py")):
        relative = path.relative_to(KIT_SOURCES.parent).as_posix()
        if relative == "kit/rundir.py" or relative in ALLOWED:
            continue
        found += [f"{relative}:{line}: {name!r}"
                  for line, name in _spelled_names(path.read_text(encoding="utf-8"))]
    assert found == [], "name these through kit.rundir:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        f'path = out_dir / "{REPORT_JSON}"',
        f'print(f"wrote {{out}}/{SUMMARY_MD}")',
        f'raise SystemExit("no {ENVELOPE_NAME} here")',
        f'log = directory / "{WORKERS_DIR}"',
        f'GOLDEN = "{GOLDEN_DIR}"',
        f'where = Path(root, "{GOLDEN_DIR}")',
        'log = log_dir / f"judge-{number}.log"',
    ],
)
def test_the_scan_finds_a_spelled_name(source: str) -> None:
    assert list(_spelled_names(source))


@pytest.mark.parametrize(
    "source",
    [
        f'"""Reads {REPORT_JSON} and {RUN_FILE}."""',
        'workers = int(data["workers"])',
        'golden = bool(data.get("golden", False))',
        "path = RunDir(out_dir).report_json",
    ],
)
def test_the_scan_lets_prose_and_fields_be(source: str) -> None:
    assert list(_spelled_names(source)) == []
