"""The report says what was certified: the vendor's package versions, the claimed dtypes and
flows, and where the run happened; in report.json, summary.md and ``ckit show`` (a real run)."""

from __future__ import annotations

import copy
import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kit.cli import main
from kit.errors import ExitCode
from kit.report.schema import validate_report

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def certified_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A narrowed real run of the cpu profile as vendor ``lab``, naming packages of its own."""
    root = tmp_path_factory.mktemp("certified")
    vendor = root / "vendors" / "lab"
    (vendor / "src" / "lab-runtime").mkdir(parents=True)
    (vendor / "src" / "lab-runtime" / "pyproject.toml").write_text(
        '[project]\nname = "lab-runtime"\nversion = "0.1"\n'
    )
    profile = yaml.safe_load((REPO / "vendors" / "cpu" / "vendor.yaml").read_text())
    profile.update(
        id="lab", dtypes=["float32", "bfloat16"], requirements=["numpy>=1", "./src/lab-runtime"],
        import_modules=["torch", "yaml"],  # torch: the kit's own, never listed as the vendor's
    )
    (vendor / "vendor.yaml").write_text(yaml.safe_dump(profile))
    (vendor / "skips.yaml").write_text("skips: []\n")
    out = root / "out"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(root / "config"))
        code = main(["run", "--vendor", str(vendor), "--select", "unit/opinfo/add/float32/0",
                     "--no-sign", "--out", str(out)])
    assert code == ExitCode.PARTIAL  # narrowed: its tests pass, a complete run would conform
    return out


def _expected_packages() -> list[dict[str, Any]]:
    return [
        {"name": "lab-runtime", "version": None, "from": ["requirement ./src/lab-runtime"]},
        {"name": "numpy", "version": importlib.metadata.version("numpy"),
         "from": ["requirement numpy>=1"]},
        {"name": "pyyaml", "version": importlib.metadata.version("pyyaml"),
         "from": ["import yaml"]},
    ]


def test_report_json_records_the_vendor_packages_and_claims(certified_run: Path) -> None:
    report = json.loads((certified_run / "report.json").read_text())
    assert report["environment"]["vendor_packages"] == _expected_packages()
    assert report["environment"]["container"] is None  # on the host
    assert (report["vendor"]["dtypes"], report["vendor"]["flows"]) == (
        ["float32", "bfloat16"], ["eager"]
    )


def test_summary_header_says_what_was_certified(certified_run: Path) -> None:
    lines = (certified_run / "summary.md").read_text().splitlines()
    numpy, pyyaml = (importlib.metadata.version(n) for n in ("numpy", "pyyaml"))
    assert "Claimed dtypes float32, bfloat16 · flows eager · ran on host" in lines
    assert (
        f"Vendor packages: lab-runtime not installed, numpy {numpy}, pyyaml {pyyaml}" in lines
    )


def test_show_says_what_was_certified(
    certified_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["show", str(certified_run)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "claimed dtypes float32, bfloat16 · flows eager · ran on host" in lines
    assert main(["show", str(certified_run), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["certified"] == {
        "dtypes": ["float32", "bfloat16"], "flows": ["eager"], "ran_on": "host",
        "vendor_packages": _expected_packages(),
    }


def test_reports_of_older_kits_without_the_new_fields_stay_valid(certified_run: Path) -> None:
    report = json.loads((certified_run / "report.json").read_text())
    older = copy.deepcopy(report)
    del older["environment"]["vendor_packages"]
    assert "rerun_of" not in older["run"]
    validate_report(older)
    validate_report(report)
