"""Benchmark: ``ckit audit`` and ``ckit gate`` stay linear in the submissions of a repository.

Issue 24's probe: one signed submission copied under many run ids made audit and gate quadratic
(1,001 copies 20 s, 2,001 copies 72 s, 10,001 still running after 20 minutes at 1.4 GB). This
builds a real git repository cheaply: one real signed run of the cpu vendor (one op, about 20 s),
filed where ``ckit submit`` files it, then copied under ``--copies`` other run ids (the attack),
committed; then it times ``ckit audit`` and ``ckit gate`` on it in subprocesses, start-up
included. The goal is 60 s each for 10,000 submissions on 2 cores.

With ``--bodies N`` (issue 37) it builds N distinct whole-run submissions of the ``body`` format
instead (standard v3's records of every locked test, as ``bench/verify_throughput.py`` builds
them; each its own finish time, so its own signed payload; the records file hard-linked), and
times ``ckit audit --content-cache`` twice: first taking every report (the content checks run,
their verdicts recorded, as at submit), then again (integrity only, the verdicts read back).
The goal is 60 s for 1,000 whole-run submissions, start-up included. Usage:

    .venv/bin/python bench/audit_scale.py [--copies N | --bodies N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verify_throughput import whole_run_report  # bench/ is the script's own directory

import kit
from kit.hashing import kit_digest, sha256_bytes
from kit.report.body import encode_body, encode_head
from kit.report.model import Report
from kit.repository.layout import (
    SubmissionKey,
    required_files,
    submission_key_for,
    submission_key_of,
    torch_release_of,
)
from kit.repository.submission_checks import payload_digest
from kit.rundir import ENVELOPE_NAME, RECORDS_JSONL, REPORT_HEAD
from kit.signing.body_statement import build_body_statement
from kit.signing.dsse import Envelope
from kit.signing.keys import load_private_key
from kit.signing.sign import sign_payload
from kit.signing.statement import PAYLOAD_TYPE, Subject
from kit.standard import load_standard
from kit.strict_json import canonical_json, loads_strict

GOAL_S = 60.0
#: The standard whose reports are bodies, and the vendor the bench files them for.
BODY_STANDARD = "v3"
VENDOR = "cpu"
RELEASE = torch_release_of(load_standard().torch_release)
KIT_ROOT = Path(__file__).resolve().parents[1]
SELECT = "unit/opinfo/add/float32/?"
AUTHOR = ["-c", "user.name=Bench", "-c", "user.email=bench@example.org"]


@dataclass(frozen=True)
class Timing:
    command: str
    wall_s: float
    exit_code: int
    answer: str


def _ckit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kit", *args], cwd=KIT_ROOT, env=env,
                          capture_output=True, text=True, check=False, timeout=3600)


def _checked(args: list[str], env: dict[str, str]) -> None:
    done = _ckit(args, env)
    if done.returncode != 0:
        raise SystemExit(f"ckit {args[0]} failed: {done.stderr.strip()[-2000:]}")


def _git(args: list[str], cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def trust_setup(root: Path, env: dict[str, str], keyring: Path) -> list[str]:
    """A root-signed keyring, a policy taking narrowed runs, this kit released: the auditor's
    options, as the repository tests give them."""
    _checked(["keys", "generate", "--vendor", "cpu", "--keyring", str(keyring)], env)
    _checked(["keys", "root-generate", "--out", str(root / "offline" / "root.pem"),
              "--public-dir", str(root / "roots")], env)
    _checked(["keys", "add", "--keyring", str(keyring), "--vendor", "cpu", "--public-key",
              str(next(keyring.glob("cpu/*.pub.pem"))), "--not-before", "2020-01-01"], env)
    _checked(["keys", "sign-keyring", "--keyring", str(keyring),
              "--root-key", str(root / "offline" / "root.pem")], env)
    (root / "policy.yaml").write_text(
        f'released_kit: true\nstandard: {load_standard().version}\n'
        f'torch_release: "{RELEASE}"\n'
        "vendor_is_submission_path: true\nmax_age_days: 30\n"
    )
    (root / "released-kits.yaml").write_text(
        f'released:\n  - version: "{kit.__version__}"\n    digest: "{kit_digest()}"\n'
        "    date: 2026-11-01\n"
    )
    return ["--trust-roots", str(root / "roots"), "--released-kits",
            str(root / "released-kits.yaml")]


def real_submission(root: Path, env: dict[str, str]) -> tuple[Path, SubmissionKey]:
    run = root / "run"
    done = _ckit(["run", "--vendor", "cpu", "--tier", "unit", "--select", SELECT,
                  "--out", str(run)], env)
    if not (run / "report.dsse.json").is_file():
        raise SystemExit(f"the run failed: {done.stderr.strip()[-2000:]}")
    report = Report.from_json(loads_strict((run / "report.json").read_bytes(), what="report"))
    digest = payload_digest(run)
    assert digest is not None
    return run, submission_key_for(report, digest)


def copy_key(key: SubmissionKey, index: int) -> SubmissionKey:
    """Another run id of the same shape: the copy looks like a run of its own."""
    stamp = key.run_id.split("-")[0]
    return SubmissionKey(key.torch_release, key.vendor, key.kit_version,
                         f"{stamp}-{index:012x}")


def build_repository(root: Path, copies: int, env: dict[str, str]) -> list[str]:
    repo = root / "repo"
    repo.mkdir()
    options = trust_setup(root, env, repo / "keyring")
    run, key = real_submission(root, env)
    keys = [key, *(copy_key(key, index) for index in range(1, copies + 1))]
    for each in keys:
        directory = each.directory(repo)
        directory.mkdir(parents=True)
        for name in required_files():
            os.link(run / name, directory / name)  # hard links: 10,000 copies cost no space
    _git(["init", "--quiet", "-b", "main"], repo)
    _git(["add", "."], repo)
    _git([*AUTHOR, "commit", "--quiet", "-m", "one submission, many run ids"], repo)
    return [str(repo), *options, "--policy", str(root / "policy.yaml")]


def timed(name: str, args: list[str], env: dict[str, str]) -> Timing:
    started = time.perf_counter()
    done = _ckit(args, env)
    wall = time.perf_counter() - started
    lines = (done.stdout + done.stderr).strip().splitlines()
    return Timing(name, wall, done.returncode, lines[-1] if lines else "")


def sign_body(directory: Path, head: dict[str, Any], records_digest: str, key_path: Path
              ) -> str:
    """Sign the body in ``directory`` (its head written, its records linked) as ``ckit sign``
    does, without re-reading the records (the bench wrote them); the payload's sha256."""
    head_bytes = encode_head(head)
    (directory / REPORT_HEAD).write_bytes(head_bytes)
    subjects = [Subject(REPORT_HEAD, sha256_bytes(head_bytes)),
                Subject(RECORDS_JSONL, records_digest)]
    payload = canonical_json(build_body_statement(subjects, head).to_json())
    signature = sign_payload(load_private_key(key_path, None), PAYLOAD_TYPE, payload)
    (directory / ENVELOPE_NAME).write_bytes(Envelope(PAYLOAD_TYPE, payload, (signature,))
                                            .to_bytes())
    return sha256_bytes(payload)


