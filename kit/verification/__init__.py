"""Verifying a signed report: the numbered checklist (``verify``) and its content checks."""

from kit.verification.verify import VerifiedReport, verify_envelope

__all__ = ["VerifiedReport", "verify_envelope"]
