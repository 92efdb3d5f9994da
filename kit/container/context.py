"""Build contexts for the two layers, assembled in a scratch directory.

Only what a layer needs goes in: the Docker layer cache keys on the bytes of every copied file,
so a stable context is what makes an unchanged rebuild a cache hit.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kit.container.images import OsImage, vendor_layer_dockerfile
from kit.container.pipconfig import HostPipSettings, ca_bundle_text, render_pip_conf
from kit.container.requirements import (
    kit_pyproject,
    kit_runtime_requirements,
    render_requirements,
    vendor_image_requirements,
)
from kit.container.wheelhouse import Wheelhouse
from kit.errors import InputError
from kit.hashing import tree_digest
from kit.vendors import VendorProfile

#: Never copied from a vendor directory: host leftovers that would only break the cache (a stale
#: egg-info also misleads setuptools about the package's files).
_VENDOR_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "*.egg-info")


def write_kit_context(
    target: Path,
    os_image: OsImage,
    wheelhouse: Wheelhouse,
    pip_settings: HostPipSettings,
    extra_ca: Path | None,
) -> None:
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(os_image.dockerfile, target / "Dockerfile")
    requirements = render_requirements(
        kit_runtime_requirements(), "the kit's pyproject.toml", kit_pyproject()
    )
    (target / "requirements.txt").write_text(requirements, encoding="utf-8")
    bundle = ca_bundle_text(pip_settings.cert, extra_ca)
    ca_dir = target / "ca"
    ca_dir.mkdir()
    if bundle:
        (ca_dir / "pip-ca.crt").write_text(bundle, encoding="utf-8")
    else:
        (ca_dir / ".keep").write_text("", encoding="utf-8")  # COPY needs a non-empty source
    pip_conf = render_pip_conf(pip_settings, has_ca_bundle=bool(bundle))
    (target / "pip.conf").write_text(pip_conf, encoding="utf-8")
    wheels = target / "wheelhouse"
    wheels.mkdir()
    for source in wheelhouse.files:
        _link_or_copy(source, wheels / source.name)


def write_vendor_context(target: Path, vendor: VendorProfile) -> None:
    refuse_escaping_links(vendor)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(vendor_layer_dockerfile(), target / "Dockerfile")
    shutil.copytree(vendor.directory, target / "vendor", ignore=_VENDOR_IGNORE, symlinks=True)
    requirements = render_requirements(
        vendor_image_requirements(vendor),
        f"{vendor.profile_path.name} of vendor {vendor.id}",
        vendor.profile_path,
    )
    (target / "vendor-requirements.txt").write_text(requirements, encoding="utf-8")


def refuse_escaping_links(vendor: VendorProfile) -> None:
    """A link out of the vendor directory would copy a host file (a key, say) into the image."""
    root = vendor.directory.resolve()
    for path in _vendor_entries(root):
        target = path.resolve()
        if path.is_symlink() and root not in (target, *target.parents):
            raise InputError(
                f"{path}: symbolic link out of the vendor directory (to {os.readlink(path)}); "
                f"the image build copies only {root}"
            )


def vendor_tree_digest(vendor: VendorProfile) -> str:
    """sha256 over (relative path, content) of what the vendor layer copies.

    Stored as an image label, so a run can tell an image built from an older recipe.
    """
    # Links are copied as links, so their target text is what the image holds.
    return tree_digest(vendor.directory, _vendor_entries(vendor.directory))


def _vendor_entries(root: Path) -> list[Path]:
    """Files and links the vendor layer copies (os.walk never descends into a linked dir)."""
    entries = []
    for directory, subdirs, names in os.walk(root):
        ignored = _VENDOR_IGNORE(directory, subdirs + names)
        linked_dirs = [d for d in subdirs if (Path(directory) / d).is_symlink()]
        subdirs[:] = sorted(d for d in subdirs if d not in ignored and d not in linked_dirs)
        kept = [n for n in names + linked_dirs if n not in ignored]
        entries += [Path(directory) / name for name in kept]
    return entries


def _link_or_copy(source: Path, target: Path) -> None:
    # A hard link costs nothing for a 200 MB wheel; across file systems fall back to a copy.
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
