"""Fixtures for the report tests: the real standard v1, the real cpu vendor, real manifests."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from report_helpers import TODAY, run_info

from kit.clock import RunDate
from kit.device import DeviceInfo
from kit.grading import build_report, collect_environment
from kit.results import TestRecord
from kit.standard import Standard, load_standard
from kit.vendors import SkipManifest, VendorProfile, load_skip_manifest, load_vendor


@pytest.fixture(scope="session")
def standard() -> Standard:
    # Without test lists: the locked lists of the checkout must not decide these tests' grades.
    return dataclasses.replace(load_standard(), test_lists={})


@pytest.fixture(scope="session")
def vendor() -> VendorProfile:
    return load_vendor("cpu")


@pytest.fixture(scope="session")
def environment() -> dict[str, Any]:
    return collect_environment(DeviceInfo("cpu", 1, "x86_64"))


@pytest.fixture
def manifest(tmp_path: Path) -> Callable[[Sequence[dict[str, str]]], SkipManifest]:
    """Write a skip manifest YAML file with these entries and load it the kit's way."""

    def write(entries: Sequence[dict[str, str]]) -> SkipManifest:
        path = tmp_path / "skips.yaml"
        path.write_text(yaml.safe_dump({"skips": list(entries)}), encoding="utf-8")
        return load_skip_manifest(path)

    return write


@pytest.fixture
def make_report(
    standard: Standard, vendor: VendorProfile, environment: dict[str, Any]
) -> Callable[..., dict[str, Any]]:
    def make(
        records: Sequence[TestRecord],
        *,
        skips: SkipManifest | None = None,
        run: dict[str, Any] | None = None,
        today: dt.date = TODAY,
        clock: RunDate | None = None,
        standard_override: Standard | None = None,
        environment_override: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return build_report(
            records=records,
            standard=standard_override or standard,
            vendor=vendor,
            skips=skips or SkipManifest(entries=()),
            environment=environment_override or environment,
            run=run or run_info(),
            # Time frozen honestly: as if the system clock read ``today`` (no override).
            clock=clock or RunDate(today),
        )

    return make
