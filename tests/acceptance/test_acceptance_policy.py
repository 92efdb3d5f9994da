"""An acceptance policy: all of its checks, never none; a policy file of a fixed vocabulary."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from acceptance_helpers import VENDOR, narrowed_report, read

from kit.acceptance import AcceptancePolicy, PolicyOutcome, accepted, load_policy
from kit.acceptance.kit_checks import ReleasedKitCheck, StandardCheck, TorchReleaseCheck
from kit.acceptance.result_checks import (
    MaxAgeCheck,
    MinGradeCheck,
    SkipPolicyCheck,
    VendorCheck,
    grade_order,
)
from kit.errors import InputError
from kit.grading.released import ReleasedKit
from kit.standard.catalogue import standard_directory

SHIPPED = standard_directory() / "acceptance.yaml"
#: The current standard, which its shipped policy names.
CURRENT = standard_directory().name
LISTED = (ReleasedKit("0.1.0", "ab" * 32, dt.date(2027, 1, 31)),)


def policy_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_an_empty_policy_is_refused_not_read_as_accept_everything():
    with pytest.raises(InputError, match="^an acceptance policy needs at least one check: an "
                       "empty one would accept every report$"):
        AcceptancePolicy(())


@pytest.mark.parametrize("text", ["", "{}\n", "released_kit: false\nskip_policy_clean: false\n"])
def test_a_policy_file_without_a_condition_is_refused(tmp_path: Path, text: str):
    with pytest.raises(InputError) as refused:
        load_policy(policy_file(tmp_path, text))
    message = str(refused.value)
    assert message.startswith(f"{tmp_path / 'policy.yaml'}: ") and "\n" not in message
    assert "condition" in message or "at least one check" in message


def test_a_policy_file_with_an_unknown_key_is_refused_in_one_line(tmp_path: Path):
    path = policy_file(tmp_path, "min_grade: conformant\nmax_age: 30\n")
    with pytest.raises(InputError) as refused:
        load_policy(path)
    assert str(refused.value) == (
        f"{path}: max_age: unknown key; the keys here are released_kit, standard, "
        "torch_release, standards, vendor, vendor_is_submission_path, min_grade, max_age_days, "
        "skip_policy_clean"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("torch_release: 2.13\n", "torch_release: expected a quoted string, got 2.13"),
        ("torch_release: 'latest'\n", "torch_release: torch release 'latest': expected MAJOR"),
        ("released_kit: 'yes'\n", "released_kit: expected true or false (unquoted), got 'yes'"),
        ("max_age_days: '30'\n", "max_age_days: expected a whole number of days >= 0, got '30'"),
        ("max_age_days: -1\n", "max_age_days: expected a whole number of days >= 0, got -1"),
        ("min_grade: great\n", "min_grade: no grade named 'great'"),
        ("vendor: ACME\n", "vendor: vendor 'ACME' is not a vendor id"),
        ("standard: 1\n", "standard: expected a quoted string, got 1"),
        ("- min_grade\n", "expected a mapping of acceptance conditions"),
        ("standards: {}\n", "standards: expected a non-empty mapping of torch release"),
        ("standards: {'2.13': 2}\n", "standards.2.13: expected a quoted string, got 2"),
        ("standards: {'latest': v2}\n", "standards: torch release 'latest': expected MAJOR"),
        ("standard: v2\nstandards: {'2.13': v2}\n", "standards: standards lists each release's "
         "standard: drop standard"),
    ],
)
def test_a_bad_value_names_the_file_and_the_key(tmp_path: Path, text: str, message: str):
    path = policy_file(tmp_path, text)
    with pytest.raises(InputError) as refused:
        load_policy(path)
    assert str(refused.value).startswith(f"{path}: {message}")


def test_vendor_is_submission_path_needs_the_vendor(tmp_path: Path):
    path = policy_file(tmp_path, "vendor_is_submission_path: true\n")
    with pytest.raises(InputError) as refused:
        load_policy(path)
    assert str(refused.value) == (
        f"{path}: vendor_is_submission_path: needs the vendor of the submission path "
        "(ckit verify --vendor)"
    )
    assert load_policy(path, vendor=VENDOR).checks == (VendorCheck(VENDOR),)


def test_the_shipped_policy_is_the_repositorys_default():
    policy = load_policy(SHIPPED, vendor=VENDOR, released_kits=LISTED)
    assert policy.checks == (
        ReleasedKitCheck(LISTED),
        StandardCheck(CURRENT),
        TorchReleaseCheck("2.13"),
        VendorCheck(VENDOR),
        MinGradeCheck("conformant-with-exceptions", grade_order()),
        MaxAgeCheck(365),
        SkipPolicyCheck(),
    )


def test_a_policy_reports_every_check_and_accepts_only_when_all_are_met():
    report, standing = read(narrowed_report())
    policy = AcceptancePolicy((VendorCheck(VENDOR), VendorCheck("globex"), StandardCheck(CURRENT)))
    outcomes = policy.evaluate(report, standing, dt.datetime.now(dt.UTC))
    assert outcomes == (
        PolicyOutcome("vendor", True, "the report is vendor acme's", None),
        PolicyOutcome(
            "vendor", False, "the report is vendor globex's", "the report is vendor acme's, "
            "not globex's"
        ),
        PolicyOutcome("standard", True, f"the run was judged against standard {CURRENT}",
                      None),
    )
    assert not accepted(outcomes)
    assert accepted(outcomes[:1] + outcomes[2:])


def test_adding_checks_keeps_each_distinct_check_once():
    policy = AcceptancePolicy((VendorCheck(VENDOR), MaxAgeCheck(365)))
    combined = policy.with_checks((VendorCheck(VENDOR), MaxAgeCheck(30)))
    assert combined.checks == (VendorCheck(VENDOR), MaxAgeCheck(365), MaxAgeCheck(30))


def test_standards_accept_each_release_judged_against_its_own_standard(tmp_path: Path):
    """A repository taking two releases: a run is accepted under the standard listed for the
    release it certifies and ran on, and refused under a standard the policy does not list."""
    report, standing = read(narrowed_report())  # judged against CURRENT, on torch 2.13
    now = dt.datetime.now(dt.UTC)
    listed = load_policy(policy_file(tmp_path, f"standards: {{'2.13': {CURRENT}, '2.14': v3}}\n"))
    (outcome,) = listed.evaluate(report, standing, now)
    assert outcome.passed, outcome
    assert outcome.description == (f"the run was judged against standard {CURRENT} (torch 2.13), "
                                   "standard v3 (torch 2.14)")
    other = load_policy(policy_file(tmp_path, "standards: {'2.14': v3}\n"))
    (outcome,) = other.evaluate(report, standing, now)
    assert outcome.why == (f"the run was judged against standard {CURRENT}, "
                           "not standard v3 (torch 2.14)")
    mismatched = load_policy(policy_file(tmp_path, f"standards: {{'2.14': {CURRENT}}}\n"))
    (outcome,) = mismatched.evaluate(report, standing, now)
    assert outcome.why is not None and "not 2.14" in outcome.why
