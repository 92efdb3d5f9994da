"""What every engine runs: the shard command for each index, then one merge.

Engines differ only in how they start these commands (a Slurm job array, a GitHub Actions
matrix, a Kubernetes Indexed Job); the commands and the directory layout are decided here once.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

#: Shard K of N writes ``<root>/shard-K-of-N``; the merge writes ``<root>/merged``.
MERGED_DIR = "merged"


def shard_dir_name(index: str, count: int) -> str:
    """``index`` is a number or a scheduler's variable (``$SLURM_ARRAY_TASK_ID``)."""
    return f"shard-{index}-of-{count}"


@dataclass(frozen=True)
class ShardedRun:
    """One sharded run, as an engine starts it.

    ``run_args`` are further ``ckit run`` options shared by every shard (``--tier``,
    ``--select``, ``--flows``, ``--workers``, ``--devices``, ``--durations``). Each shard signs
    its report with the vendor's key, as any run does, and the merge takes only shards whose
    signature the keyring vouches for (whoever else can write the shared root cannot reseal a
    shard); the merge signs the one report unless ``sign`` is off.
    """

    vendor: str
    shards: int
    #: Shared storage every node sees: the shard outputs and the merged report go under it.
    root: str
    run_args: tuple[str, ...] = ()
    sign: bool = True
    #: The ckit executable on the nodes (a venv's ``bin/ckit``, or ``ckit`` on PATH).
    ckit: str = "ckit"
    #: The keyring the merge checks each shard's signature with (None: the kit's own).
    keyring: str | None = None

    def shard_dir(self, index: str) -> str:
        return f"{self.root}/{shard_dir_name(index, self.shards)}"

    def shard_argv(self, index: str) -> list[str]:
        return [
            self.ckit, "run", "--vendor", self.vendor, "--shard", f"{index}/{self.shards}",
            "--out", self.shard_dir(index), *self.run_args,
        ]

    def merge_argv(self) -> list[str]:
        shards = [self.shard_dir(str(k)) for k in range(self.shards)]
        sign = [] if self.sign else ["--no-sign"]
        keyring = [] if self.keyring is None else ["--keyring", self.keyring]
        return [self.ckit, "merge", *shards, "--out", f"{self.root}/{MERGED_DIR}", *sign,
                *keyring]

    def shard_line(self, index_variable: str) -> str:
        """The shard command as a shell line, ``index_variable`` (e.g. ``$JOB_COMPLETION_INDEX``)
        left for the shell to expand."""
        marker = "\0"  # cannot occur in an argument
        quoted_index = f'"{index_variable}"'
        return " ".join(
            quoted_index.join(shlex.quote(part) if part else "" for part in a.split(marker))
            for a in self.shard_argv(marker)
        )

    def merge_line(self) -> str:
        return " ".join(shlex.quote(a) for a in self.merge_argv())
