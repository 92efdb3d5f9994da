"""``ckit merge``: join the shards of one run into one report, signed once."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kit.cli import add_command
from kit.cli.cmd_run import graded_exit_code, partial_of_report, qualified, say_report_files
from kit.errors import InputError
from kit.printable import printable

#: Missing tests named on the terminal before "and N more".
_SHOWN_MISSING = 5


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = add_command(
        subparsers,
        "merge",
        "join the shard reports of one run (ckit run --shard K/N) into one signed report",
        [
            "ckit merge results/cpu/shard-*-of-4 --out results/cpu/merged",
            "ckit merge run/shard-0-of-2 run/shard-1-of-2 --out run/merged --no-sign",
        ],
    )
    parser.epilog = (
        f"{parser.epilog}\n\nEach shard must be signed by its vendor's key (ckit run --shard "
        "signs as any run does).\nRefuses shards of different kit digests, standards, vendors, "
        "profiles, skip manifests or torch releases,\nduplicate or overlapping shards, and a "
        "missing shard, each with one line. Exits with the merged\nreport's grade code, as "
        "`ckit run` does."
    )
    parser.add_argument("shards", nargs="+", type=Path, metavar="SHARD_DIR",
                        help="the output directories of the N shards")
    parser.add_argument("--out", type=Path, required=True, help="new directory for the report")
    parser.add_argument("--keyring", type=Path, metavar="DIR",
                        help="keyring each shard's signature must verify with (default: the "
                        "kit's signing/keyring)")
    parser.add_argument("--no-sign", action="store_true", help="write an unsigned report")
    parser.add_argument("--key", help="private key (default: $CKIT_SIGNING_KEY or "
                        "<config>/ckit/keys/<vendor>.pem)")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from kit.formats import write_report_files
    from kit.runner.merge import merge_shards
    from kit.runner.outdir import claim_new_out_dir, refuse_dangling_link

    merged = merge_shards([Path(d) for d in args.shards], args.keyring)
    vendor_id = merged.report["vendor"]["id"]
    key = None if args.no_sign else _signing_key(args.key, vendor_id)  # before writing
    refuse_dangling_link(args.out)
    out = args.out.resolve()
    claim_new_out_dir(out)
    write_report_files(merged.report, out)
    envelope = _seal(out, key)
    grade = merged.report["grade"]["name"]
    _say_missing(merged.missing)
    records = len(merged.report["records"])
    print(f"merged {len(args.shards)} shard(s), {records} record(s): {out}", file=sys.stderr)
    say_report_files(out)  # in the format the shards' standard declares
    print(f"envelope: {envelope}", file=sys.stderr)
    partial = partial_of_report(merged.report)
    code = graded_exit_code(grade, partial)
    if args.json:
        print(json.dumps({"grade": grade, **qualified(partial), "exit_code": code,
                          "out_dir": str(out),
                          "records": records, "missing": list(merged.missing),
                          "envelope": str(envelope)}, indent=2, ensure_ascii=True))
    else:
        print(f"grade: {printable(partial.words() if partial is not None else grade)}")
    return code


def _signing_key(given: str | None, vendor_id: str) -> Path:
    from kit.signing.keys import default_key_path

    key = Path(given) if given else default_key_path(vendor_id)
    if not key.exists():
        raise InputError(f"no signing key for vendor {vendor_id} at {key}: pass --key PATH "
                         "(or --no-sign, then `ckit sign`)")
    return key


def _seal(out: Path, key: Path | None) -> Path:
    from kit.signing.keys import passphrase_from_env
    from kit.signing.sign import sign_output_dir, write_unsigned_envelope

    if key is None:
        return write_unsigned_envelope(out)
    return sign_output_dir(out, key, passphrase_from_env())


def _say_missing(missing: tuple[str, ...]) -> None:
    if not missing:
        return
    shown = ", ".join(printable(t) for t in missing[:_SHOWN_MISSING])
    more = f" and {len(missing) - _SHOWN_MISSING} more" if len(missing) > _SHOWN_MISSING else ""
    print(f"ckit merge: warning: {len(missing)} test(s) of the run have no record in any "
          f"shard: {shown}{more} (listed as missing in the report)", file=sys.stderr)
