"""Input digests computed on one CPU path, whatever machine computes them.

Most seeded inputs are bit for bit the same on every x86 CPU with AVX2, but some are computed
(a Hermitian positive-definite matrix is ``A @ A.mH`` plus a diagonal, a CTC loss's input a
``log_softmax``): their last bits follow the BLAS branch MKL dispatches to (Intel or AMD, AVX2
or AVX-512), ATen's vector width and the thread count. Measured: of v2's 24,462 locked ids,
189 (186 linalg samples of the sweep, 3 module inputs) digested otherwise on an AVX-512 Intel
Xeon than on the AVX2 AMD EPYC they were locked on, so a lock, a ``--check`` or a canary's
``inputs_changed`` there said their inputs had changed when nothing had.

So every digest the kit compares with a locked one is computed in a child process on the
canonical path (``CANONICAL_CPU_ENV``): ATen's AVX2 kernels, MKL's reproducible branch for
Intel and compatible CPUs (``MKL_CBWR=COMPATIBLE``) and one thread. A run's own inputs are
untouched: the worker and the judge make them on the machine's own path, and the reference is
computed from the very inputs the device got.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from kit.errors import EnvironmentProblem, KitCrash, KitError
from kit.standard import Standard

#: The CPU path of every locked digest (module doc).
CANONICAL_CPU_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "COMPATIBLE",
    "MKL_DYNAMIC": "FALSE",
    "MKL_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
}
#: ATen's CPU capability the child must find (lower where the CPU lacks AVX2).
CANONICAL_CAPABILITY = "AVX2"
#: The capabilities (``torch.backends.cpu.get_cpu_capability()``) of a machine that can take
#: the canonical path.
CAPABILITIES_WITH_AVX2 = frozenset({"AVX2", "AVX512"})

#: How the child marks a line as a refusal rather than a digest.
_REFUSAL = "!"


class CanonicalDigester:
    """A child computing digests on the canonical path, one test id per line, kept for the
    process that started it (a judge asks once per test on a canary's release)."""

    def __init__(self, standard: Standard) -> None:
        self.owner = os.getpid()
        self.child = subprocess.Popen(
            # Warnings of sample generation (deprecations, degrees of freedom) are the lock's
            # noise, not its output.
            [sys.executable, "-W", "ignore", "-m", __name__, str(standard.directory)],
            env={**os.environ, **CANONICAL_CPU_ENV}, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, bufsize=1)

    def digest(self, test_id: str) -> str:
        """``test_id``'s input digest on the canonical path."""
        stdin, stdout = self._pipes()
        stdin.write(test_id + "\n")
        stdin.flush()
        answer = stdout.readline().rstrip("\n")
        if not answer:
            raise KitCrash(f"the canonical digest process ended on {test_id} (exit status "
                           f"{self.child.wait()})")
        if answer.startswith(_REFUSAL):
            raise _refusal(answer)
        return answer

    def close(self) -> None:
        if self.child.stdin is not None:
            self.child.stdin.close()
        self.child.wait()

    def _pipes(self) -> tuple[IO[str], IO[str]]:
        assert self.child.stdin is not None and self.child.stdout is not None
        return self.child.stdin, self.child.stdout


def _refusal(line: str) -> KitError:
    """The error a refusal line names (``!<ErrorClass>\\t<message>``), as the child raised it."""
    from kit import errors

    name, _, message = line[len(_REFUSAL):].partition("\t")
    error = getattr(errors, name, None)
    if isinstance(error, type) and issubclass(error, KitError):
        return error(message)
    return KitCrash(f"computing an input digest: {name}: {message}")


def canonical_digests(standard: Standard, test_ids: Iterable[str]) -> dict[str, str]:
    """Per test id, its input digest on the canonical path (one child for all)."""
    digester = CanonicalDigester(standard)
    try:
        return {test_id: digester.digest(test_id) for test_id in test_ids}
    finally:
        digester.close()


_DIGESTERS: dict[Path, CanonicalDigester] = {}


def canonical_digest(standard: Standard, test_id: str) -> str:
    """``test_id``'s canonical digest through this process's child for ``standard``, started
    on first use (a forked process starts its own)."""
    digester = _DIGESTERS.get(standard.directory)
    if digester is None or digester.owner != os.getpid():
        digester = _DIGESTERS[standard.directory] = CanonicalDigester(standard)
    return digester.digest(test_id)


def _check_path() -> None:
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    if capability != CANONICAL_CAPABILITY or not torch.backends.mkl.is_available():
        raise EnvironmentProblem(
            f"input digests are defined on ATen's {CANONICAL_CAPABILITY} kernels and MKL, which "
            f"this machine cannot run (ATen's CPU capability here: {capability}, MKL: "
            f"{'yes' if torch.backends.mkl.is_available() else 'no'}); lock or check the unit "
            "tier on an x86 machine with AVX2")


def _refusal_line(error: Exception) -> str:
    """``error`` as a refusal line: the nearest class of ``kit.errors`` it is one of (a kit
    error keeps its exit code across the pipe), else its own class's name."""
    from kit import errors

    kit_class = next((c for c in type(error).__mro__ if c.__module__ == errors.__name__), None)
    name = (kit_class or type(error)).__name__
    return f"{_REFUSAL}{name}\t{error}".replace("\n", " ")


def _serve(directory: Path) -> None:
    """The child: a digest per test id read from stdin, or a refusal line."""
    from kit.standard import load_standard
    from kit.tiers.unit.identity import unit_test_digest

    try:
        _check_path()
        standard = load_standard(directory=directory)
    except KitError as error:
        sys.stdout.write(_refusal_line(error) + "\n")
        return
    for line in sys.stdin:
        try:
            answer = unit_test_digest(standard, line.rstrip("\n"))
        except Exception as error:  # noqa: BLE001 - named to the parent, which raises it
            answer = _refusal_line(error)
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve(Path(sys.argv[1]))
