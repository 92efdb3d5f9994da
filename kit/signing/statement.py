"""The in-toto Statement v1 a run signs: the report files' digests plus the report itself."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import kit
from kit.errors import VerificationError
from kit.json_shape import exact_object

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://accelerator-conformance-kit.dev/conformance-report/v1"
#: The verifier refuses any other predicate: it would not know what the statement claims.
KNOWN_PREDICATE_TYPES = frozenset({PREDICATE_TYPE})
PAYLOAD_TYPE = "application/vnd.in-toto+json"

_STATEMENT_FIELDS = frozenset({"_type", "subject", "predicateType", "predicate"})
_SUBJECT_FIELDS = frozenset({"name", "digest"})
_DIGEST_FIELDS = frozenset({"sha256"})
_PREDICATE_FIELDS = frozenset({"kit_version", "report"})
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Subject:
    name: str
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "digest": {"sha256": self.sha256}}


@dataclass(frozen=True)
class Statement:
    subjects: tuple[Subject, ...]
    predicate_type: str
    kit_version: str
    report: dict[str, Any]

    @property
    def vendor_id(self) -> str:
        return str(self.report["vendor"]["id"])

    def to_json(self) -> dict[str, Any]:
        return {
            "_type": STATEMENT_TYPE,
            "subject": [subject.to_json() for subject in self.subjects],
            "predicateType": self.predicate_type,
            "predicate": {"kit_version": self.kit_version, "report": self.report},
        }


def _report_kit_version(report: dict[str, Any]) -> str | None:
    section = report.get("kit")
    version = section.get("version") if isinstance(section, dict) else None
    return version if isinstance(version, str) else None


def build_statement(subjects: Sequence[Subject], report: dict[str, Any]) -> Statement:
    """The predicate names the kit the report names (the kit that judged the run), this kit
    where the report names none: the two must agree for a verifier (``parse_statement``)."""
    return Statement(
        subjects=tuple(subjects),
        predicate_type=PREDICATE_TYPE,
        kit_version=_report_kit_version(report) or kit.__version__,
        report=report,
    )


def _parse_subject(value: Any, index: int) -> Subject:
    where = f"statement subject[{index}]"
    fields = exact_object(value, _SUBJECT_FIELDS, where)
    name = fields["name"]
    if not isinstance(name, str) or not name:
        raise VerificationError(f"{where} name must be a non-empty string")
    digest = exact_object(fields["digest"], _DIGEST_FIELDS, f"{where} digest")
    sha256 = digest["sha256"]
    if not isinstance(sha256, str) or not _SHA256_HEX.fullmatch(sha256):
        raise VerificationError(f"{where} sha256 must be 64 lower-case hex digits")
    return Subject(name=name, sha256=sha256)


def parse_subjects(
    value: Any, required_names: Sequence[str], optional_names: Sequence[str]
) -> tuple[Subject, ...]:
    if not isinstance(value, list):
        raise VerificationError("statement subject must be a list")
    subjects = tuple(_parse_subject(item, i) for i, item in enumerate(value))
    names = [subject.name for subject in subjects]
    for name in names:
        if name not in required_names and name not in optional_names:
            raise VerificationError(f"statement names unexpected subject {name!r}")
        if names.count(name) > 1:
            raise VerificationError(f"statement names subject {name!r} twice")
    for name in required_names:
        if name not in names:
            raise VerificationError(f"statement lacks subject {name!r} (every report file)")
    return subjects


def _parse_report(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise VerificationError("statement predicate.report must be a JSON object")
    vendor = value.get("vendor")
    if not isinstance(vendor, dict) or not isinstance(vendor.get("id"), str):
        raise VerificationError("statement predicate.report lacks vendor.id")
    return value


def parse_statement(
    document: Any, required_subjects: Sequence[str], optional_subjects: Sequence[str] = ()
) -> Statement:
    """Check the Statement v1 shape and our predicate; raise ``VerificationError`` otherwise.

    Every required subject must be named; an optional one (the golden manifest) may be."""
    fields = exact_object(document, _STATEMENT_FIELDS, "statement")
    if fields["_type"] != STATEMENT_TYPE:
        raise VerificationError(f"statement _type {fields['_type']!r} is not {STATEMENT_TYPE}")
    predicate_type = fields["predicateType"]
    if not isinstance(predicate_type, str) or predicate_type not in KNOWN_PREDICATE_TYPES:
        raise VerificationError(f"unknown predicateType {predicate_type!r}")
    subjects = parse_subjects(fields["subject"], required_subjects, optional_subjects)
    predicate = exact_object(fields["predicate"], _PREDICATE_FIELDS, "statement predicate")
    kit_version = predicate["kit_version"]
    if not isinstance(kit_version, str):
        raise VerificationError("statement predicate.kit_version must be a string")
    report = _parse_report(predicate["report"])
    claimed = _report_kit_version(report)
    if claimed is not None and claimed != kit_version:
        # A reader trusting either would be told another kit than the other names.
        raise VerificationError(
            f"statement predicate.kit_version {kit_version!r} is not the report's kit.version "
            f"{claimed!r}"
        )
    return Statement(
        subjects=subjects,
        predicate_type=predicate_type,
        kit_version=kit_version,
        report=report,
    )
