"""A model certified through a program flow with ``--golden``, submitted with ``ckit submit`` (its
pre-check is the audit's) and audited with ``ckit audit``, which re-runs the program.

A model's reference is computed in float64 and its program returns float32: the artifact keeps
the reference in the program's dtype, and its re-run is judged by the model's own tolerance.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from repository_helpers import SharedRepo, ckit, field

from kit.golden.manifest import load_manifest
from kit.repository.submission_checks import GOLDEN

pytestmark = pytest.mark.slow(seconds=90)

TEST_ID = "models/hf/resnet/onnxruntime_cpu"


def test_fresh_model_artifacts_pass_submit_and_the_audits_golden_sample(
    shared: SharedRepo, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    ran = ckit(["run", "--vendor", "cpu", "--tier", "models", "--flows", "onnxruntime_cpu",
                "--select", TEST_ID, "--golden", "--out", str(out)], shared.env)
    manifest, _ = load_manifest(out)
    assert [(e.flow, e.test_id) for e in manifest.entries] == [("onnxruntime_cpu", TEST_ID)], (
        ran.stderr[-3000:])
    stored = out / "golden" / "onnxruntime_cpu" / TEST_ID / "outputs" / "0.json"
    assert json.loads(stored.read_text())["dtype"] == "float32"

    # The pre-check re-runs no program (sample 0): the audit below re-runs the one there is.
    submitted = ckit(["submit", str(out), "--repo", str(shared.origin), *shared.audit_args,
                      "--golden-sample", "0"], shared.env)
    assert submitted.returncode == 0, submitted.stderr
    clone = Path(field(submitted.stdout, "clone").split(" (", 1)[0])
    audited = ckit(["audit", str(clone), *shared.audit_args, "--golden-sample", "1", "--json"],
                   shared.env)
    (submission,) = [s for s in json.loads(audited.stdout)["submissions"]
                     if "/cpu/" in s["submission"] and s["submission"].endswith(
                         field(submitted.stdout, "submitted").rsplit("/", 1)[1])]
    golden = next(check for check in submission["checks"] if check["number"] == GOLDEN)
    assert golden["passed"], golden
    assert golden["why"].startswith("1 entries intact, 1 re-run (sample 1, seed ")
    assert submission["passed"], [c for c in submission["checks"] if not c["passed"]]
