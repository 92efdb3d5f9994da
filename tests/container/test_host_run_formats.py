"""``ckit run --in-container`` takes the report the run inside wrote in whichever format its
standard declares: a v3 body (report.head.json, records.jsonl) as well as report.json. The
image is faked here (the run inside writes a report the kit builds from records): what is
tested is the host's reading, not Docker."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "verification"))

from body_helpers import body_report  # noqa: E402

import kit.container.host_run as host_run  # noqa: E402
from kit.clock import RunDate  # noqa: E402
from kit.container.host_run import start_run_in_container  # noqa: E402
from kit.container.run import ContainerRun  # noqa: E402
from kit.formats import write_report_files  # noqa: E402
from kit.rundir import BODY_FILES, REPORT_JSON, RunDir  # noqa: E402
from kit.runner.config import RunConfig  # noqa: E402
from kit.signing.sign import write_unsigned_envelope  # noqa: E402
from kit.standard import load_standard  # noqa: E402


def _config(out: Path) -> RunConfig:
    return RunConfig(vendor="cpu", tiers=("unit",), select=("unit/opinfo/add/float32/*",),
                     timeout_s=None, workers=1, out_dir=out, sign=False, key_path=None,
                     clock=RunDate(dt.date.today()))


def _image_writing(report: dict[str, Any]) -> Any:
    """A stand-in for ``run_in_container``: the run inside wrote ``report`` unsigned."""

    def run(vendor: str, image: str | None, out_dir: Path, tiers: Any, extra: Any) -> ContainerRun:
        write_report_files(report, out_dir)
        write_unsigned_envelope(out_dir)
        code = load_standard(report["standard"]["version"]).grade(report["grade"]["name"])
        return ContainerRun("ckit/cpu", "sha256:0", ("ckit", "run"), code.exit_code, out_dir)

    return run


@pytest.mark.usefixtures("private_config")
@pytest.mark.parametrize("version", ["v2", "v3"])
def test_the_host_reads_the_report_in_its_standards_format(
        version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = body_report()
    if version != "v3":
        report = {**report, "standard": {"version": version,
                                         "torch_release": load_standard(version).torch_release}}
    monkeypatch.setattr(host_run, "run_in_container", _image_writing(report))
    out = tmp_path / "run"
    result = start_run_in_container(_config(out), None, [])
    expected = BODY_FILES if version == "v3" else (REPORT_JSON,)
    assert set(expected) <= {p.name for p in RunDir(out).report_paths()}
    assert result.report["records"] == report["records"]
    assert result.report["grade"] == report["grade"]
    assert result.envelope == RunDir(out).envelope
