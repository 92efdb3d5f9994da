"""What the three canary templates run: install an upstream torch, a canary run, its comment.

The RFC's two CI modes: an upstream PyTorch pull request (or merge) dispatches the vendor's
run, whose comment goes back to the pull request; a nightly run against PyTorch's nightly index
feeds a dashboard. Either way the commands are the same, decided here once: the torch install
script (``torch_install_script``: the torch to install arrives in ``$TORCH``, untrusted, and is
checked for the shape of a version or of a wheel URL on one host before pip sees it), the
``ckit run --canary`` line and the ``ckit show --format comment --against`` line.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from kit.engines.template_text import RESERVED_RUN_OPTIONS
from kit.errors import ExitCode, InputError
from kit.signing.keys import check_vendor_id
from kit.standard import load_standard

#: The environment variables the install script reads: the torch asked for (empty: the
#: newest on the index), the index a version comes from.
TORCH_VARIABLE = "TORCH"
INDEX_VARIABLE = "TORCH_INDEX"
#: PyTorch's nightly wheels (CPU builds: a PrivateUse1 backend brings its own device).
NIGHTLY_INDEX = "https://download.pytorch.org/whl/nightly/cpu"
WHEEL_HOST = "download.pytorch.org"
#: ``ckit run`` options the canary line sets itself (the canary is never sharded or resumed,
#: and signs with nothing but the canary key it is given).
CANARY_RESERVED = (*RESERVED_RUN_OPTIONS, "--canary", "--list")
#: The separate key a canary signs with when asked (``ckit keys generate --vendor V --out
#: V-canary.pem --keyring DIR``, DIR a keyring of its own): never the key that signs the vendor's
#: certified runs, which no job installing an untrusted torch should hold.
CANARY_KEY_NAME = "{vendor}-canary.pem"
#: A PEP 440 release as PyTorch publishes it: 2.7.0, 2.7.0rc1, 2.8.0.dev20250601+cpu.
VERSION_SHAPE = r"^[0-9]+(\.[0-9]+){1,3}((a|b|rc|\.dev|\.post)[0-9]+)*(\+[a-z0-9]+)?$"
_HOST = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+")
_INDEX = re.compile(r"https://[A-Za-z0-9._~/-]+")
#: Five cron fields of numbers, ``*``, ranges, lists and steps: what GitHub, Kubernetes and
#: scrontab all read the same way (no names, no ``@nightly``, no ``%``).
_CRON = re.compile(r"[0-9*,/-]+( [0-9*,/-]+){4}")


def wheel_shape(host: str) -> str:
    """A wheel on ``host`` over https: nothing before the host (no ``user@``), no query."""
    # The host is letters, digits, '-' and '.': only its dots mean more in a bash ERE.
    escaped = host.replace(".", "\\.")
    return rf"^https://{escaped}/[A-Za-z0-9._~%+/-]+\.whl$"


@dataclass(frozen=True)
class CanaryRun:
    """One canary run as a template's job runs it (on the vendor's machine or in its image)."""

    vendor: str
    #: The ckit executable and the interpreter it runs in (where the torch goes).
    ckit: str
    python: str
    #: The run's directory, as a shell word the engine chooses (it may hold a variable).
    out: str
    #: The vendor's last certified run directory on that machine: the comment's baseline.
    baseline: str
    run_args: tuple[str, ...] = ()
    index: str = NIGHTLY_INDEX
    wheel_host: str = WHEEL_HOST
    #: A separate canary key's path where the job runs (``CANARY_KEY_NAME``), or None: the
    #: canary is unsigned. Never the vendor's signing key: the job installs an untrusted torch,
    #: and a canary is never a certificate.
    key: str | None = None

    def run_line(self) -> str:
        words = [self.ckit, "run", "--vendor", self.vendor, "--canary"]
        signing = ["--key", self.key] if self.key is not None else ["--no-sign"]
        return " ".join([*map(shlex.quote, words), "--out", self.out,
                         *map(shlex.quote, [*signing, *self.run_args])])

    def comment_line(self, comment: str) -> str:
        """The comment for the pull request (or the dashboard) into the file ``comment``."""
        show = [self.ckit, "show"]
        against = ["--format", "comment", "--against", self.baseline]
        return " ".join([*map(shlex.quote, show), self.out, *map(shlex.quote, against), ">",
                         comment])


def clean_exit_codes() -> tuple[int, ...]:
    """What ``ckit run --canary`` exits with when every test it ran was fine: the grade a
    canary gets at best (never a certificate), or a narrowed (``--select``) run's partial."""
    return (load_standard().grade("not-certifiable").exit_code, int(ExitCode.PARTIAL))


