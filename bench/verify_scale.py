"""Benchmark: ``ckit verify`` answers a hostile envelope fast.

Issue 12's probe: verify was quadratic in signatures (40,000 signatures, 8.5 MB: 158 s; 200,000:
over 600 s). This builds a ~10 MB envelope holding one valid signature by a keyring key followed by
junk signatures (200,000 in all) over a real in-toto statement, then times ``ckit verify`` on it
in a subprocess, start-up included, and ``verify_envelope`` alone in this process. The goal is
under 1 s; a rejection counts as an answer. It
also times the 40,000-signature envelope of the probe, and 200,000 signatures given as strings
rather than objects (they escape the cheap object count, so the whole list is parsed). Usage:

    .venv/bin/python bench/verify_scale.py [--signatures N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kit.errors import KitError
from kit.rundir import ENVELOPE_NAME, report_files
from kit.signing.dsse import b64encode
from kit.signing.keyring import add_public_key
from kit.signing.keys import generate_private_key
from kit.signing.sign import sign_payload
from kit.signing.statement import PAYLOAD_TYPE, Subject, build_statement
from kit.strict_json import canonical_json
from kit.verification.verify import verify_envelope

GOAL_S = 1.0
TARGET_BYTES = 10 * 1024 * 1024
VENDOR = "acme"


@dataclass(frozen=True)
class Timing:
    shape: str
    signatures: int
    envelope_bytes: int
    #: ``ckit verify`` in a subprocess, interpreter and kit start-up included.
    wall_s: float
    #: ``verify_envelope`` alone, in this process: the work the envelope's size can drive.
    in_process_s: float
    exit_code: int
    answer: str


def _payload() -> bytes:
    report = {"vendor": {"id": VENDOR}, "grade": {"name": "conformant", "reasons": []}}
    subjects = [Subject(name, "0" * 64) for name in report_files()]
    return canonical_json(build_statement(subjects, report).to_json())


def _junk_signature(index: int, sig_bytes: int) -> dict[str, str]:
    return {"keyid": f"{index:012x}", "sig": b64encode(index.to_bytes(sig_bytes, "big"))}


def write_envelope(directory: Path, keyring: Path, count: int, shape: str) -> Path:
    """An envelope of about ``TARGET_BYTES``: one valid signature, then ``count - 1`` junk ones.

    ``shape`` "objects": junk ``{keyid, sig}`` objects; "strings": junk strings, which dodge the
    cheap count of objects, so verify must parse the whole list before it can refuse it.
    """
    key = generate_private_key()
    add_public_key(keyring, VENDOR, key.public_key())
    payload = _payload()
    valid = sign_payload(key, PAYLOAD_TYPE, payload)
    # Size each junk signature so the whole envelope lands near the target.
    per_signature = max(8, (TARGET_BYTES - len(payload) * 4 // 3) // count - 30)
    sig_bytes = max(8, per_signature * 3 // 4)
    signatures: list[object] = [
        {"keyid": valid.keyid, "sig": base64.b64encode(valid.sig).decode("ascii")}
    ]
    if shape == "objects":
        signatures += [_junk_signature(i, sig_bytes) for i in range(1, count)]
    else:
        signatures += [_junk_signature(i, sig_bytes + 20)["sig"] for i in range(1, count)]
    document = {"payloadType": PAYLOAD_TYPE, "payload": b64encode(payload),
                "signatures": signatures}
    path = directory / ENVELOPE_NAME
    path.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
    return path


def time_in_process(envelope: Path, keyring: Path) -> float:
    started = time.perf_counter()
    try:
        verify_envelope(envelope, keyring_dir=keyring)
    except KitError:
        pass  # a rejection is an answer
    return time.perf_counter() - started


def time_verify(envelope: Path, keyring: Path, count: int, shape: str) -> Timing:
    command = [sys.executable, "-m", "kit", "verify", str(envelope), "--keyring", str(keyring)]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=900)
    wall = time.perf_counter() - started
    answer = (result.stdout + result.stderr).strip().splitlines()
    return Timing(shape, count, envelope.stat().st_size, wall, time_in_process(envelope, keyring),
                  result.returncode, answer[0] if answer else "")


def run(count: int, shape: str, root: Path) -> Timing:
    directory = root / f"{count}-{shape}"
    directory.mkdir(parents=True)
    keyring = directory / "keyring"
    envelope = write_envelope(directory, keyring, count, shape)
    return time_verify(envelope, keyring, count, shape)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signatures", type=int, default=200_000)
    parser.add_argument("--keep", type=Path, help="build the envelopes here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ckit-verify-scale-") as temp:
        root = args.keep or Path(temp)
        cases = [(40_000, "objects"), (args.signatures, "objects"), (args.signatures, "strings")]
        timings = [run(count, shape, root) for count, shape in cases]
    for timing in timings:
        print(f"{timing.signatures:>7} signatures as {timing.shape:7}, "
              f"{timing.envelope_bytes / 2**20:5.1f} MiB: ckit verify took {timing.wall_s:.2f} s "
              f"(exit {timing.exit_code}; in process {timing.in_process_s:.2f} s)")
        print(f"        {timing.answer}")
    worst = max(timing.wall_s for timing in timings)
    verdict = "met" if worst < GOAL_S else "MISSED"
    print(f"goal: under {GOAL_S:.0f} s each, start-up included: {verdict} (slowest {worst:.2f} s)")
    print(f"start-up alone (ckit --version): {startup_s():.2f} s")
    return 0 if worst < GOAL_S else 1


def startup_s() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kit", "--version"], capture_output=True, check=False)
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
