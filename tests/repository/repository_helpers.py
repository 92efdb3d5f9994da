"""Builders for the repository tests: git and ckit subprocesses, and the shared repository.

A plain module (not conftest) so test files can import it by a name no other area uses.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import kit
from kit.cli import main
from kit.errors import ExitCode
from kit.formats.files import render_derived
from kit.hashing import kit_digest, sha256_bytes
from kit.report.model import Report
from kit.repository.layout import SubmissionKey, required_files, submission_key_for
from kit.rundir import ENVELOPE_NAME
from kit.signing.dsse import decode_envelope
from kit.signing.keys import keyid_of, load_private_key
from kit.signing.sign import sign_output_dir
from kit.standard import load_standard
from kit.strict_json import loads_strict

KIT_ROOT = Path(__file__).resolve().parents[2]
#: One op of the unit tier: a real run in about 20 seconds (graded non-conformant, partial:
#: narrowed).
SELECT = "unit/opinfo/add/float32/?"  # OpInfo's samples 0-9: the variants only add time
VENDORS = ("cpu", "simnpu")
TEST_AUTHOR = ["-c", "user.name=Test Maintainer", "-c", "user.email=maintainer@example.org"]


def git(args: list[str], cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {args}: {done.stderr}"
    return done.stdout


def ckit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kit", *args], cwd=KIT_ROOT, env=env, capture_output=True,
        text=True, timeout=900, check=False,
    )


def field(stdout: str, name: str) -> str:
    """The value of ``name: value`` in ``ckit submit``'s output."""
    return next(line.split(":", 1)[1].strip() for line in stdout.splitlines()
                if line.startswith(f"{name}:"))


@dataclass(frozen=True)
class SharedRepo:
    base: Path
    env: dict[str, str]
    #: The main branch before any submission: the keyring and a README.
    seed: Path
    origin: Path
    runs: dict[str, Path]
    #: Each vendor's private key (the default location under the test's XDG_CONFIG_HOME).
    keys: dict[str, Path]
    branches: dict[str, str]
    #: A clone with the simnpu submission's branch checked out: both submissions.
    checkout: Path
    #: Each vendor's ``ckit run`` as it finished (exit code, what it printed).
    ran: dict[str, subprocess.CompletedProcess[str]]

    @property
    def roots(self) -> Path:
        """The auditor's pinned root public keys (the root private key stays offline)."""
        return self.base / "auditor" / "roots"

    @property
    def root_key(self) -> Path:
        return self.base / "offline" / "root.pem"

    @property
    def audit_args(self) -> list[str]:
        """The auditor's choices: these roots, a policy that takes narrowed runs, and a list of
        released kits that holds the kit running these tests."""
        return auditor_args(self.base)


def auditor_args(base: Path) -> list[str]:
    """The auditor's choices for the shared repository built under ``base`` (``ckit audit``
    and ``ckit submit``, whose pre-check is the audit's, take them alike)."""
    return ["--trust-roots", str(base / "auditor" / "roots"), "--acceptance-policy",
            str(base / "policy.yaml"), "--released-kits", str(base / "released-kits.yaml")]


def _environment(base: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(base / "config")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(KIT_ROOT), env.get("PYTHONPATH")]))
    env.pop("CKIT_SIGNING_KEY", None)
    return env


def _seed(base: Path, env: dict[str, str]) -> tuple[Path, Path]:
    seed = base / "seed"
    git(["init", "--quiet", "-b", "main", str(seed)], base)
    for vendor in VENDORS:
        made = ckit(["keys", "generate", "--vendor", vendor, "--keyring", str(seed / "keyring")],
                    env)
        assert made.returncode == 0, made.stderr
    _trust_keyring(base, env, seed / "keyring")
    (seed / "README.md").write_text("Conformance results, one directory per submission.\n")
    git(["add", "."], seed)
    git([*TEST_AUTHOR, "commit", "--quiet", "-m", "The shared repository"], seed)
    origin = base / "origin.git"
    git(["clone", "--quiet", "--bare", str(seed), str(origin)], base)
    return seed, origin


def _trust_keyring(base: Path, env: dict[str, str], keyring: Path) -> None:
    """A root key signs keyring.json listing both vendors' keys; the auditor pins the root."""
    made = ckit(["keys", "root-generate", "--out", str(base / "offline" / "root.pem"),
                 "--public-dir", str(base / "auditor" / "roots")], env)
    assert made.returncode == 0, made.stderr
    for public in sorted(keyring.glob("*/*.pub.pem")):
        added = ckit(["keys", "add", "--keyring", str(keyring), "--vendor", public.parent.name,
                      "--public-key", str(public), "--not-before", "2020-01-01"], env)
        assert added.returncode == 0, added.stderr
    signed = ckit(["keys", "sign-keyring", "--keyring", str(keyring),
                   "--root-key", str(base / "offline" / "root.pem")], env)
    assert signed.returncode == 0, signed.stderr
    (base / "policy.yaml").write_text(
        "# The test repository's bar: a released kit, this standard and release, the vendor of\n"
        "# the path, a recent run; narrowed runs (graded non-conformant) are accepted.\n"
        f'released_kit: true\nstandard: {load_standard().version}\ntorch_release: "2.13"\n'
        "vendor_is_submission_path: true\nmax_age_days: 30\n"
    )
    (base / "released-kits.yaml").write_text(
        f'released:\n  - version: "{kit.__version__}"\n    digest: "{kit_digest()}"\n'
        "    date: 2026-11-01\n"
    )


