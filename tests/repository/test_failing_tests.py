"""The 72-hour rule per test: each failing test's streak, from a vendor's signed history.

Submissions are real (reports built by the kit, signed, filed and verified:
tests/portal/submission_helpers.py), small (deploy and the eager models), and dated hours before
``NOW``. acme's history, oldest first:

- 120h: gpt2 fails (it never passes again: past the window);
- 100h: gpt2 and t5 fail;
- 90h: a run of the deploy tier alone: no record of any model, so no streak ends or starts;
- 60h: gpt2 fails, bert fails (t5 fixed);
- 45h: gpt2 fails, bert passes (fixed: its streak ends);
- 5h: gpt2 fails, bert fails again (a new streak), llama fails (new).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "portal"))

from submission_helpers import (  # noqa: E402
    NOW,
    SMALL_SELECT,
    Repository,
    Run,
    audit,
    failing_models,
    hours_before,
)

from kit.cli.cmd_gate import failing_test_lines, gate_lines  # noqa: E402
from kit.portal.builder import render_site  # noqa: E402
from kit.repository.gate import (  # noqa: E402
    GatePolicy,
    Verdict,
    evaluate_gate,
    parse_gate_policy,
    with_test_window,
)
from kit.results import Status  # noqa: E402

GPT2, T5, BERT, LLAMA = (f"models/hf/{m}/eager" for m in ("gpt2", "t5", "bert", "llama"))
HISTORY = (
    (120, (GPT2,)),
    (100, (GPT2, T5)),
    (60, (GPT2, BERT)),
    (45, (GPT2,)),
    (5, (GPT2, BERT, LLAMA)),
)


@pytest.fixture(autouse=True)
def private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("CKIT_SIGNING_KEY", raising=False)


def _policy(**changes: object) -> GatePolicy:
    """A gate judging these small runs on their models tier alone."""
    policy = {"min_pass_rate": {"models": 0.8}, "min_grade": "non-conformant",
              "required_vendors": ["acme"], "max_failing_age_hours": 72, **changes}
    return parse_gate_policy(policy, Path("gate.yaml"))


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    repo = Repository(tmp_path / "repo")
    for hours, failing in HISTORY:
        run = Run("acme", hours_before(NOW, hours), select=SMALL_SELECT,
                  outcomes=failing_models(*failing))
        repo.submit(run)
    repo.submit(Run("acme", hours_before(NOW, 90), select=("deploy/*",)))
    return repo


def test_each_failing_test_starts_at_its_unbroken_streak(repo: Repository) -> None:
    (acme,) = evaluate_gate(audit(repo), "2.13", _policy(), NOW).vendors
    # 3 of the 21 eager models fail: 85.71%, above this policy's 80%.
    assert acme.verdict is Verdict.PASSES
    streaks = [(t.test_id, t.status, t.first_failed, t.hours, t.breach)
               for t in acme.failing_tests]
    assert streaks == [
        (GPT2, Status.FAIL_NUMERIC, hours_before(NOW, 120), 120, True),
        (BERT, Status.FAIL_NUMERIC, hours_before(NOW, 5), 5, False),
        (LLAMA, Status.FAIL_NUMERIC, hours_before(NOW, 5), 5, False),
    ]
    assert [t.test_id for t in acme.breaches] == [GPT2]
    first = acme.failing_tests[0].first_submission
    assert first.run_id.startswith(hours_before(NOW, 120).strftime("%Y%m%dT%H%M"))


def test_breaches_are_shown_and_gate_only_when_asked(repo: Repository) -> None:
    shown = evaluate_gate(audit(repo), "2.13", _policy(), NOW)
    assert shown.open  # the policy's window only clocks the vendor, which passes
    gated = evaluate_gate(audit(repo), "2.13", with_test_window(_policy(), 72), NOW)
    (acme,) = gated.vendors
    assert acme.verdict is Verdict.PASSES and acme.blocks_release and not gated.open
    longer = evaluate_gate(audit(repo), "2.13", with_test_window(_policy(), 121), NOW)
    assert longer.open and not longer.vendors[0].breaches
    # A vendor the release does not require never closes it on a test.
    optional = with_test_window(_policy(required_vendors=["bolt"]), 72)
    assert not next(v for v in evaluate_gate(audit(repo), "2.13", optional, NOW).vendors
                    if v.vendor == "acme").blocks_release


def test_gate_lists_the_count_and_the_oldest_few(repo: Repository) -> None:
    result = evaluate_gate(audit(repo), "2.13", with_test_window(_policy(), 72), NOW)
    (acme,) = result.vendors
    assert failing_test_lines(acme, 72) == [
        "acme: 3 failing tests, 1 past the 72h window (closes the gate); oldest first:",
        f"  {GPT2}  FAIL_NUMERIC  failing since 2026-11-15 12:00Z (120h)  PAST WINDOW",
        f"  {BERT}  FAIL_NUMERIC  failing since 2026-11-20 07:00Z (5h)",
        f"  {LLAMA}  FAIL_NUMERIC  failing since 2026-11-20 07:00Z (5h)",
    ]
    assert gate_lines(result)[-1] == "gate: CLOSED"
    document = json.loads(json.dumps(result.to_json()))
    assert document["policy"]["close_on_test_breach"] is True
    (vendor,) = document["vendors"]
    assert vendor["breaches"] == 1
    assert vendor["failing_tests"][0] == {
        "test_id": GPT2, "status": "FAIL_NUMERIC", "first_failed": "2026-11-15T12:00:00+00:00",
        "first_submission": str(acme.failing_tests[0].first_submission), "hours": 120,
        "breach": True,
    }


def test_a_canary_run_is_listed_never_history(repo: Repository) -> None:
    # Newest of all, and failing gpt2's neighbour: were it counted, it would be the latest.
    canary = repo.submit(Run("acme", hours_before(NOW, 1), select=SMALL_SELECT, canary=True,
                             outcomes=failing_models(T5)))
    result = evaluate_gate(audit(repo), "2.13", _policy(), NOW)
    (acme,) = result.vendors
    assert acme.latest is not None and acme.latest.key != canary
    assert [t.test_id for t in acme.failing_tests] == [GPT2, BERT, LLAMA]
    assert result.canaries[0].key == canary and not result.rejected
    line = f"canary {canary}: not counted (a canary run is never a certificate)"
    assert line in gate_lines(result)


def test_portal_vendor_page_lists_first_failures_and_the_canary_apart(repo: Repository) -> None:
    canary = repo.submit(Run("acme", hours_before(NOW, 1), select=SMALL_SELECT, canary=True))
    files = render_site(audit(repo), with_test_window(_policy(), 72), NOW)
    index = files["index.html"].decode()
    assert '<td class="num fail"><a href="vendors/acme.html#failing-2.13">1</a></td>' in index
    page = files["vendors/acme.html"].decode()
    table = page.split('<table class="failing">', 1)[1].split("</table>", 1)[0]
    rows = table.split("<tr")[2:]
    assert [GPT2 in rows[0], BERT in rows[1], LLAMA in rows[2]] == [True, True, True]
    assert rows[0].startswith(' class="fail"') and "2026-11-15 12:00 UTC" in rows[0]
    assert "⚠ breach" in rows[0] and "⚠ breach" not in rows[1] + rows[2]
    # Listed with its audit, marked; the release's latest result is still the 5-hour one.
    listed = next(row for row in page.split("<tr") if f"{canary.run_id}.html" in row)
    assert "canary, not counted" in listed
    assert "latest result (kit 0.1.0, finished 2026-11-20T07:00" in page
