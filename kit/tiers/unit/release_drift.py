"""A standard's unit tests run on a torch release it was not locked on (a canary's run).

OpInfo's samples change between releases: a locked id may name no sample of the installed
release (the test is not in this release: NOT_APPLICABLE, ``not-in-release``, never the
vendor's ERROR), or name other inputs than those the standard locked (the test runs and its
record says so: ``details.inputs_changed``). On the standard's own release neither applies: a
missing sample is a stale list, the kit's own error.
"""

from __future__ import annotations

import functools
from typing import TypedDict

from kit.outcomes import Inapplicable
from kit.results import INPUTS_CHANGED_KEY, NotApplicableReason
from kit.standard import Standard
from kit.standard.catalogue import installed_torch_version, torch_release_of


def foreign_release(standard: Standard) -> str | None:
    """The installed torch's release where ``standard`` certifies another, else None."""
    installed = _installed_release()
    return None if installed in (None, standard.torch_release) else installed


@functools.cache
def _installed_release() -> str | None:
    # Asked for every judged unit test: the distribution's metadata is read once a process
    # (about 1 ms a read), the torch a process imported never changes under it.
    installed = installed_torch_version()
    return None if installed is None else torch_release_of(installed)


def absent_from_release(standard: Standard, test_id: str) -> Inapplicable | None:
    """NOT_APPLICABLE (``not-in-release``) where the installed release, not the standard's,
    generates no sample for ``test_id``: decided by rebuilding it in the kit's process, never
    taken from the worker, whose vendor code could claim it."""
    from kit.tiers.unit.cases import unit_case
    from kit.tiers.unit.opinfo_cases import NoSuchSample

    release = foreign_release(standard)
    if release is None:
        return None
    try:
        unit_case(standard, test_id)
    except NoSuchSample:
        return Inapplicable(
            NotApplicableReason.NOT_IN_RELEASE,
            f"torch {release}'s OpInfo has no such sample (standard {standard.version} was "
            f"locked on torch {standard.torch_release})",
        )
    return None


class InputsChange(TypedDict):
    """A test's input digest as the standard locked it and as the installed release makes it."""

    locked: str
    now: str


def inputs_changed(standard: Standard, test_id: str) -> dict[str, InputsChange]:
    """On a foreign release, ``{inputs_changed: {locked, now}}`` where the test's inputs are
    not those the standard locked; nothing otherwise (and always on the standard's release)."""
    if foreign_release(standard) is None:
        return {}
    locked = standard.input_digests("unit").get(test_id)
    if locked is None:
        return {}
    from kit.tiers.unit.canonical_digests import canonical_digest

    now = canonical_digest(standard, test_id)  # on the path the lock computed ``locked`` on
    return {} if now == locked else {INPUTS_CHANGED_KEY: {"locked": locked, "now": now}}
