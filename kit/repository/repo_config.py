"""The auditor's choices as ``ckit repo init`` files them in a shared repository's ``ckit/``.

``ckit audit``, ``gate`` and ``portal`` take them with ``--repo-config DIR``. In the repository's
CI that directory is the *base* branch's copy (the workflow checks it out apart from the pull
request), so a pull request can change neither the roots, the released kits nor the policies it
is judged by; a change to them is reviewed and merged like any other before it counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kit.errors import InputError

#: The directory of the repository that holds them.
CONFIG_DIR = "ckit"
ROOTS_DIR = "roots"
RELEASED_KITS_NAME = "released-kits.yaml"
ACCEPTANCE_NAME = "acceptance.yaml"
GATE_NAME = "gate.yaml"


@dataclass(frozen=True)
class RepoConfig:
    directory: Path

    @property
    def roots(self) -> Path:
        """The root public keys that must sign the keyring (their private parts stay offline)."""
        return self.directory / ROOTS_DIR

    @property
    def released_kits(self) -> Path:
        return self.directory / RELEASED_KITS_NAME

    @property
    def acceptance_policy(self) -> Path:
        return self.directory / ACCEPTANCE_NAME

    @property
    def gate_policy(self) -> Path:
        return self.directory / GATE_NAME

    def checked(self) -> RepoConfig:
        """Itself when every part is there; one line naming the first missing part if not."""
        for path in (self.roots, self.released_kits, self.acceptance_policy, self.gate_policy):
            if not path.exists():
                raise InputError(
                    f"--repo-config {self.directory}: {path.name} is missing "
                    "(`ckit repo init` writes roots/, released-kits.yaml, acceptance.yaml, "
                    "gate.yaml)"
                )
        return self
