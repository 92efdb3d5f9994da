"""``ckit vendors init``: a new, well-formed vendor directory.

The files carry placeholders the vendor must replace; ``ckit vendors validate`` refuses the
profile until it names a device a run can use (``kit.vendors.readiness``) and warns while the
other placeholders are still there (see ``PLACEHOLDERS``).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import kit
from kit.config_reader import Node
from kit.errors import InputError
from kit.standard import Standard
from kit.vendors.profile import PROFILE_FILE, read_profile

SKIPS_FILE = "skips.yaml"
INSTALL_SCRIPT = "install.sh"
README_FILE = "README.md"
#: PyTorch's name for an out-of-tree backend until it calls rename_privateuse1_backend().
DEFAULT_DEVICE_TYPE = "privateuseone"
#: Profile fields whose scaffolded value is a stand-in the vendor has to replace.
PLACEHOLDERS = {
    "contact": "Your Team <conformance@example.com>",
    "docs_url": "https://example.com/your-backend/docs",
}


@dataclass(frozen=True)
class ScaffoldRequest:
    vendor_id: str
    device_type: str = DEFAULT_DEVICE_TYPE
    display_name: str | None = None

    @property
    def name(self) -> str:
        return self.display_name or self.vendor_id.replace("-", " ").title()


def _yaml_str(value: str) -> str:
    # A JSON string is a valid double-quoted YAML scalar, so any display name round-trips.
    return json.dumps(value)


class _ProfileFields(TypedDict):
    """The new profile's values, as ``render_profile`` writes them into ``vendor.yaml``."""

    id: str
    display_name: str
    contact: str
    docs_url: str
    device_type: str
    import_modules: list[str]
    requirements: list[str]
    install_script: str
    dtypes: list[str]
    flows: list[str]
    skip_manifest: str


def _profile_fields(request: ScaffoldRequest) -> _ProfileFields:
    return {
        "id": request.vendor_id,
        "display_name": request.name,
        "contact": PLACEHOLDERS["contact"],
        "docs_url": PLACEHOLDERS["docs_url"],
        "device_type": request.device_type,
        "import_modules": [],
        "requirements": [],
        "install_script": INSTALL_SCRIPT,
        "dtypes": ["float32"],
        "flows": ["eager"],
        "skip_manifest": SKIPS_FILE,
    }


def render_profile(request: ScaffoldRequest, standard: Standard) -> str:
    f = _profile_fields(request)
    return f"""\
# Vendor profile read by ckit {kit.__version__} (standard {standard.version}).
# Replace the placeholders, then run: ckit vendors validate {f["id"]}
id: {f["id"]}
display_name: {_yaml_str(f["display_name"])}
# Who answers questions about this backend's results.
contact: {_yaml_str(f["contact"])}
docs_url: {_yaml_str(f["docs_url"])}
# The torch device type your backend registers (e.g. cuda, xpu, npu, or your renamed
# privateuseone); tests move tensors to this device.
device_type: {f["device_type"]}
# Modules that register the device with torch when imported, e.g. [torch_acme].
import_modules: []
# pip requirements, or paths of wheels/projects relative to this directory, e.g.
# ["torch-acme==1.4.0", "./wheels/acme_runtime-1.4.0-py3-none-any.whl"].
# `ckit vendors install {f["id"]}` installs them; torch=={standard.torch_release} stays pinned.
requirements: []
# A source build (a C++ backend compiled against the kit's torch), run after the requirements
# in this directory with $PYTHON the kit's interpreter; see vendors/cppnpu/vendor.yaml:
# build:
#   commands: ['"$PYTHON" -m pip install --no-build-isolation --no-deps .']
#   env: {{MAX_JOBS: "2"}}
# Run when building the vendor layer of the reference container.
install_script: {f["install_script"]}
# Every dtype the device claims; tests of unclaimed dtypes are NOT_APPLICABLE.
dtypes: [float32]
flows: [eager]
# The dtypes torch.autocast runs in on the device (bfloat16, float16), e.g. [bfloat16]; the
# unit tier's autocast tests of unclaimed ones are NOT_APPLICABLE. None claimed: all of them.
# autocast: [bfloat16]
# The torch.compile backends the device serves, by their dynamo names, e.g. [inductor]; the
# compile tier compiles each test with each. None claimed: the tier is NOT_APPLICABLE.
# compile_backends: [inductor]
# The torch.distributed backend of the device's process groups, e.g. gloo (cpu) or hccl; the
# distributed tier runs its collectives in it. None claimed: the tier is NOT_APPLICABLE.
# process_group_backend: gloo
# Given with it: where its collectives run, native (on the device) or host-copy (the backend
# copies device tensors to the host and runs a CPU backend there; not counted as native).
# process_group_transport: native
# The calls the model tier's timing (figures recorded, not graded) waits for the device's queued
# work with and reads its peak allocated bytes from; by default torch.<device_type>'s own.
# synchronize: torch.{f["device_type"]}.synchronize
# max_memory_allocated: torch.{f["device_type"]}.max_memory_allocated
skip_manifest: {f["skip_manifest"]}
"""


