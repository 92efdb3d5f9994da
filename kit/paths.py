"""Where the kit finds its standards, vendor profiles and keyring.

The kit is run from its checkout (``make install`` installs it editable), so data directories sit
beside the package. ``CKIT_HOME`` points elsewhere, e.g. a read-only mount inside a container,
or a test's temporary kit home whose ``standards/`` holds standards of its own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import kit


def kit_home() -> Path:
    override = os.environ.get("CKIT_HOME")
    if override:
        return Path(override).resolve()
    return Path(kit.__file__).resolve().parent.parent


def package_dir() -> Path:
    return Path(kit.__file__).resolve().parent


def standards_dir() -> Path:
    return kit_home() / "standards"



#: The vendor id rule: a vendor's directory under ``vendors/``, its keys' file and directory
#: names (``kit.signing.keys``) and its segment of a submission's path are all the id.
VENDOR_ID = re.compile(r"[a-z][a-z0-9-]{1,31}")
#: The environment variable naming the vendors directory (``ckit --vendors-dir`` sets it).
VENDORS_DIR_VARIABLE = "CKIT_VENDORS_DIR"


def vendors_dir() -> Path:
    override = os.environ.get(VENDORS_DIR_VARIABLE)
    return Path(override).resolve() if override else kit_home() / "vendors"


def keyring_dir() -> Path:
    return kit_home() / "signing" / "keyring"


def user_config_dir() -> Path:
    """Per-user directory for private keys: never inside the repository."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ckit"
