"""The portal tests' shared repository: what it holds and how it is built (``conftest.py``
builds it once per module).

Vendors acme (two kit versions, its newer result failing a model test, an older run of a
narrower selection, and a newest submission tampered after signing), bolt (a model test
skipped, a unit failure whose message holds markup, the model tests of two flows it does not
claim not applicable, its run on another host) and cpu (two narrowed runs whose profile's
docs_url is a ``javascript:`` link). Only acme has a name, contact and docs link in the keyring
(``ACME``). Performance figures: acme's two full runs, cpu's two and bolt's one carry them on
``TIMED_MODELS`` (bolt on resnet alone).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from submission_helpers import (
    NOW,
    SMALL_SELECT,
    Outcome,
    Repository,
    Run,
    hours_before,
    ids_of,
    numeric_failure,
    source_absent,
    tamper,
)

from kit.repository.gate import GatePolicy, load_gate_policy
from kit.repository.interface import RepositoryAudit
from kit.repository.layout import SubmissionKey
from kit.results import PERFORMANCE_KEY, Status
from kit.signing.keyring import VendorIdentity
from kit.tiers.models.performance import Host, PerformanceFigures

#: acme's entry in the root-signed keyring (bolt and cpu have none).
ACME = VendorIdentity("acme", "Acme NPU", "conformance@acme.example", "https://acme.example/ckit")
#: A required vendor that never submitted: the gate and the matrix must still show it.
ABSENT = "dyna"


def gate_policy() -> GatePolicy:
    """The standard's gate policy, with acme and the absent vendor required."""
    return dataclasses.replace(load_gate_policy(), required_vendors=("acme", ABSENT))


MARKUP_MESSAGE = "<script>alert('pwned')</script> differs"
UNIT_FAILURE = "unit/opinfo/add/float32/0"
#: A flow test whose backend took nothing, with the facts every flow record carries.
NOT_DELEGATED_TEST = "flows/executorch_xnnpack/opinfo/cumsum/float32/0"
NOT_DELEGATED = Outcome(
    Status.NOT_DELEGATED,
    "the backend took no operator of the program",
    {"flow": "executorch_xnnpack", "stage": "NOT_DELEGATED", "delegated_ops": 0,
     "undelegated_ops": 1, "undelegated_op_names": {"aten.cumsum.default": 1},
     "lowering_s": 0.5, "program_bytes": 1200},
)


#: The flows bolt does not claim: its model tests of them are the kit's "unclaimed-flow" n/a.
BOLT_UNCLAIMED = ("executorch_xnnpack_int8", "onnxruntime_cpu")


def unclaimed_flows(vendor: str, flows: tuple[str, ...]) -> dict[str, Outcome]:
    """The kit's verdict on each locked model test of ``flows``: not applicable, unclaimed."""
    outcomes = {}
    for test_id in ids_of("models"):
        flow = test_id.rsplit("/", 1)[1]
        if flow in flows:
            words = f"vendor {vendor} does not claim flow {flow}"
            outcomes[test_id] = Outcome(Status.NOT_APPLICABLE, words,
                                        {"na_reason": "unclaimed-flow", "reason": words})
    return outcomes


#: The model tests whose records carry performance figures, and the host bolt's run reports.
TIMED_MODELS = ("models/hf/bert/eager", "models/hf/resnet/eager")
BOLT_HOST = {"cpu_model": "Bolt Host CPU 9000"}


def timed(latency_ms: float, outcome: Outcome | None = None) -> Outcome:
    """``outcome`` (default: a pass) with figures of ten calls around ``latency_ms``."""
    latencies = tuple((latency_ms + 0.1 * (i % 3)) / 1e3 for i in range(10))
    figures = PerformanceFigures("inference", 2, latencies, "torch.cpu.synchronize", None,
                                 "not reported", False, Host("Test CPU", 2, 2, 1, 1))
    base = outcome or Outcome(Status.PASS, "")
    return Outcome(base.status, base.message,
                   {**base.details, PERFORMANCE_KEY: figures.to_json()})


def timed_models(*latencies_ms: float) -> dict[str, Outcome]:
    return {test: timed(ms) for test, ms in zip(TIMED_MODELS, latencies_ms, strict=True)}


@dataclass(frozen=True)
class PortalWorld:
    repo: Repository
    audit: RepositoryAudit
    site: Path
    acme_old: SubmissionKey
    acme_latest: SubmissionKey
    acme_tampered: SubmissionKey
    bolt: SubmissionKey
    #: acme's oldest result, of ``SMALL_SELECT``: not comparable with its full runs.
    acme_small: SubmissionKey
    #: cpu's newest run, and an older one of the same host, kit and standard (joined on its
    #: latency lines).
    cpu: SubmissionKey
    cpu_old: SubmissionKey


def submit_all(repo: Repository) -> dict[str, SubmissionKey]:
    markup = Outcome(Status.FAIL_NUMERIC, MARKUP_MESSAGE, numeric_failure().details)
    keys = {
        "acme_small": repo.submit(
            Run("acme", hours_before(NOW, 50), kit_version="0.1.0", select=SMALL_SELECT)
        ),
        "acme_old": repo.submit(Run("acme", hours_before(NOW, 30), kit_version="0.1.0",
                                    outcomes=timed_models(40.0, 9.0))),
        "acme_latest": repo.submit(
            Run(
                "acme",
                hours_before(NOW, 5),
                kit_version="0.2.0",
                outcomes={"models/hf/gpt2/eager": numeric_failure(0.0042, 0.17),
                          **timed_models(42.0, 8.5)},
            )
        ),
        "bolt": repo.submit(
            Run(
                "bolt",
                hours_before(NOW, 8),
                outcomes={
                    "models/timm/resnet18/eager": source_absent("timm"),
                    "models/hf/resnet/eager": timed(3.2),
                    UNIT_FAILURE: markup,
                    NOT_DELEGATED_TEST: NOT_DELEGATED,
                    **unclaimed_flows("bolt", BOLT_UNCLAIMED),
                },
                environment=BOLT_HOST,
            )
        ),
        "cpu": repo.submit(
            Run(
                "cpu",
                hours_before(NOW, 3),
                kit_version="0.2.0",
                select=SMALL_SELECT,
                docs_url="javascript:alert(1)",
                outcomes=timed_models(25.0, 12.0),
            )
        ),
        "cpu_old": repo.submit(
            Run("cpu", hours_before(NOW, 20), kit_version="0.2.0", select=SMALL_SELECT,
                docs_url="javascript:alert(1)", outcomes=timed_models(24.0, 6.0))
        ),
        "acme_tampered": repo.submit(
            Run(
                "acme",
                hours_before(NOW, 1),
                kit_version="0.2.0",
                select=SMALL_SELECT,
                outcomes={"models/hf/t5/eager": numeric_failure()},
            )
        ),
    }
    tamper(repo, keys["acme_tampered"])
    return keys