def body_policy(root: Path) -> Path:
    """v3's bar: its standard, the vendor of the path, a recent run (not its torch release: the
    bench builds the records on the installed torch, nor a released kit: a checkout's)."""
    path = root / "body-policy.yaml"
    path.write_text(f"standard: {BODY_STANDARD}\nvendor_is_submission_path: true\n"
                    "max_age_days: 30\n")
    return path


def build_body_repository(root: Path, bodies: int, env: dict[str, str]) -> list[str]:
    repo = root / "repo"
    repo.mkdir()
    options = trust_setup(root, env, repo / "keyring")
    key_path = next((root / "config").rglob("cpu.pem"))
    finished = dt.datetime.now(dt.UTC).replace(microsecond=0) - dt.timedelta(hours=2)
    report = whole_run_report(finished, BODY_STANDARD)
    records = root / RECORDS_JSONL
    records.write_bytes(encode_body(report)[RECORDS_JSONL])
    records_digest = sha256_bytes(records.read_bytes())
    staging = root / "staging"
    for index in range(bodies):
        at = finished - dt.timedelta(seconds=index)
        head = {key: value for key, value in report.items() if key != "records"}
        head["run"] = dict(report["run"], finished_at=at.isoformat(),
                           started_at=(at - dt.timedelta(hours=1)).isoformat())
        staging.mkdir()
        digest = sign_body(staging, head, records_digest, key_path)
        directory = submission_key_of(load_standard(BODY_STANDARD).torch_release, VENDOR,
                                      head["kit"]["version"], at, digest).directory(repo)
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging.rename(directory)
        os.link(records, directory / RECORDS_JSONL)  # one records file, hard-linked
    _git(["init", "--quiet", "-b", "main"], repo)
    _git(["add", "."], repo)
    _git([*AUTHOR, "commit", "--quiet", "-m", "whole-run body submissions"], repo)
    return [str(repo), *options, "--policy", str(body_policy(root)),
            "--content-cache", str(root / "auditor" / "verdicts")]


