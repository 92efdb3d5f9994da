"""``ckit gate``: vendors' latest audited results against a release policy, and its exit code.

Submissions are real: reports built by the kit, signed with real keys, filed in the repository
layout and audited with ``verify_envelope`` (tests/portal/submission_helpers.py).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "portal"))

from submission_helpers import (  # noqa: E402
    NOW,
    SMALL_SELECT,
    Outcome,
    Repository,
    Run,
    audit,
    failing_models,
    hours_before,
    tamper,
)

from kit.attribution.op_names import release_core_ops  # noqa: E402
from kit.cli import main  # noqa: E402
from kit.cli.cmd_gate import GATE_CLOSED, gate_lines  # noqa: E402
from kit.errors import ExitCode, InputError  # noqa: E402
from kit.repository.gate import (  # noqa: E402
    GatePolicy,
    Verdict,
    evaluate_gate,
    load_gate_policy,
    parse_gate_policy,
)
from kit.results import Status  # noqa: E402
from kit.standard import load_standard  # noqa: E402

#: Small runs (every deploy and model test) are graded non-conformant, being narrowed; these
#: policies judge them on their tiers' pass rates.
POLICY = {
    "min_pass_rate": {"deploy": 1.0, "models": 0.95},
    "min_grade": "non-conformant",
    "required_vendors": ["acme"],
    "max_failing_age_hours": 72,
}
TWO_MODELS_FAIL = failing_models("models/hf/gpt2/eager", "models/hf/t5/eager")


@pytest.fixture(autouse=True)
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("CKIT_SIGNING_KEY", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    return Repository(tmp_path / "repo")


def _policy(tmp_path: Path, **changes: object) -> GatePolicy:
    path = tmp_path / "gate.yaml"
    path.write_text(yaml.safe_dump({**POLICY, **changes}), encoding="utf-8")
    return load_gate_policy(path)


def _small(vendor: str, hours_ago: float, **fields: object) -> Run:
    return Run(vendor, hours_before(NOW, hours_ago), select=SMALL_SELECT, **fields)  # type: ignore[arg-type]


def _verdicts(repo: Repository, policy: GatePolicy, now: dt.datetime = NOW) -> dict[str, str]:
    result = evaluate_gate(audit(repo, now), "2.13", policy, now)
    return {vendor.vendor: vendor.verdict_text for vendor in result.vendors}


def test_several_vendors_meeting_the_bar_open_the_gate(repo: Repository, tmp_path: Path) -> None:
    for vendor in ("acme", "bolt", "cpu"):
        repo.submit(_small(vendor, 10))
    result = evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW)
    assert [(v.vendor, v.verdict) for v in result.vendors] == [
        ("acme", Verdict.PASSES),
        ("bolt", Verdict.PASSES),
        ("cpu", Verdict.PASSES),
    ]
    assert result.open
    lines = gate_lines(result)
    assert lines[-1] == "gate: OPEN"
    acme_row = next(line for line in lines if line.startswith("acme *"))
    assert "0.1.0" in acme_row and "100.00%" in acme_row and "passes" in acme_row
    # A narrowed run is worded as ckit run, show and the portal word it (kit.grading.wording).
    assert "  partial (its tests meet conformant)  " in acme_row, acme_row


def test_required_vendor_without_a_result_closes_the_gate(repo: Repository, tmp_path: Path) -> None:
    repo.submit(_small("bolt", 10))
    result = evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW)
    acme = next(v for v in result.vendors if v.vendor == "acme")
    assert acme.verdict is Verdict.MISSING and acme.blocks_release
    assert acme.why == "no audited result for the release"
    assert not result.open and gate_lines(result)[-1] == "gate: CLOSED"


def test_tier_below_its_threshold_is_named(repo: Repository, tmp_path: Path) -> None:
    repo.submit(_small("acme", 10, outcomes=TWO_MODELS_FAIL))
    result = evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW)
    (acme,) = result.vendors
    assert acme.verdict is Verdict.FIXING
    assert acme.why == "models pass rate 90.47% < 95.00%"


def test_grade_below_the_minimum_is_named(repo: Repository, tmp_path: Path) -> None:
    repo.submit(_small("acme", 10))
    policy = _policy(tmp_path, min_grade="conformant-with-exceptions")
    (acme,) = evaluate_gate(audit(repo), "2.13", policy, NOW).vendors
    assert acme.why == "grade non-conformant is below conformant-with-exceptions"


def test_failing_inside_the_window_is_fixing_and_past_it_failed(
    repo: Repository, tmp_path: Path
) -> None:
    repo.submit(_small("acme", 10))
    repo.submit(_small("bolt", 10, outcomes=TWO_MODELS_FAIL))
    policy = _policy(tmp_path, required_vendors=["acme"])
    inside = evaluate_gate(audit(repo), "2.13", policy, NOW)
    assert {v.vendor: v.verdict_text for v in inside.vendors}["bolt"] == "fixing (62h left)"
    # bolt is not required: fixing inside the window does not hold the release.
    assert inside.open
    later = NOW + dt.timedelta(hours=70)
    past = evaluate_gate(audit(repo, later), "2.13", policy, later)
    assert {v.vendor: v.verdict_text for v in past.vendors}["bolt"] == "failed: unresolved for 80h"
    assert not past.open


def test_required_vendor_fixing_holds_the_release(repo: Repository, tmp_path: Path) -> None:
    repo.submit(_small("acme", 2, outcomes=TWO_MODELS_FAIL))
    assert _verdicts(repo, _policy(tmp_path)) == {"acme": "fixing (70h left)"}
    assert not evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW).open


def test_resubmitting_a_failing_result_does_not_restart_the_clock(
    repo: Repository, tmp_path: Path
) -> None:
    repo.submit(_small("acme", 100))
    repo.submit(_small("acme", 80, outcomes=TWO_MODELS_FAIL))
    repo.submit(_small("acme", 1, outcomes=TWO_MODELS_FAIL, kit_version="0.2.0"))
    result = evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW)
    (acme,) = result.vendors
    assert acme.verdict_text == "failed: unresolved for 80h"
    assert acme.latest is not None and acme.latest.key.kit_version == "0.2.0"


def test_a_passing_result_after_failures_clears_the_vendor(
    repo: Repository, tmp_path: Path
) -> None:
    repo.submit(_small("acme", 100, outcomes=TWO_MODELS_FAIL))
    repo.submit(_small("acme", 3, kit_version="0.2.0"))
    assert _verdicts(repo, _policy(tmp_path)) == {"acme": "passes"}


def test_tampered_submission_is_not_counted_and_is_shown_rejected(
    repo: Repository, tmp_path: Path
) -> None:
    repo.submit(_small("acme", 50, outcomes=TWO_MODELS_FAIL))
    forged = repo.submit(_small("acme", 1, outcomes=TWO_MODELS_FAIL))
    tamper(repo, forged)
    result = evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW)
    (acme,) = result.vendors
    assert acme.latest is not None and acme.latest.key != forged
    assert acme.verdict_text == "fixing (22h left)"
    rejected = [line for line in gate_lines(result) if line.startswith("rejected ")]
    assert len(rejected) == 1 and rejected[0].startswith(f"rejected {forged}: audit failed at ")
    assert "step 7" in rejected[0]


def test_other_releases_are_not_judged_and_their_gate_stays_closed(
    repo: Repository, tmp_path: Path
) -> None:
    repo.submit(_small("acme", 10))
    result = evaluate_gate(audit(repo), "2.14", _policy(tmp_path, required_vendors=["bolt"]), NOW)
    assert [(v.vendor, v.verdict) for v in result.vendors] == [("bolt", Verdict.MISSING)]
    assert not result.open
    assert "the repository holds no submission for release 2.14" in result.closures


@pytest.mark.parametrize(
    ("attack", "change", "line"),
    [
        ("unknown_key", {"max_failing_age_days": 30}, "max_failing_age_days: unknown key"),
        ("unknown_tier", {"min_pass_rate": {"unit": 0.9, "perf": 0.0}},
         "min_pass_rate.perf: unknown key; the keys here are deploy, unit"),
        ("rate_above_one", {"min_pass_rate": {"unit": 1.5}},
         "min_pass_rate.unit: expected a number from 0 to 1, got 1.5"),
        ("grade_not_in_standard", {"min_grade": "gold"},
         "min_grade: expected one of conformant, conformant-with-exceptions, non-conformant, "
         "not-certifiable, got 'gold'"),
        ("vendor_path", {"required_vendors": ["../acme"]},
         "required_vendors.0: expected a vendor id, got '../acme'"),
        ("negative_window", {"max_failing_age_hours": -1},
         "max_failing_age_hours: expected a number of hours >= 0, got -1"),
    ],
)
def test_policy_outside_the_vocabulary_is_refused(
    tmp_path: Path, attack: str, change: dict[str, object], line: str
) -> None:
    path = tmp_path / f"{attack}.yaml"
    with pytest.raises(InputError) as caught:
        parse_gate_policy({**POLICY, **change}, path)
    assert str(caught.value).startswith(f"{path}: {line}")


def test_policy_missing_a_key_is_refused(tmp_path: Path) -> None:
    data = {key: value for key, value in POLICY.items() if key != "min_grade"}
    with pytest.raises(InputError, match="gate.yaml: min_grade: missing; this key is required"):
        parse_gate_policy(data, tmp_path / "gate.yaml")


def test_the_standards_default_policy_loads() -> None:
    policy = load_gate_policy()
    assert policy.required_vendors == ()  # the release manager lists them: closed until then
    assert policy.min_grade == "conformant-with-exceptions"
    assert policy.accepted_grades == ("conformant", "conformant-with-exceptions")
    assert policy.max_failing_age_hours == 72


def test_cli_refuses_unknown_policy_key_before_auditing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "gate.yaml"
    policy.write_text(yaml.safe_dump({**POLICY, "min_pass_rates": {}}), encoding="utf-8")
    code = main(["gate", "--release", "2.13", "--gate-policy", str(policy), str(tmp_path)])
    assert code == ExitCode.INPUT_ERROR
    assert capsys.readouterr().err == (
        f"ckit: error: {policy}: min_pass_rates: unknown key; the keys here are min_pass_rate, "
        "min_grade, required_vendors, max_failing_age_hours\n"
    )


def test_cli_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["gate", "--help"])
    help_text = capsys.readouterr().out
    assert f"  {int(GATE_CLOSED)}  gate closed" in help_text
    assert "  0  gate open" in help_text
    assert "--max-age-hours N" in help_text


def test_json_decision_names_each_vendors_latest_result(repo: Repository, tmp_path: Path) -> None:
    repo.submit(_small("acme", 30))
    latest = repo.submit(_small("acme", 20, kit_version="0.2.0", outcomes=TWO_MODELS_FAIL))
    result = evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW)
    document = json.loads(json.dumps(result.to_json()))
    (acme,) = document["vendors"]
    assert acme["submission"] == str(latest) and acme["kit_version"] == "0.2.0"
    assert acme["verdict"] == "fixing"
    assert acme["failing_since"] == hours_before(NOW, 20).isoformat()
    assert document["open"] is False


def test_gate_shows_how_many_training_steps_passed(repo: Repository, tmp_path: Path) -> None:
    with_training = (*SMALL_SELECT, "models/*/*/train")
    repo.submit(Run("acme", hours_before(NOW, 10), select=with_training,
                    outcomes=failing_models("models/hf/llama/train")))
    repo.submit(_small("bolt", 10))
    result = evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW)
    acme, bolt = result.vendors
    steps = len([t for t in load_standard().test_ids("models") if t.endswith("/train")])
    assert acme.to_json()["training_steps"] == f"{steps - 1} of {steps} passed"
    assert bolt.to_json()["training_steps"] is None  # its run had none
    lines = gate_lines(result)
    assert "training steps" in lines[1]
    acme_row = next(line for line in lines if line.startswith("acme"))
    assert f"{steps - 1} of {steps} passed" in acme_row


def test_gate_shows_the_core_aten_ops_a_vendors_latest_result_reached(
    repo: Repository, tmp_path: Path
) -> None:
    add = "unit/opinfo/add/float32/0"
    natively = Outcome(Status.PASS, "", {"dispatch": {"native": ["aten::add.Tensor"]}})
    repo.submit(Run("acme", hours_before(NOW, 10), select=(*SMALL_SELECT, add),
                    outcomes={add: natively}))
    repo.submit(_small("bolt", 10))
    result = evaluate_gate(audit(repo), "2.13", _policy(tmp_path), NOW)
    lines = gate_lines(result)
    core = release_core_ops("2.13.0")
    assert core is not None
    assert (f"acme: core ATen ops (torch 2.13.0): 1/{len(core)} exercised, 1 native, "
            "0 decomposed, 0 through the fallback") in lines
    assert not any(line.startswith("bolt: core ATen") for line in lines)  # no unit test ran
    acme, bolt = (vendor.to_json() for vendor in result.vendors)
    shown = acme["core_aten"]
    assert shown is not None and (shown["exercised"], shown["native"]) == (1, 1)
    assert shown["ops"]["aten::add.Tensor"] == "native" and bolt["core_aten"] is None
