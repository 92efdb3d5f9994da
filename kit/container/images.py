"""The reference container OS images (``images/<os>/``) and how their images are named.

Each OS directory holds a ``Dockerfile`` (``ARG BASE_IMAGE``) for the kit layer and an
``image.yaml`` saying what it is built from. ``images/vendor-layer/`` holds the one Dockerfile that
adds a vendor's recipe on top of any kit layer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import kit
from kit import paths
from kit.config_reader import Node
from kit.errors import InputError

IMAGE_FILE = "image.yaml"
VENDOR_LAYER = "vendor-layer"
DEFAULT_OS = "debian12"
#: The repository part of every tag the kit builds (``ckit/debian12-kit:0.1.0``).
REPOSITORY = "ckit"
#: Image names ``<os>-<name>`` the kit uses itself, so no vendor id may take them.
RESERVED_NAMES = ("kit", "base")
#: The keys of ``image.yaml``: these it must give, and the optional ones.
IMAGE_FIELDS = ("os", "python", "python_executable", "default_base", "bootstrap")
#: ``registry_bases`` and ``installs`` document the image for people choosing a base; the kit
#: does not use them.
OPTIONAL_IMAGE_FIELDS = ("display_name", "registry_bases", "installs")
BOOTSTRAP_FIELDS = ("suite", "variant", "mirror", "components", "keyring", "sources")

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
    return read_os_image(Node.read(source), name, directory)


def read_os_image(node: Node, name: str, directory: Path) -> OsImage:
    fields = node.section(IMAGE_FIELDS, OPTIONAL_IMAGE_FIELDS, what="a mapping of image fields")
    if fields["os"].text() != name:
        raise fields["os"].expected(f"the directory name {name!r}")
    return OsImage(
        name=name,
        display_name=fields.optional("display_name", name, Node.text),
        python=fields["python"].text(expected="a Python version such as '3.11' (quoted)"),
        python_executable=fields["python_executable"].text(),
        default_base=fields["default_base"].text(),
        bootstrap=_bootstrap(fields["bootstrap"]),
        directory=directory,
    )


def _bootstrap(node: Node) -> Bootstrap:
    fields = node.section(("method",), BOOTSTRAP_FIELDS, what="a mapping with a method")
    return Bootstrap(
        method=fields["method"].text(),
        suite=fields.optional("suite", "", Node.text),
        variant=fields.optional("variant", "minbase", Node.text),
        mirror=fields.optional("mirror", "", Node.text),
        components=fields.optional("components", ("main",), Node.strings, non_empty=True),
        keyring=fields.optional("keyring", "", Node.text),
        sources=fields.optional("sources", (), Node.strings),
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
