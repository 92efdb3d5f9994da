"""The ``body`` report format (standard v3's ``report_format``): written, signed, verified.

Each attack is a test named after it; each refusal is one line naming its step, and what a
verifier would refuse is never signed.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from body_helpers import (  # noqa: E402
    VENDOR,
    SignedBody,
    body_report,
    signed_body,
    vendor_key,
)

from kit.errors import InputError, VerificationError  # noqa: E402
from kit.formats.derived import body_derived  # noqa: E402
from kit.hashing import sha256_bytes  # noqa: E402
from kit.report.body import decode_body, encode_body, write_body_files  # noqa: E402
from kit.rundir import BODY_FILES, RECORDS_JSONL, REPORT_HEAD  # noqa: E402
from kit.signing.body_statement import BODY_PREDICATE_TYPE, BodyClaim  # noqa: E402
from kit.signing.dsse import Envelope, decode_envelope  # noqa: E402
from kit.signing.keys import load_private_key  # noqa: E402
from kit.signing.sign import sign_output_dir, sign_payload  # noqa: E402
from kit.signing.statement import PAYLOAD_TYPE, STATEMENT_TYPE  # noqa: E402
from kit.standard import load_standard  # noqa: E402
from kit.strict_json import canonical_json  # noqa: E402
from kit.verification.content_cache import ContentCache  # noqa: E402

pytestmark = pytest.mark.usefixtures("private_config")


@pytest.fixture(scope="module")
def report() -> dict:
    return body_report()


@pytest.fixture
def signed(tmp_path: Path, report: dict) -> SignedBody:
    return signed_body(tmp_path, report)


def forge_signature(signed: SignedBody, statement: dict) -> None:
    """Sign ``statement`` with the vendor's own key, as a dishonest vendor can: what the
    verifier refuses then is the content, not the signature."""
    key = load_private_key(signed.key_path, None)
    payload = canonical_json(statement)
    signature = sign_payload(key, PAYLOAD_TYPE, payload)
    signed.envelope.write_bytes(Envelope(PAYLOAD_TYPE, payload, (signature,)).to_bytes())


def statement_over(signed: SignedBody, claim: BodyClaim | None = None) -> dict:
    """A body statement over the body files as they are now (the vendor signs what it wrote)."""
    head = json.loads((signed.run_dir / REPORT_HEAD).read_bytes())
    subjects = [{"name": name, "digest": {"sha256": sha256_bytes((signed.run_dir / name)
                                                                 .read_bytes())}}
                for name in BODY_FILES]
    return {"_type": STATEMENT_TYPE, "subject": subjects, "predicateType": BODY_PREDICATE_TYPE,
            "predicate": (claim or BodyClaim.of_head(head)).predicate()}


def refused(signed: SignedBody, step: int) -> str:
    with pytest.raises(VerificationError) as caught:
        signed.verify()
    message = str(caught.value)
    assert message.startswith(f"step {step}: "), message
    assert "\n" not in message
    return message


def test_standards_declare_their_report_format() -> None:
    assert [load_standard(v).report_format for v in ("v1", "v2", "v3")] == \
        ["report-json", "report-json", "body"]


def test_body_verifies_and_names_only_the_body_files(signed: SignedBody) -> None:
    verified = signed.verify()
    assert verified.vendor == VENDOR
    assert [subject.name for subject in verified.subjects] == list(BODY_FILES)
    assert verified.report is not None and verified.grade_name == verified.report.grade.name
    assert sorted(p.name for p in signed.run_dir.iterdir()) == sorted(
        [*BODY_FILES, signed.envelope.name])
    # The statement is small: the report is not inside it.
    assert signed.envelope.stat().st_size < 2000


def test_body_is_canonical_and_renders_the_derived_files_on_demand(report: dict) -> None:
    encoded = encode_body(report)
    body = decode_body(encoded)
    assert body.document() == json.loads(canonical_json(report))
    assert encoded[RECORDS_JSONL].count(b"\n") == len(report["records"])
    derived = body_derived(body)
    assert set(derived) == {"junit.xml", "results.csv", "summary.md"}


def test_body_swapped_after_signing_is_refused(signed: SignedBody, tmp_path: Path) -> None:
    other = body_report(records=[])  # another honest body, never signed
    records = encode_body(other)[RECORDS_JSONL]
    (signed.run_dir / RECORDS_JSONL).write_bytes(records)
    assert "records.jsonl was modified after signing" in refused(signed, 7)


def test_head_edited_after_signing_is_refused(signed: SignedBody) -> None:
    path = signed.run_dir / REPORT_HEAD
    path.write_bytes(path.read_bytes().replace(b'"not-certifiable"', b'"conformant"'))
    assert "report.head.json was modified after signing" in refused(signed, 7)


def test_duplicate_key_in_a_record_is_refused(signed: SignedBody) -> None:
    path = signed.run_dir / RECORDS_JSONL
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"status":"PASS"', b'"status":"FAIL_NUMERIC","status":"PASS"')
    path.write_bytes(b"\n".join(lines))
    forge_signature(signed, statement_over(signed))
    message = refused(signed, 8)
    assert "records.jsonl line 2: not canonical JSON" in message


def test_duplicate_key_in_the_head_is_refused(signed: SignedBody) -> None:
    path = signed.run_dir / REPORT_HEAD
    path.write_bytes(path.read_bytes().replace(b'{"environment"', b'{"grade":{},"environment"', 1))
    forge_signature(signed, statement_over(signed))
    assert "report.head.json: not canonical JSON" in refused(signed, 8)


def test_body_with_a_duplicate_key_is_never_signed(signed: SignedBody) -> None:
    path = signed.run_dir / RECORDS_JSONL
    twice = b'"status":"PASS","status":"PASS"'
    path.write_bytes(path.read_bytes().replace(b'"status":"PASS"', twice, 1))
    before = signed.envelope.read_bytes()
    with pytest.raises(InputError, match="nothing signed: records.jsonl line 2: not canonical"):
        signed.sign()
    assert signed.envelope.read_bytes() == before


def test_manifest_naming_an_absent_file_is_refused(signed: SignedBody) -> None:
    (signed.run_dir / RECORDS_JSONL).unlink()
    assert "subject file records.jsonl is missing" in refused(signed, 7)


def test_statement_leaving_out_a_body_file_is_refused(signed: SignedBody) -> None:
    statement = statement_over(signed)
    statement["subject"] = statement["subject"][:1]
    forge_signature(signed, statement)
    assert "statement lacks subject 'records.jsonl'" in refused(signed, 5)


def test_oversized_body_is_refused(signed: SignedBody, monkeypatch: pytest.MonkeyPatch) -> None:
    import kit.verification.verify as verify

    monkeypatch.setattr(verify, "MAX_SUBJECT_BYTES", 1000)
    assert "over the limit" in refused(signed, 7)


def test_oversized_body_is_never_signed(signed: SignedBody,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import kit.signing.sign as sign

    monkeypatch.setattr(sign, "MAX_SUBJECT_BYTES", 1000)
    before = signed.envelope.read_bytes()
    with pytest.raises(InputError, match="nothing signed: .*over the limit"):
        signed.sign()
    assert signed.envelope.read_bytes() == before


def test_head_naming_another_vendor_than_the_statement_is_refused(signed: SignedBody) -> None:
    head = json.loads((signed.run_dir / REPORT_HEAD).read_bytes())
    claim = BodyClaim.of_head(head)
    forged = BodyClaim(claim.kit_version, claim.vendor_id, claim.display_name,
                       claim.standard_version, claim.torch_release,
                       (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)).isoformat())
    forge_signature(signed, statement_over(signed, forged))
    assert "report.head.json says finished_at" in refused(signed, 8)


def test_body_of_a_standard_declaring_report_json_is_refused(tmp_path: Path,
                                                             report: dict) -> None:
    head = dict(report, standard={"version": "v2",
                                  "torch_release": load_standard("v2").torch_release})
    key_path, keyring = vendor_key(tmp_path)
    write_body_files(head, tmp_path / "run")
    sign_output_dir(tmp_path / "run", key_path, None)
    message = refused(SignedBody(tmp_path / "run", keyring, key_path), 9)
    assert "declares the report-json format" in message


def test_body_claiming_a_better_grade_is_refused(signed: SignedBody, tmp_path: Path,
                                                  report: dict) -> None:
    better = dict(report, grade={"name": "conformant", "reasons": []})
    run = tmp_path / "better"
    write_body_files(better, run)
    sign_output_dir(run, signed.key_path, None)
    message = refused(SignedBody(run, signed.keyring, signed.key_path), 12)
    assert "claims grade 'conformant'" in message


def test_content_verdict_is_recorded_once_per_payload(signed: SignedBody, tmp_path: Path) -> None:
    cache = ContentCache(tmp_path / "verdicts")
    first = signed.verify(cache=cache)
    assert first.report is not None  # checked, and recorded
    again = signed.verify(cache=cache)
    assert again.report is None and again.content == first.content  # read back
    # A recorded verdict never covers other bytes: a body changed since fails its digest.
    other = encode_body(body_report(records=[]))[RECORDS_JSONL]
    (signed.run_dir / RECORDS_JSONL).write_bytes(other)
    with pytest.raises(VerificationError, match="^step 7: "):
        signed.verify(cache=cache)


def test_failed_verdict_is_recorded_and_refused_again(signed: SignedBody, tmp_path: Path,
                                                       report: dict) -> None:
    better = dict(report, grade={"name": "conformant", "reasons": []})
    run = tmp_path / "better"
    write_body_files(better, run)
    sign_output_dir(run, signed.key_path, None)
    liar = SignedBody(run, signed.keyring, signed.key_path)
    cache = ContentCache(tmp_path / "verdicts")
    for _ in range(2):
        with pytest.raises(VerificationError, match="^step 12: "):
            liar.verify(cache=cache)


def test_verdict_filed_for_another_payload_passes_nothing(signed: SignedBody, tmp_path: Path,
                                                          report: dict) -> None:
    """A verdict copied under a lying payload's name is not a record of that payload."""
    cache = ContentCache(tmp_path / "verdicts")
    honest = signed.verify(cache=cache)
    better = dict(report, grade={"name": "conformant", "reasons": []})
    run = tmp_path / "better"
    write_body_files(better, run)
    sign_output_dir(run, signed.key_path, None)
    envelope = decode_envelope(json.loads((run / "report.dsse.json").read_bytes()))
    liar_payload = sha256_bytes(envelope.payload)
    recorded = next((tmp_path / "verdicts").rglob(f"{honest.payload_sha256}.json"))
    forged = recorded.parent / f"{liar_payload}.json"
    forged.write_bytes(recorded.read_bytes())
    with pytest.raises(VerificationError, match="^step 12: "):
        SignedBody(run, signed.keyring, signed.key_path).verify(cache=cache)