def run_bodies(bodies: int, root: Path) -> list[Timing]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(root / "config"))
    env.pop("CKIT_SIGNING_KEY", None)
    os.environ["XDG_CONFIG_HOME"] = env["XDG_CONFIG_HOME"]  # the key this process signs with
    repo, *options = build_body_repository(root, bodies, env)
    return [
        timed("ckit audit (first: content checked)", ["audit", repo, *options], env),
        timed("ckit audit (verdicts recorded)", ["audit", repo, *options], env),
    ]


def run(copies: int, root: Path) -> list[Timing]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(root / "config"))
    env.pop("CKIT_SIGNING_KEY", None)
    repo, *options = build_repository(root, copies, env)
    gate_options = [o.replace("--policy", "--acceptance-policy") for o in options]
    return [
        timed("ckit audit", ["audit", repo, *options], env),
        timed("ckit gate", ["gate", "--release", RELEASE, repo,
                            *gate_options], env),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=9_999,
                        help="copies beside the real submission (default: 10,000 in all)")
    parser.add_argument("--bodies", type=int, metavar="N",
                        help="N distinct whole-run body-format submissions instead of copies")
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ckit-audit-scale-") as temp:
        root = args.keep or Path(temp)
        root.mkdir(parents=True, exist_ok=True)
        timings = (run_bodies(args.bodies, root) if args.bodies else run(args.copies, root))
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if args.bodies:
        return _body_verdict(timings, args.bodies)
    submissions = args.copies + 1
    for timing in timings:
        print(f"{timing.command} of {submissions} submissions: {timing.wall_s:.1f} s "
              f"(exit {timing.exit_code}): {timing.answer}")
    worst = max(timing.wall_s for timing in timings)
    verdict = "met" if worst <= GOAL_S else "MISSED"
    print(f"goal: at most {GOAL_S:.0f} s each, start-up included: {verdict} "
          f"(slowest {worst:.1f} s)")
    return 0 if worst <= GOAL_S else 1


def _body_verdict(timings: list[Timing], bodies: int) -> int:
    for timing in timings:
        print(f"{timing.command} of {bodies} whole-run body submissions: {timing.wall_s:.1f} s "
              f"(exit {timing.exit_code}): {timing.answer}")
    recorded = timings[-1].wall_s
    verdict = "met" if recorded <= GOAL_S else "MISSED"
    per_1000 = recorded * 1000 / bodies
    print(f"goal: 1,000 whole-run submissions audited in at most {GOAL_S:.0f} s, start-up "
          f"included: {verdict} ({recorded:.1f} s for {bodies}; {per_1000:.0f} s per 1,000)")
    return 0 if recorded <= GOAL_S and all(t.exit_code == 0 for t in timings) else 1


if __name__ == "__main__":
    sys.exit(main())
