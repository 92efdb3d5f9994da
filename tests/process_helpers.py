"""Child processes that tests start side by side and wait for together."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping


def communicate_all(
    running: Mapping[str, subprocess.Popen[str]], timeout: float
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Each child's outcome by name; none is left behind when one overran ``timeout``."""
    results = {}
    try:
        for name, process in running.items():
            stdout, stderr = process.communicate(timeout=timeout)
            results[name] = subprocess.CompletedProcess(
                process.args, process.returncode, stdout, stderr
            )
    finally:
        for process in running.values():
            if process.poll() is None:
                process.kill()
                process.communicate()
    return results
