"""Benchmark: ``ckit audit`` and ``ckit gate`` stay linear in the submissions of a repository.

Issue 24's probe: one signed submission copied under many run ids made audit and gate quadratic
(1,001 copies 20 s, 2,001 copies 72 s, 10,001 still running after 20 minutes at 1.4 GB). This
builds a real git repository cheaply: one real signed run of the cpu vendor (one op, about 20 s),
filed where ``ckit submit`` files it, then copied under ``--copies`` other run ids (the attack),
committed; then it times ``ckit audit`` and ``ckit gate`` on it in subprocesses, start-up
included. The goal is 60 s each for 10,000 submissions on 2 cores. Usage:

    .venv/bin/python bench/audit_scale.py [--copies N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import kit
from kit.hashing import kit_digest
from kit.report.model import Report
from kit.repository.layout import (
    SubmissionKey,
    required_files,
    submission_key_for,
    torch_release_of,
)
from kit.repository.submission_checks import payload_digest
from kit.standard import load_standard
from kit.strict_json import loads_strict

GOAL_S = 60.0
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
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ckit-audit-scale-") as temp:
        root = args.keep or Path(temp)
        root.mkdir(parents=True, exist_ok=True)
        timings = run(args.copies, root)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    submissions = args.copies + 1
    for timing in timings:
        print(f"{timing.command} of {submissions} submissions: {timing.wall_s:.1f} s "
              f"(exit {timing.exit_code}): {timing.answer}")
    worst = max(timing.wall_s for timing in timings)
    verdict = "met" if worst <= GOAL_S else "MISSED"
    print(f"goal: at most {GOAL_S:.0f} s each, start-up included: {verdict} "
          f"(slowest {worst:.1f} s)")
    return 0 if worst <= GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
