"""Core ATen coverage (``kit.report.core_aten``) of a real run's records: the shared fault-free
cpu run (``unit_helpers.on_clean_cpu``)."""

from __future__ import annotations

from typing import Any

from unit_helpers import on_clean_cpu

from kit.attribution.dispatch import Where
from kit.attribution.op_names import release_core_ops
from kit.report.attribution_summary import attribution_summary
from kit.report.summary import Summary, counts
from kit.results import Status, TestRecord
from kit.standard import load_standard

ADD = on_clean_cpu(["unit/opinfo/add/float32/0"])[0]


def _record(data: dict[str, Any]) -> TestRecord:
    return TestRecord(data["id"], Status(data["status"]), data["duration_s"], data["message"],
                      data["details"])


def test_a_run_of_add_exercises_add_natively_on_cpu_and_no_other_core_op(
    clean_cpu_run: dict[str, dict[str, Any]],
) -> None:
    record = _record(clean_cpu_run[ADD])
    release = load_standard().torch_release
    summary = Summary(overall=counts([record]), tiers={}, flows={},
                      attribution=attribution_summary([record]))
    coverage = summary.core_aten(release)
    core = release_core_ops(release)
    assert coverage is not None and coverage.known and core is not None
    assert coverage.ops["aten::add.Tensor"] is Where.NATIVE
    assert (coverage.exercised, coverage.count(Where.NATIVE)) == (1, 1)
    assert len(coverage.unexercised()) == len(core) - 1
    assert coverage.text() == (f"core ATen ops (torch {release}): 1/{len(core)} exercised, "
                               "1 native, 0 decomposed, 0 through the fallback")


def test_a_release_not_installed_has_its_core_opset_unknown(
    clean_cpu_run: dict[str, dict[str, Any]],
) -> None:
    record = _record(clean_cpu_run[ADD])
    summary = Summary(overall=counts([record]), tiers={}, flows={},
                      attribution=attribution_summary([record]))
    coverage = summary.core_aten("1.0.0")
    assert coverage is not None and not coverage.known and not coverage.ops
    assert coverage.text() == ("core ATen ops (torch 1.0.0): not known here (another torch "
                               "release is installed)")
    assert Summary(overall=counts([]), tiers={}, flows={}).core_aten(release="1.0.0") is None
