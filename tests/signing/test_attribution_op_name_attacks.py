"""Attribution is the vendor process's word: a signer can write any ``details.dispatch`` it
likes. Verify (step 9) refuses an op name that is no operator of the report's torch release, as
the installed torch's dispatcher lists them (``kit.attribution.op_names``); real names, overloads
and packets alike, keep verifying. Each attack re-signs validly with the vendor's own key."""

from __future__ import annotations

import re
from typing import Any

import pytest
from signing_helpers import FAILING, SignedRun
from test_verify_content_attacks import recount, resign

from kit.cli import main
from kit.errors import ExitCode, VerificationError

HONEST = {"native": ["aten::add.Tensor"], "decomposed": ["aten::matmul"], "cpu": ["aten::ones"]}


def _claim(dispatch: dict[str, list[str]]) -> Any:
    def change(report: dict[str, Any]) -> None:
        for record in report["records"]:
            if record["id"] == FAILING:
                record["details"]["dispatch"] = dispatch
        recount(report)  # the summary agrees with the records: only the op name lies
    return change


def test_dispatch_naming_the_releases_operators_verifies(signed_run: SignedRun) -> None:
    resign(signed_run, _claim(HONEST))
    verified = signed_run.verify()
    assert verified.content.attribution is not None
    assert "aten::matmul" in verified.content.attribution.ops


def test_report_claiming_an_op_torch_does_not_have_is_refused(signed_run: SignedRun) -> None:
    resign(signed_run, _claim({"native": ["aten::add.Tensor", "aten::acme_fused_add"]}))
    with pytest.raises(VerificationError) as caught:
        signed_run.verify()
    message = str(caught.value)
    assert message.startswith(f"step 9: op names: {FAILING}'s details.dispatch names "
                              "'aten::acme_fused_add', not an operator of torch "), message
    assert "\n" not in message


def test_fallback_op_renamed_to_a_vendor_namespace_is_refused_by_the_cli(
    signed_run: SignedRun, capsys: pytest.CaptureFixture[str]
) -> None:
    # Moving the fallback's op out of sight under a name of the vendor's own.
    resign(signed_run, _claim({"native": ["acme::add.Tensor"], "fallback": ["aten::flop"]}))
    code = main(["verify", str(signed_run.run_dir), "--keyring", str(signed_run.keyring_dir)])
    out, err = capsys.readouterr()
    assert code == ExitCode.VERIFICATION_FAILED and out == ""
    assert re.fullmatch(r"ckit: error: step 9: op names: [^\n]+'acme::add\.Tensor', not an "
                        r"operator of torch [^\n]+ \(and 1 more\)[^\n]*\n", err), err
