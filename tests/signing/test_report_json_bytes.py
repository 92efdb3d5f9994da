"""Step 8 by bytes: report.json must be the signed report as a kit writes it (canonical JSON, or
an older kit's indented layout), never another text of the same values.

The runs here are written by the kit's own report formats (canonical report.json). Each forgery
signs a
statement whose subject digest matches the forged report.json, so only step 8 stands between
it and a verified report.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from signing_helpers import REPORT, VENDOR, SignedRun

from kit.errors import VerificationError
from kit.formats.files import write_report_files
from kit.hashing import sha256_bytes
from kit.rundir import OPTIONAL_REPORT_FILES, report_files
from kit.signing.sign import sign_output_dir
from kit.signing.statement import parse_statement
from kit.strict_json import canonical_json, loads_strict
from kit.verification.verify import _is_signed_with, older_kit_layout


@pytest.fixture
def canonical_run(tmp_path: Path) -> SignedRun:
    run = SignedRun(root=tmp_path, run_dir=tmp_path / "run", keyring_dir=tmp_path / "keyring")
    write_report_files(REPORT, run.run_dir)
    _, key_path = run.new_key(VENDOR, VENDOR)
    sign_output_dir(run.run_dir, key_path, None)
    return run


def _report_json(run: SignedRun) -> Path:
    return run.run_dir / "report.json"


def _sign_with_report_json(run: SignedRun, forged: bytes) -> None:
    """report.json replaced by ``forged``; the signed statement keeps its report, and its
    report.json digest is the forged file's (step 7 passes)."""
    _report_json(run).write_bytes(forged)
    statement = run.statement()
    for subject in statement["subject"]:
        if subject["name"] == "report.json":
            subject["digest"]["sha256"] = sha256_bytes(forged)
    run.sign_raw(canonical_json(statement))


def test_the_kit_writes_report_json_in_the_signed_canonical_form(canonical_run: SignedRun):
    written = _report_json(canonical_run).read_bytes()
    payload = canonical_run.envelope().payload
    statement = parse_statement(loads_strict(payload), report_files(), OPTIONAL_REPORT_FILES)
    assert written == canonical_json(REPORT) + b"\n"
    assert _is_signed_with(payload, statement, written.removesuffix(b"\n"))
    assert canonical_run.verify().vendor == VENDOR


def test_an_older_kits_indented_report_json_still_verifies(canonical_run: SignedRun):
    _sign_with_report_json(canonical_run, older_kit_layout(REPORT))
    assert canonical_run.verify().vendor == VENDOR


def test_the_older_kits_layout_is_what_it_wrote() -> None:
    # kit/formats/json_format.py before 487bd48: ``json.dumps(report, indent=2, sort_keys=True,
    # ensure_ascii=False, allow_nan=False)`` and a newline.
    older = older_kit_layout(REPORT)
    assert older.startswith(b'{\n  "') and older.endswith(b"\n}\n")
    assert json.loads(older) == REPORT


def same_values_indented_otherwise(original: bytes) -> bytes:
    return (json.dumps(REPORT, indent=3, sort_keys=True) + "\n").encode()


def same_values_in_another_key_order(original: bytes) -> bytes:
    return (json.dumps(dict(reversed(list(REPORT.items()))), separators=(",", ":")) + "\n").encode()


def same_values_with_characters_escaped(original: bytes) -> bytes:
    return original.replace(b'"vendor"', b'"\\u0076endor"', 1)


def same_values_with_a_number_spelled_otherwise(original: bytes) -> bytes:
    return original.replace(b'"timeout_s":60.0', b'"timeout_s":6e1', 1)


def same_values_without_the_final_newline(original: bytes) -> bytes:
    return original.removesuffix(b"\n")


SAME_VALUES: list[Callable[[bytes], bytes]] = [
    same_values_indented_otherwise,
    same_values_in_another_key_order,
    same_values_with_characters_escaped,
    same_values_with_a_number_spelled_otherwise,
    same_values_without_the_final_newline,
]


@pytest.mark.parametrize("retext", SAME_VALUES, ids=[f.__name__ for f in SAME_VALUES])
def test_a_report_json_retexted_to_the_same_values_is_rejected_at_step_8(
    canonical_run: SignedRun, retext: Callable[[bytes], bytes]
):
    original = _report_json(canonical_run).read_bytes()
    retexted = retext(original)
    assert retexted != original and loads_strict(retexted, what="x") == REPORT
    _sign_with_report_json(canonical_run, retexted)
    refusal = r"^step 8: report\.json is not the signed report as the kit writes it"
    with pytest.raises(VerificationError, match=refusal) as caught:
        canonical_run.verify()
    assert "the same values in other text" in str(caught.value)
    assert "\n" not in str(caught.value)


def canonical_bytes_of_another_report(original: bytes) -> bytes:
    other = copy.deepcopy(REPORT)
    other["records"][0]["status"] = "PASS" if other["records"][0]["status"] != "PASS" else "FAIL"
    return canonical_json(other) + b"\n"


def signed_report_followed_by_a_second_value(original: bytes) -> bytes:
    return original.removesuffix(b"\n") + b"{}\n"


def signed_report_cut_short(original: bytes) -> bytes:
    return original[: len(original) // 2]


def signed_report_with_one_key_twice(original: bytes) -> bytes:
    return original.replace(b'"grade":{', b'"grade":{"name":"conformant",', 1)


FORGERIES: list[Callable[[bytes], bytes]] = [
    canonical_bytes_of_another_report,
    signed_report_followed_by_a_second_value,
    signed_report_cut_short,
    signed_report_with_one_key_twice,
]


@pytest.mark.parametrize("forge", FORGERIES, ids=[f.__name__ for f in FORGERIES])
def test_a_forged_report_json_is_rejected_at_step_8(
    canonical_run: SignedRun, forge: Callable[[bytes], bytes]
):
    original = _report_json(canonical_run).read_bytes()
    forged = forge(original)
    assert forged != original
    _sign_with_report_json(canonical_run, forged)
    with pytest.raises(VerificationError, match=r"^step 8: report\.json") as caught:
        canonical_run.verify()
    assert "\n" not in str(caught.value)
