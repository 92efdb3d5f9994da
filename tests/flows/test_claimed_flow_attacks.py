"""Issue 24's probe: a vendor's own flow (registered by entry point) could be claimed, listed as
claimed in the signed report, and never tested (no standard's flows tier runs it). The claim is
refused when the run starts, with one line; one real ``ckit run`` that stops before any test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flows_helpers import VENDOR_FLOW_SOURCE, write_distribution

from kit.errors import ExitCode
from kit.flows import ENTRY_POINT_GROUP
from kit.flows.config import flows_config
from kit.standard import load_standard

KIT_ROOT = Path(__file__).resolve().parents[2]
PROFILE = """\
id: acme
display_name: Acme NPU
contact: Acme Conformance <conformance@acme.example>
docs_url: https://acme.example/docs
device_type: cpu
import_modules: []
requirements: []
dtypes: [float32]
flows: [eager, acme_npu]
skip_manifest: skips.yaml
"""


def test_vendor_flow_claimed_but_never_tested_is_refused_by_the_run(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    write_distribution(site, "acme-ckit", "acme_ckit_flows", VENDOR_FLOW_SOURCE,
                       f"[{ENTRY_POINT_GROUP}]\nacme_npu = acme_ckit_flows:AcmeNpuFlow\n")
    vendor = tmp_path / "acme"
    vendor.mkdir()
    (vendor / "vendor.yaml").write_text(PROFILE, encoding="utf-8")
    (vendor / "skips.yaml").write_text("skips: []\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(KIT_ROOT)]),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "kit", "run", "--vendor", str(vendor), "--tier", "flows",
         "--no-sign", "--out", str(out)],
        cwd=KIT_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    standard = load_standard()
    tested = ", ".join(("eager", *flows_config(standard).flows))
    assert done.returncode == ExitCode.INPUT_ERROR, done.stderr
    assert done.stderr.splitlines() == [
        f"ckit: error: claimed flow 'acme_npu' is not tested by standard {standard.version} "
        f"(its flows tier runs {tested}): a claim no test checks is never signed; leave it "
        "out of vendor.yaml flows / --flows"]
    assert not (out / "report.json").exists()
