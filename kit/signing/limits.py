"""Bounds on what ``ckit verify`` reads: nothing an attacker hands it may cost unbounded time or
memory.

The limits are generous: a complete run of standard v1 (about 10,600 records) writes a report.json
of a few MB, and its envelope (the report again, base64) a little more.
"""

from __future__ import annotations

_MiB = 1 << 20

#: The envelope file: the report's statement in base64, plus signatures.
MAX_ENVELOPE_BYTES = 48 * _MiB
#: The decoded payload (the in-toto statement holding the report).
MAX_PAYLOAD_BYTES = 32 * _MiB
#: Each report file the statement names (report.json, junit.xml, results.csv, summary.md).
MAX_SUBJECT_BYTES = 64 * _MiB
#: A report is signed by its vendor's keys; a handful covers key rotation and co-signing.
MAX_SIGNATURES = 16
#: How deep a JSON document the kit reads may nest: a report nests about 6 deep. Far deeper
#: (a 988-deep report) would exhaust the recursion of whatever walks it next (the canonical
#: encoding ``ckit sign`` hashes) and end in an internal error instead of one line.
MAX_JSON_DEPTH = 64
