"""The reference container OS images (``images/<os>/``) and how their images are named.

Each OS directory holds a ``Dockerfile`` (``ARG BASE_IMAGE``) for the kit layer and an
``image.yaml`` saying what it is built from. ``images/vendor-layer/`` holds the one Dockerfile that
adds a vendor's recipe on top of any kit layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kit
from kit import paths
from kit.errors import InputError
from kit.yamlio import load_yaml

IMAGE_FILE = "image.yaml"
VENDOR_LAYER = "vendor-layer"
DEFAULT_OS = "debian12"
#: The repository part of every tag the kit builds (``ckit/debian12-kit:0.1.0``).
REPOSITORY = "ckit"
#: Image names ``<os>-<name>`` the kit uses itself, so no vendor id may take them.
RESERVED_NAMES = ("kit", "base")

# Labels the Dockerfiles set; the in-container run reads them back for the report.
LABEL_LAYER = "org.ckit.layer"
LABEL_OS = "org.ckit.os"
LABEL_BASE = "org.ckit.base"
LABEL_BASE_ID = "org.ckit.base-id"
LABEL_TORCH = "org.ckit.torch"
LABEL_KIT_VERSION = "org.ckit.kit-version"
LABEL_VENDOR = "org.ckit.vendor"
LABEL_VENDOR_DIGEST = "org.ckit.vendor-digest"


@dataclass(frozen=True)
class Bootstrap:
    """How a base image is made without a registry (``method: registry`` means it cannot be)."""

    method: str
    suite: str = ""
    variant: str = "minbase"
    mirror: str = ""
    components: tuple[str, ...] = ("main",)
    keyring: str = ""
    #: sources.list lines of the image, ``{mirror}`` standing for the mirror bootstrapped from.
    sources: tuple[str, ...] = ()

    def sources_list(self, mirror: str) -> str:
        lines = self.sources or (f"deb {{mirror}} {self.suite} {' '.join(self.components)}",)
        return "".join(line.replace("{mirror}", mirror.rstrip("/")) + "\n" for line in lines)


@dataclass(frozen=True)
class OsImage:
    name: str
    display_name: str
    python: str
    python_executable: str
    default_base: str
    bootstrap: Bootstrap
    directory: Path

    @property
    def dockerfile(self) -> Path:
        return self.directory / "Dockerfile"


def images_dir() -> Path:
    return paths.kit_home() / "images"


def list_os_names() -> list[str]:
    root = images_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / IMAGE_FILE).is_file())


def load_os_image(name: str) -> OsImage:
    directory = images_dir() / name
    source = directory / IMAGE_FILE
    if not source.is_file():
        known = ", ".join(list_os_names()) or "none"
        raise InputError(f"{source}: no reference image {name!r} (known: {known})")
    data = load_yaml(source)
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a mapping of image fields")
    for key in ("os", "python", "python_executable", "default_base", "bootstrap"):
        if key not in data:
            raise InputError(f"{source}: missing required field {key!r}")
    if data["os"] != name:
        raise InputError(f"{source}: field os: expected the directory name {name!r}")
    return OsImage(
        name=name,
        display_name=str(data.get("display_name", name)),
        python=str(data["python"]),
        python_executable=str(data["python_executable"]),
        default_base=str(data["default_base"]),
        bootstrap=_bootstrap(data["bootstrap"], source),
        directory=directory,
    )


def _bootstrap(data: Any, source: Path) -> Bootstrap:
    if not isinstance(data, dict) or "method" not in data:
        raise InputError(f"{source}: field bootstrap: expected a mapping with a 'method'")
    return Bootstrap(
        method=str(data["method"]),
        suite=str(data.get("suite", "")),
        variant=str(data.get("variant", "minbase")),
        mirror=str(data.get("mirror", "")),
        components=tuple(data.get("components", ["main"])),
        keyring=str(data.get("keyring", "")),
        sources=tuple(str(line) for line in data.get("sources", [])),
    )


def vendor_layer_dockerfile() -> Path:
    return images_dir() / VENDOR_LAYER / "Dockerfile"


def bootstrap_tag(os_image: OsImage) -> str:
    """Where ``ckit image bootstrap`` puts a base: never a registry name it would shadow."""
    return f"{REPOSITORY}/{os_image.name}-base:{os_image.bootstrap.suite}"


def kit_image_tag(os_name: str) -> str:
    return f"{REPOSITORY}/{os_name}-kit:{kit.__version__}"


def vendor_image_tag(os_name: str, vendor_id: str) -> str:
    if vendor_id in RESERVED_NAMES:
        raise InputError(f"vendor id {vendor_id!r} cannot name an image: it is reserved by the kit")
    return f"{REPOSITORY}/{os_name}-{vendor_id}:{kit.__version__}"