def render_skips(vendor_id: str, standard: Standard, today: dt.date) -> str:
    latest = standard.latest_skip_expiry
    example_expiry = min(today + dt.timedelta(days=90), latest).isoformat()
    return f"""\
# Known gaps of the {vendor_id} backend under standard {standard.version}.
# Each entry needs:
#   test      a test id or glob (* stays within one path segment, ** crosses segments)
#   reason    one of: {", ".join(standard.skip_reasons)}
#   tracking  an http(s) link to the issue that tracks the gap
#   expires   YYYY-MM-DD, {latest} at the latest; an expired entry skips nothing and counts
#             as a failure
# An entry matching a test the standard marks never-skip is refused.
#
# skips:
#   - test: "unit/opinfo/nn.functional.conv2d/bfloat16/*"
#     reason: unsupported-dtype
#     tracking: https://example.com/your-backend/issues/1
#     expires: {example_expiry}
#     note: bf16 convolution kernels land in the next driver release
skips: []
"""


def render_install_script(vendor_id: str, standard: Standard) -> str:
    return f"""\
#!/bin/sh
# Installs the {vendor_id} backend into the Python environment that runs ckit
# (used when building the vendor layer of the reference container). POSIX sh.
# The constraint pins torch=={standard.torch_release}: if a package needs another torch, pip fails
# instead of replacing the release the kit certifies.
set -eu

# EDIT: space-separated pip requirements or wheel paths relative to this directory.
PACKAGES=""
PYTHON="${{PYTHON:-python3}}"

cd "$(dirname -- "$0")"
if [ -z "$PACKAGES" ]; then
    echo "install.sh: PACKAGES is empty; nothing to install for {vendor_id}" >&2
    exit 0
fi
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
echo "torch=={standard.torch_release}" > "$constraints"
# PACKAGES is split on spaces on purpose.
"$PYTHON" -m pip install --constraint "$constraints" $PACKAGES
"""


def render_readme(request: ScaffoldRequest, standard: Standard) -> str:
    vid, release = request.vendor_id, standard.torch_release
    return f"""\
# {request.name}: ckit vendor profile

Generated by `ckit vendors init {vid}`. Edit these files, then check them:

    ckit vendors validate {vid}

## What to edit

- `{PROFILE_FILE}`:
  - `display_name`, `contact`, `docs_url`: replace the placeholders (validate warns until you do).
  - `device_type`: the torch device type your backend registers.
  - `import_modules`: the modules that register your device with torch when imported.
  - `requirements`: what `pip install` needs for your stack (packages, or wheel/project paths
    relative to this directory).
  - `dtypes`: every dtype your device claims. Claimed dtypes are tested; the float32 tests are
    required for a "conformant" grade.
- `{INSTALL_SCRIPT}`: set `PACKAGES`, and add any other setup the reference container needs.
- `{SKIPS_FILE}`: known gaps. Every entry needs a reason, a tracking link and an expiry date;
  an expired entry counts as a failure.

## Then

    ckit vendors install {vid}    # pip-installs `requirements`; torch stays {release}
    ckit run --vendor {vid} --out results/{vid}
"""


def _target(root: Path, vendor_id: str) -> Path:
    directory = root / vendor_id
    if (directory / PROFILE_FILE).exists():
        raise InputError(f"{directory}: vendor {vendor_id!r} already exists; refusing to overwrite")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise InputError(f"{directory}: exists and is not empty; refusing to overwrite")
    return directory


def _check_display_name(name: str) -> None:
    if not name.strip() or not name.isprintable():
        raise InputError(f"--display-name: expected one line of printable text, got {name!r}")


def scaffold_vendor(
    request: ScaffoldRequest, root: Path, standard: Standard, today: dt.date
) -> list[Path]:
    """Write the vendor directory under ``root``; returns the files written."""
    _check_display_name(request.name)
    directory = _target(root, request.vendor_id)
    # Validate before writing so a bad id or device type leaves nothing behind.
    read_profile(Node.of(_profile_fields(request), directory / PROFILE_FILE), directory)
    files = {
        PROFILE_FILE: render_profile(request, standard),
        SKIPS_FILE: render_skips(request.vendor_id, standard, today),
        INSTALL_SCRIPT: render_install_script(request.vendor_id, standard),
        README_FILE: render_readme(request, standard),
    }
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = directory / name
        with path.open("x", encoding="utf-8") as handle:  # "x": never clobber a racing writer
            handle.write(text)
        written.append(path)
    (directory / INSTALL_SCRIPT).chmod(0o755)
    return written
