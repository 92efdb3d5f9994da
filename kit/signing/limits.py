"""Bounds on what ``ckit verify`` reads: nothing an attacker hands it may cost unbounded time or
memory.

The limits are generous: a complete run of standard v1 (about 10,600 records) writes a report.json
of a few MB, and its envelope (the report again, base64) a little more. Each signed file's bound is
``kit.rundir.MAX_SUBJECT_BYTES`` (report readers share it); a JSON document's depth,
``kit.strict_json.MAX_JSON_DEPTH``.
"""

from __future__ import annotations

_MiB = 1 << 20

#: The envelope file: the report's statement in base64, plus signatures.
MAX_ENVELOPE_BYTES = 48 * _MiB
#: The decoded payload (the in-toto statement holding the report).
MAX_PAYLOAD_BYTES = 32 * _MiB
#: A report is signed by its vendor's keys; a handful covers key rotation and co-signing.
MAX_SIGNATURES = 16
