"""The README's certify command for the built-in vendor in a fresh clone of the kit: ``make
certify VENDOR=cpu`` makes the key, runs every tier but deploy, verifies; then the report covers
every locked test of its run and one changed byte in any signed file fails verify. In the same
clone, after it, the README's next blocks as written: everyday use (list, show, diff, rerun of
the failures) and the two template blocks; the blocks left out are listed, with why, in
``tests/test_readme_blocks.py``.

Two sizes of the same command (``SIZES``): ``complete``, the block as written (every test of the
standard: about 5 minutes alone on 2 cores, 9 beside the heavy suite), in ``make test-full``;
and ``shard``, the block with ``CERTIFY_ARGS`` naming a fixed shard of the standard (every tier,
``SHARD``), in CI's heavy suite, whose 30-minute budget a complete run would spend a third of."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from readme_clone import fresh_clone, readme_block, run_block, untracked_files
from runner_helpers import run_ckit

from kit.runner.plan import Shard, hash_shard

pytestmark = pytest.mark.slow(seconds=300)

CERTIFY_HEADING = "## Certify the built-in default vendor (one command)"
EVERYDAY_HEADING = "### Everyday use"
TEMPLATES_HEADING = "## Templates: GitHub Actions and Kubernetes"
CANARY_HEADING = "### Canary CI modes"
#: The fixed shard of the standard the heavy suite certifies (``ckit run --shard``): a sixteenth
#: holding tests of every tier, and more than most of the small ones (compile, distributed).
SHARD = Shard(12, 16)
#: Each size of the certify command: ``CERTIFY_ARGS`` it adds to the block as written (none for
#: the block itself) and the suite that runs it.
SIZES = {
    "complete": ("", pytest.mark.full),
    "shard": (f" CERTIFY_ARGS='--shard {SHARD}'", pytest.mark.heavy),
}


def _clone_env(base: Path) -> dict[str, str]:
    """The reader's environment: the private key's default home (~/.config/ckit/keys) is the
    test's own."""
    env = {**os.environ, "HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "config")}
    env.pop("CKIT_SIGNING_KEY", None)
    return env


@pytest.fixture(scope="module", params=[pytest.param(size, marks=mark)
                                         for size, (_, mark) in SIZES.items()])
def certified(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    size: str = request.param
    base = tmp_path_factory.mktemp(f"certify-{size}")
    kit = fresh_clone(base / "kit")
    block = readme_block(CERTIFY_HEADING)
    assert block == "make certify VENDOR=cpu\n"
    done = run_block(block.rstrip("\n") + SIZES[size][0] + "\n", kit, _clone_env(base),
                     timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (out,) = (kit / "results" / "cpu").iterdir()  # results/cpu/<UTC stamp>
    assert f"certify: results/cpu/{out.name} (ckit run exit code 0)" in done.stdout
    assert "OK: cpu report signed by" in done.stdout
    return {"out": out, "keyring": kit / "signing" / "keyring", "base": base, "size": size}


@pytest.mark.full
def test_the_same_steps_by_hand_run_as_written(tmp_path: Path) -> None:
    """The key, a complete run into results/cpu and its verify, in a clone of their own: a
    second complete run, so in ``make test-full`` only."""
    kit = fresh_clone(tmp_path / "kit")
    done = run_block(readme_block(CERTIFY_HEADING, 1), kit, _clone_env(tmp_path), timeout=1800)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "grade: conformant" in done.stdout
    assert "OK: cpu report signed by" in done.stdout
    report = json.loads((kit / "results" / "cpu" / "report.json").read_text())
    assert report["grade"] == {"name": "conformant", "reasons": []}


def _in_run(certified: dict[str, Any], test_id: str) -> bool:
    return certified["size"] == "complete" or hash_shard(test_id, SHARD.count) == SHARD.index


def test_cpu_run_is_conformant_and_covers_every_locked_test(certified: dict[str, Any]) -> None:
    from kit.standard import load_standard
    from kit.tiers.registry import complete_run_tiers

    report = json.loads((certified["out"] / "report.json").read_text())
    if certified["size"] == "complete":
        assert report["grade"]["name"] == "conformant"
    else:  # a shard is graded when merged; alone, only its narrowing keeps it from conformant
        assert all("does not cover the whole standard" in reason
                   for reason in report["grade"]["reasons"]), report["grade"]
    standard = load_standard()
    # The default tiers: every one but deploy (kit.tiers.registry.complete_run_tiers).
    expected = {t for tier in complete_run_tiers() for t in standard.test_ids(tier)
                if _in_run(certified, t)}
    statuses = {record["id"]: record["status"] for record in report["records"]}
    assert set(statuses) == expected
    assert {record["tier"] for record in report["records"]} == set(complete_run_tiers())
    # Optional model sources absent here: reported as not applicable, never as passed.
    optional = {t for t in expected if t.startswith(("models/timm/", "models/torchbench/"))}
    assert optional and all(statuses[t] == "NOT_APPLICABLE" for t in optional)
    assert {s for t, s in statuses.items() if t not in optional} <= {"PASS", "NOT_APPLICABLE"}


def test_verify_accepts_the_signed_report(certified: dict[str, Any]) -> None:
    result = run_ckit(
        ["verify", str(certified["out"] / "report.dsse.json"), "--keyring",
         str(certified["keyring"])], dict(os.environ),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("OK: cpu report signed by")


@pytest.mark.parametrize("name", ["report.json", "junit.xml", "results.csv", "summary.md"])
def test_verify_rejects_one_changed_byte_in_each_file(
    certified: dict[str, Any], tmp_path: Path, name: str
) -> None:
    tampered = tmp_path / "tampered"
    shutil.copytree(certified["out"], tampered)
    data = bytearray((tampered / name).read_bytes())
    data[len(data) // 2] ^= 0x01
    (tampered / name).write_bytes(bytes(data))
    result = run_ckit(
        ["verify", str(tampered / "report.dsse.json"), "--keyring", str(certified["keyring"])],
        dict(os.environ),
    )
    assert result.returncode == 4
    assert name in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def everyday(certified: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """The README's everyday-use block, as written, in the clone ``make certify`` ran in."""
    base = certified["base"]
    return run_block(readme_block(EVERYDAY_HEADING), base / "kit", _clone_env(base))


def test_readme_everyday_use_runs_as_written_after_certify(
    certified: dict[str, Any], everyday: subprocess.CompletedProcess[str]
) -> None:
    """List, show and diff pass; the rerun of a conformant run's failures is refused in one line
    (nothing failed), the block's last line."""
    assert everyday.returncode == 3, everyday.stdout[-2000:] + everyday.stderr[-2000:]
    assert everyday.stderr.strip().splitlines()[-1].endswith(
        "no test to rerun: every test of that run (within --tier/--select) passed or was skipped")
    # The plan (one line per test), then its count on stderr.
    assert re.search(r"^\d+ test\(s\): \d+ not-applicable, \d+ run$", everyday.stderr, re.MULTILINE)
    assert "run             unit/opinfo/add/float32/0\n" in everyday.stdout
    run = f"results/cpu/{certified['out'].name}"
    assert f"report: {run}/report.json" in everyday.stdout  # show
    if certified["size"] == "complete":
        assert "grade: conformant" in everyday.stdout
    else:
        assert "(partial: the tests it ran meet conformant;" in everyday.stdout
    records = len(json.loads((certified["out"] / "report.json").read_text())["records"])
    # The run before the newest, after one certify, is itself.
    assert (f"0 regressed, 0 improved, 0 changed, 0 appeared, 0 vanished, {records} unchanged"
            in everyday.stdout)


@pytest.fixture(scope="module")
def templates(certified: dict[str, Any],
              everyday: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """The template and canary template blocks, as written, in the same clone (after everyday
    use, so what the clone holds at the end is what every block left)."""
    base = certified["base"]
    block = readme_block(TEMPLATES_HEADING) + readme_block(CANARY_HEADING)
    return run_block(block, base / "kit", _clone_env(base))


def test_readme_template_blocks_run_as_written(
    certified: dict[str, Any], templates: subprocess.CompletedProcess[str]
) -> None:
    assert templates.returncode == 0, templates.stderr
    kit = certified["base"] / "kit"
    jobs = list(yaml.safe_load_all((kit / "ckit-jobs.yaml").read_text(encoding="utf-8")))
    assert [job["kind"] for job in jobs] == ["Job", "Job"]
    assert "wrote ckit-jobs.yaml" in templates.stdout
    for expected in ("name: ckit-acme", "repository_dispatch", "kind: CronJob", "#SCRON"):
        assert expected in templates.stdout, expected


def test_readme_blocks_leave_the_clone_clean_but_for_what_a_reader_keeps(
    certified: dict[str, Any], templates: subprocess.CompletedProcess[str]
) -> None:
    """What git shows as new after every block: the vendor's public key (to commit) and the
    Kubernetes jobs the template wrote; runs go under results/, which git ignores."""
    (key,) = (certified["keyring"] / "cpu").glob("*.pub.pem")
    assert untracked_files(certified["base"] / "kit") == {
        f"signing/keyring/cpu/{key.name}", "ckit-jobs.yaml"}