def check_cron(cron: str) -> str:
    if not _CRON.fullmatch(cron):
        raise InputError(f"--cron: {cron!r} is not five cron fields (numbers, *, -, ',', /)")
    return cron


def check_canary_run(run: CanaryRun) -> CanaryRun:
    check_vendor_id(run.vendor)
    if not run.baseline:
        raise InputError("--baseline: give the vendor's last certified run directory")
    if run.key is not None and not run.key:
        raise InputError("--canary-key: give the separate canary key's path where the job runs")
    if not _HOST.fullmatch(run.wheel_host):
        raise InputError(f"--wheel-host: {run.wheel_host!r} is not a host name")
    if not _INDEX.fullmatch(run.index):
        raise InputError(f"--torch-index: {run.index!r} is not an https URL")
    clash = next((a for a in run.run_args
                  if any(a == o or a.startswith(f"{o}=") for o in CANARY_RESERVED)), None)
    if clash is not None:
        raise InputError(f"extra ckit run option {clash}: the canary template sets it; leave it "
                         "out")
    return run


def periodic_lines(run: CanaryRun, out_dir: str) -> list[str]:
    """The periodic canary as shell lines, each a whole command (joined by newlines or by
    ``; ``): the newest torch on the index, the run into ``out_dir`` (a shell word assigned to
    ``run.out``'s variable), the comment beside it; exit 0 when every test was fine."""
    clean = " ".join(str(code) for code in clean_exit_codes())
    pip = [run.python, "-m", "pip", "install", "--pre", "--upgrade", "torch", "--index-url",
           run.index]
    return [
        " ".join(map(shlex.quote, pip)) + " || exit 1",
        out_dir,
        run.run_line(),
        "status=$?",
        run.comment_line(f"{run.out}/comment.md"),
        f'case " {clean} " in *" $status "*) exit 0;; esac',
        'exit "$status"',
    ]


def torch_install_script(run: CanaryRun) -> str:
    """Bash: ``$TORCH`` (a version, a wheel URL on the wheel host, or empty for the newest on
    ``$TORCH_INDEX``) installed into ``run.python``; any other value fails before pip runs.

    The value is only ever a quoted word of pip's command, never part of the script's text, and
    is never printed (a runner would read ``::`` lines in it as workflow commands)."""
    pip = f"{shlex.quote(run.python)} -m pip install --pre --upgrade"
    return f"""set -euo pipefail
version_shape={shlex.quote(VERSION_SHAPE)}
wheel_shape={shlex.quote(wheel_shape(run.wheel_host))}
if [ -z "${{{TORCH_VARIABLE}:-}}" ]; then
  {pip} torch --index-url "${INDEX_VARIABLE}"
elif [[ "${TORCH_VARIABLE}" =~ $version_shape ]]; then
  {pip} "torch==${TORCH_VARIABLE}" --index-url "${INDEX_VARIABLE}"
elif [[ "${TORCH_VARIABLE}" =~ $wheel_shape ]]; then
  {pip} "${TORCH_VARIABLE}"
else
  echo "ckit canary: the torch asked for is neither a version nor a wheel URL on \
https://{run.wheel_host}/; nothing installed" >&2
  exit 1
fi
"""
