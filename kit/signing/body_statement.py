"""The in-toto Statement v1 of a ``body``-format report: the body files' digests and a claim.

The statement of a ``report-json`` report carries the whole report (megabytes, parsed on every
verification). This one is a few hundred bytes: its subjects are the body files
(``kit.rundir.BODY_FILES``, and the golden manifest when the run wrote one) and its predicate
the little a verifier needs before any content is read: who the report is for (the vendor
binding, the display name), when the run finished (the time a key is judged at), the standard
and the kit. The content checks, once per signed digest, hold the body's head to the same
claim (``BodyClaim.of_head``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kit.errors import VerificationError
from kit.json_shape import exact_object
from kit.rundir import BODY_FILES, OPTIONAL_REPORT_FILES
from kit.signing.statement import STATEMENT_TYPE, Statement, Subject, parse_subjects
from kit.standard import BODY_FORMAT

BODY_PREDICATE_TYPE = "https://accelerator-conformance-kit.dev/conformance-report-body/v1"

_STATEMENT_FIELDS = frozenset({"_type", "subject", "predicateType", "predicate"})
_PREDICATE_FIELDS = frozenset({"kit_version", "report_format", "vendor", "standard", "run"})
_VENDOR_FIELDS = frozenset({"id", "display_name"})
_STANDARD_FIELDS = frozenset({"version", "torch_release"})
_RUN_FIELDS = frozenset({"finished_at"})


@dataclass(frozen=True)
class BodyClaim:
    """What the statement says of the report before its body is read."""

    kit_version: str
    vendor_id: str
    display_name: str
    standard_version: str
    torch_release: str
    finished_at: str

    @classmethod
    def of_head(cls, head: Mapping[str, Any]) -> BodyClaim:
        """The claim a body's head makes (``KeyError``/``TypeError`` on a head without it)."""
        return cls(
            kit_version=head["kit"]["version"],
            vendor_id=head["vendor"]["id"],
            display_name=head["vendor"]["display_name"],
            standard_version=head["standard"]["version"],
            torch_release=head["standard"]["torch_release"],
            finished_at=head["run"]["finished_at"],
        )

    def predicate(self) -> dict[str, Any]:
        return {
            "kit_version": self.kit_version,
            "report_format": BODY_FORMAT,
            "vendor": {"id": self.vendor_id, "display_name": self.display_name},
            "standard": {"version": self.standard_version, "torch_release": self.torch_release},
            "run": {"finished_at": self.finished_at},
        }

    def report_stub(self) -> dict[str, Any]:
        """The claim shaped as the report sections the vendor-binding step reads (vendor, run),
        so that step judges both formats with one code path."""
        return {"vendor": {"id": self.vendor_id, "display_name": self.display_name},
                "run": {"finished_at": self.finished_at}}


@dataclass(frozen=True)
class BodyStatement:
    subjects: tuple[Subject, ...]
    claim: BodyClaim

    def to_json(self) -> dict[str, Any]:
        return {
            "_type": STATEMENT_TYPE,
            "subject": [subject.to_json() for subject in self.subjects],
            "predicateType": BODY_PREDICATE_TYPE,
            "predicate": self.claim.predicate(),
        }

    def as_statement(self) -> Statement:
        """The steps both formats share (vendor binding, subject digests) read this."""
        return Statement(self.subjects, BODY_PREDICATE_TYPE, self.claim.kit_version,
                         self.claim.report_stub())


def is_body_statement(document: Any) -> bool:
    """Whether a parsed payload claims to be a body statement (its shape is checked apart)."""
    return isinstance(document, dict) and document.get("predicateType") == BODY_PREDICATE_TYPE


def _text(fields: Mapping[str, Any], key: str, where: str) -> str:
    value = fields[key]
    if not isinstance(value, str) or not value:
        raise VerificationError(f"{where}.{key} must be a non-empty string")
    return value


def _claim(value: Any) -> BodyClaim:
    where = "statement predicate"
    fields = exact_object(value, _PREDICATE_FIELDS, where)
    if fields["report_format"] != BODY_FORMAT:
        raise VerificationError(f"{where}.report_format must be {BODY_FORMAT!r}")
    vendor = exact_object(fields["vendor"], _VENDOR_FIELDS, f"{where}.vendor")
    standard = exact_object(fields["standard"], _STANDARD_FIELDS, f"{where}.standard")
    run = exact_object(fields["run"], _RUN_FIELDS, f"{where}.run")
    return BodyClaim(
        kit_version=_text(fields, "kit_version", where),
        vendor_id=_text(vendor, "id", f"{where}.vendor"),
        display_name=_text(vendor, "display_name", f"{where}.vendor"),
        standard_version=_text(standard, "version", f"{where}.standard"),
        torch_release=_text(standard, "torch_release", f"{where}.standard"),
        finished_at=_text(run, "finished_at", f"{where}.run"),
    )


def parse_body_statement(document: Any) -> BodyStatement:
    """The exact shape of a body statement; ``VerificationError`` in one line otherwise. Every
    body file must be a subject; the golden manifest may be."""
    fields = exact_object(document, _STATEMENT_FIELDS, "statement")
    if fields["_type"] != STATEMENT_TYPE:
        raise VerificationError(f"statement _type {fields['_type']!r} is not {STATEMENT_TYPE}")
    if fields["predicateType"] != BODY_PREDICATE_TYPE:
        raise VerificationError(f"predicateType {fields['predicateType']!r} is not "
                                f"{BODY_PREDICATE_TYPE}")
    subjects = parse_subjects(fields["subject"], BODY_FILES, OPTIONAL_REPORT_FILES)
    return BodyStatement(subjects, _claim(fields["predicate"]))


def build_body_statement(subjects: Sequence[Subject], head: Mapping[str, Any]) -> BodyStatement:
    try:
        claim = BodyClaim.of_head(head)
    except (KeyError, TypeError):
        raise VerificationError("the body's head lacks kit, vendor, standard or run") from None
    return BodyStatement(tuple(subjects), claim)
