"""A claimed flow whose packages are absent is NOT_APPLICABLE, with the flow's own reason.

The flow is a real vendor flow, registered by a real distribution under ``ckit.flows``; the
decision is the kit's, both before a test reaches a worker (``kit_inapplicable``, what
``ckit run`` and ``ckit run --list`` use) and in the worker's own check (``run_flow_case``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from flows_tier_helpers import install_absent_flow

from kit.outcomes import na_reason_of
from kit.pytest_plugin import build_context
from kit.results import NotApplicableReason
from kit.standard import load_standard
from kit.tiers.flows.cases import run_flow_case
from kit.tiers.registry import kit_inapplicable
from kit.vendors import load_vendor

TEST_ID = "flows/acme_absent/opinfo/add/float32/0"
REASON = "acme_runtime is not installed (flow acme_absent)"


@pytest.fixture
def acme_vendor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    install_absent_flow(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    vendor = tmp_path / "acme"
    vendor.mkdir()
    (vendor / "skips.yaml").write_text("skips: []\n", encoding="utf-8")
    (vendor / "vendor.yaml").write_text(
        "id: acme\ndisplay_name: Acme\ncontact: a@example.org\ndocs_url: https://example.org\n"
        "device_type: cpu\ndtypes: [float32]\nflows: [eager, acme_absent]\n"
        "skip_manifest: skips.yaml\n",
        encoding="utf-8",
    )
    return vendor


def test_flow_not_installed_is_decided_by_the_kit_before_the_worker(acme_vendor: Path) -> None:
    found = kit_inapplicable(load_standard(), load_vendor(acme_vendor), TEST_ID)
    assert found is not None
    assert (found.reason, found.words) == (NotApplicableReason.FLOW_NOT_INSTALLED, REASON)


def test_flow_not_installed_ends_the_worker_test_not_applicable(acme_vendor: Path) -> None:
    context = build_context(str(acme_vendor), dt.date(2026, 11, 23))
    with pytest.raises(pytest.skip.Exception) as raised:
        run_flow_case(context, TEST_ID)
    assert (na_reason_of(raised.value), str(raised.value.msg)) == (
        NotApplicableReason.FLOW_NOT_INSTALLED, f"not applicable: {REASON}")
