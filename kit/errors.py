"""The kit's user-facing errors and exit codes.

Everything a user can cause (bad input, a missing device, a tampered report) is raised as a
``KitError`` subclass carrying a one-line message; ``kit.cli.main`` is the single boundary where
they become ``ckit: error: ...`` on stderr and a non-zero exit code.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit codes other than a finished run's: ``ckit run`` exits with its grade's
    ``exit_code`` (standard.yaml), which must not collide with these."""

    OK = 0
    #: The run finished and its report was written, but the grade is not "conformant" (the
    #: exit code of the non-conformant grade; each grade names its own in the standard).
    NOT_CONFORMANT = 1
    USAGE_ERROR = 2
    #: A profile, manifest, standard, key or report file is malformed or missing.
    INPUT_ERROR = 3
    #: ``ckit verify`` rejected an envelope.
    VERIFICATION_FAILED = 4
    #: The vendor device or its stack is not usable (not importable, not visible).
    DEVICE_ERROR = 5
    #: An external engine (Docker) is not reachable or failed.
    ENVIRONMENT_ERROR = 6
    #: ``ckit run``: a narrowed run (--tier, --select, --rerun-failed) whose tests meet a better
    #: grade than the narrowing leaves it (``kit.grading.partial``): every test it ran is fine.
    PARTIAL = 12
    #: ``ckit gate``: the release may not ship (a vendor falls short, is missing or is past the
    #: failing window, or the repository's own checks failed).
    GATE_CLOSED = 7
    #: ``ckit gate``: closed with nothing to judge (an unknown release, no submission for it or
    #: none at all, a policy that requires no vendor).
    GATE_NOTHING_TO_JUDGE = 8
    #: The kit itself failed (a bug in the kit, or its judge could not run): no verdict.
    KIT_CRASHED = 70
    INTERRUPTED = 130



class KitError(Exception):
    """A failure the user can act on; ``str(error)`` is one line."""

    exit_code: ExitCode = ExitCode.INPUT_ERROR


class InputError(KitError):
    exit_code = ExitCode.INPUT_ERROR


class VerificationError(KitError):
    exit_code = ExitCode.VERIFICATION_FAILED


class DeviceError(KitError):
    exit_code = ExitCode.DEVICE_ERROR


class EnvironmentProblem(KitError):
    exit_code = ExitCode.ENVIRONMENT_ERROR


class KitCrash(KitError):
    """The kit could not do its own part (its judge failed to start): no verdict is possible."""

    exit_code = ExitCode.KIT_CRASHED