def _run(base: Path, env: dict[str, str], vendor: str
         ) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = base / "runs" / vendor
    done = ckit(["run", "--vendor", vendor, "--tier", "unit", "--select", SELECT,
                 "--out", str(out)], env)
    assert (out / "report.dsse.json").is_file(), done.stderr[-3000:]
    return out, done


def _submit(env: dict[str, str], run_dir: Path, repo: str, auditor: list[str]) -> str:
    done = ckit(["submit", str(run_dir), "--repo", repo, "--push", *auditor], env)
    assert done.returncode == 0, done.stderr
    return field(done.stdout, "branch")


def _merge(base: Path, origin: Path, branch: str) -> None:
    maintainer = base / "maintainer"
    git(["clone", "--quiet", str(origin), str(maintainer)], base)
    git(["merge", "--quiet", "--ff-only", f"origin/{branch}"], maintainer)
    git(["push", "--quiet", "origin", "main"], maintainer)


def build_shared_repo(base: Path) -> SharedRepo:
    env = _environment(base)
    seed, origin = _seed(base, env)
    ran = {vendor: _run(base, env, vendor) for vendor in VENDORS}
    runs = {vendor: out for vendor, (out, _) in ran.items()}
    # Submitted with the auditor's choices: submit pre-checks with the audit's own checks.
    auditor = auditor_args(base)
    branches = {"cpu": _submit(env, runs["cpu"], str(origin), auditor)}
    _merge(base, origin, branches["cpu"])
    branches["simnpu"] = _submit(env, runs["simnpu"], origin.as_uri(), auditor)
    checkout = base / "checkout"
    git(["clone", "--quiet", str(origin), str(checkout)], base)
    git(["checkout", "--quiet", branches["simnpu"]], checkout)
    keys = {v: base / "config" / "ckit" / "keys" / f"{v}.pem" for v in VENDORS}
    finished = {vendor: done for vendor, (_, done) in ran.items()}
    return SharedRepo(base, env, seed, origin, runs, keys, branches, checkout, finished)


# Runs re-signed and filed by hand, and commits dated at will (repository time)


def retire_cpu_key(shared: SharedRepo, clone: Path, at: dt.datetime) -> str:
    """The maintainers retire cpu's key as of ``at`` and the roots sign the keyring; committed."""
    keyid = keyid_of(load_private_key(shared.keys["cpu"], None).public_key())
    manifest = clone / "keyring" / "keyring.json"
    document = json.loads(manifest.read_text())
    for entry in document["keys"]:
        if entry["keyid"] == keyid:
            entry.update(status="retired", changed_at=at.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         reason="rotated")
    manifest.write_text(json.dumps(document, indent=2) + "\n")
    (clone / "keyring" / "keyring.json.sig").unlink()
    assert main(["keys", "sign-keyring", "--keyring", str(clone / "keyring"),
                 "--root-key", str(shared.root_key)]) == ExitCode.OK
    commit_all(clone, "Retire cpu's key")
    return keyid


def commit_all(clone: Path, message: str, at: dt.datetime | None = None) -> None:
    """Commit everything, at ``at`` (the history's time) or now."""
    git(["add", "-A"], clone)
    env = {**os.environ, **({"GIT_COMMITTER_DATE": at.isoformat()} if at else {})}
    subprocess.run(["git", *TEST_AUTHOR, "commit", "--quiet", "-m", message], cwd=clone,
                   env=env, check=True, capture_output=True)


def signed_run(shared: SharedRepo, tmp_path: Path, finished: dt.datetime) -> Path:
    """cpu's real run, its times set to end at ``finished``, signed with cpu's key."""
    run_dir = tmp_path / "run"
    shutil.copytree(shared.runs["cpu"], run_dir)
    report = json.loads((run_dir / "report.json").read_text())
    report["run"]["started_at"] = (finished - dt.timedelta(minutes=5)).isoformat()
    report["run"]["finished_at"] = finished.isoformat()
    report_json = (json.dumps(report, indent=2) + "\n").encode("utf-8")
    (run_dir / "report.json").write_bytes(report_json)
    for name, data in render_derived(report_json).items():
        (run_dir / name).write_bytes(data)
    sign_output_dir(run_dir, shared.keys["cpu"], None)
    return run_dir


def file_submission(run_dir: Path, clone: Path) -> SubmissionKey:
    report = Report.from_json(json.loads((run_dir / "report.json").read_text()))
    envelope = decode_envelope(loads_strict((run_dir / ENVELOPE_NAME).read_bytes()))
    key = submission_key_for(report, sha256_bytes(envelope.payload))
    key.directory(clone).mkdir(parents=True)
    for name in required_files():
        shutil.copy(run_dir / name, key.directory(clone) / name)
    return key