def test_report_json_of_a_standard_declaring_body_is_refused(tmp_path: Path, report: dict
                                                             ) -> None:
    """A v3 report written as report.json (the other format) verifies under no rules."""
    from kit.formats.files import render_files
    from kit.verification.verify import verify_envelope

    key_path, keyring = vendor_key(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    for name, data in render_files(report).items():
        (run / name).write_bytes(data)
    sign_output_dir(run, key_path, None)
    with pytest.raises(VerificationError, match="^step 9: standard v3 declares the body format"):
        verify_envelope(run, keyring_dir=keyring)


def test_verify_envelope_takes_a_body_and_checks_it_in_full(signed: SignedBody) -> None:
    from kit.verification.verify import verify_envelope

    verified = verify_envelope(signed.envelope, keyring_dir=signed.keyring)
    assert verified.vendor == VENDOR and len(verified.content.records) > 1
    assert verified.report["records"][0]["id"] == verified.content.records[0].id



#: Run in a fresh interpreter (this test process froze its start-up heap, as kit children do),
#: the collector paused as verify pauses it: whether the checked report and its document are in
#: the collector's oldest generation when the checks return, and whether its first and last
#: records are left out of every collection (decoded untracked: they hold no cycle).
_GENERATION_OF_RECORDS = """
import datetime as dt, gc, sys
from pathlib import Path
from kit.grading.released import load_released_kits
from kit.verification.body_content import check_body_content
from kit.verification.verify import verify_body_integrity
assert gc.get_freeze_count() == 0
checked = verify_body_integrity(Path(sys.argv[1]), Path(sys.argv[2]))
gc.disable()
_, report = check_body_content(checked.files, checked.statement.claim,
                               now=dt.datetime.now(dt.UTC), released_kits=load_released_kits())
oldest = gc.get_objects(generation=2)
print(*(any(found is obj for found in oldest) for obj in (report, report.document)),
      *(not gc.is_tracked(obj) for obj in (report.read_records[0], report.read_records[-1])))
"""


def test_checked_report_is_left_out_of_the_young_collections(signed: SignedBody) -> None:
    """What the content checks made goes to the collector's oldest generation unscanned: the
    young collections after them never walk a whole run's records (a full one still may)."""
    found = subprocess.run([sys.executable, "-c", _GENERATION_OF_RECORDS, str(signed.envelope),
                            str(signed.keyring)], capture_output=True, text=True, check=True)
    assert found.stdout.split() == ["True"] * 4


def test_frozen_heap_stays_frozen_through_the_checks(signed: SignedBody) -> None:
    """A kit child's start-up heap, frozen (``kit.runner.heap``; this test process's too), is
    not thawed by a check."""
    assert gc.get_freeze_count() > 0
    assert signed.verify().report is not None
    assert gc.get_freeze_count() > 0
