"""The deploy tier: is the vendor stack installed and usable, before any op is judged?

Its tests run even when the device is unusable (the plugin skips other tiers then): reporting
that, with the reason, is what ``deploy/device-visible`` is for.

The checks of the vendor's environment (imports, pinned torch, ``pip check``, device count) can
only run where the vendor's modules are. The two that compute (``deploy/smoke-op`` and
``deploy/export-run``) are split like the unit tier: the vendor's process returns the device's
output, and the kit's judge builds the same inputs, the float64 reference and the comparison
(``judge_deploy_evidence``), so a patched torch in the vendor's process cannot pass them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kit.json_shape import RecordDetails

#: The stable ids of the deploy tier, in the order they run.
DEPLOY_TEST_IDS = (
    "deploy/imports",
    "deploy/torch-pinned",
    "deploy/pip-check",
    "deploy/device-visible",
    "deploy/smoke-op",
    "deploy/export-run",
)
SMOKE_OP = "deploy/smoke-op"
EXPORT_RUN = "deploy/export-run"
#: The deploy tests judged apart from the vendor's process.
JUDGED_APART = (SMOKE_OP, EXPORT_RUN)


class DeployCheckFailed(AssertionError):
    """A deploy check found the stack broken; the message says how."""


def all_test_ids(standard: object = None) -> list[str]:
    """The tier's ids for ``ckit standard lock`` (sorted, like every locked list)."""
    return sorted(DEPLOY_TEST_IDS)


def smoke_inputs() -> tuple[Any, Any]:
    import torch

    generator = torch.Generator().manual_seed(0)
    return torch.randn(32, 48, generator=generator), torch.randn(48, 16, generator=generator)


def smoke_op(a: Any, b: Any) -> Any:
    import torch

    return torch.relu(a @ b) + 1


def tiny_model() -> Any:
    import torch

    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4)
    ).eval()


def export_input() -> Any:
    import torch

    return torch.randn(8, 16, generator=torch.Generator().manual_seed(1))


def smoke_reference() -> Any:
    a, b = smoke_inputs()
    return smoke_op(a.double(), b.double())


def export_reference() -> Any:
    import torch

    with torch.no_grad():
        return tiny_model().double()(export_input().double())


_WHERE = {SMOKE_OP: "relu(a @ b) + 1", EXPORT_RUN: "exported program output"}


def judge_deploy_evidence(standard: Any, test_id: str, evidence: Any) -> RecordDetails:
    """Compare the device's output for a computing deploy test with the float64 reference."""
    import torch

    from kit.numerics.judging import assert_close
    from kit.outcomes import ResultMismatch, numerics_details

    references = {SMOKE_OP: smoke_reference, EXPORT_RUN: export_reference}
    if test_id not in references:
        raise ResultMismatch(f"{test_id} is not judged apart from the vendor's process")
    if not isinstance(evidence, torch.Tensor):
        raise ResultMismatch(f"{_WHERE[test_id]}: the worker returned no tensor")
    where = _WHERE[test_id]
    return numerics_details(
        assert_close(evidence, references[test_id](), standard.tolerance("float32"), where=where)
    )
