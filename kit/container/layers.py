"""``ckit image build``: base -> kit layer -> vendor layer, with no registry involved.

The kit layer (Python, the pinned torch, the kit's runtime deps) is shared by every vendor of an
OS; the vendor layer adds one vendor's recipe. Both are tagged with the kit version and labelled
with what they were built from, which the in-container run reads back for the report.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors

import kit
from kit.container import images
from kit.container.build import BuildRequest, BuiltImage, LogSink, log_path_for, run_build
from kit.container.context import vendor_tree_digest, write_kit_context, write_vendor_context
from kit.container.images import OsImage
from kit.container.pipconfig import HostPipSettings, read_host_pip_settings
from kit.container.wheelhouse import select_wheelhouse
from kit.errors import EnvironmentProblem
from kit.vendors import VendorProfile, load_vendor


@dataclass(frozen=True)
class BuildOptions:
    os_name: str = images.DEFAULT_OS
    #: None: the host pip's find-links directories.
    wheelhouse_dirs: tuple[Path, ...] | None = None
    #: None: the OS image's default base.
    base: str | None = None
    extra_ca: Path | None = None


def build_vendor_images(
    client: docker.DockerClient,
    vendor_id: str,
    options: BuildOptions,
    sink: LogSink | None = None,
) -> tuple[BuiltImage, BuiltImage]:
    """Build (or find cached) the kit layer, then the vendor layer on it."""
    vendor = load_vendor(vendor_id)
    images.vendor_image_tag(options.os_name, vendor.id)  # reject reserved ids before any work
    kit_image = build_kit_image(client, options, sink)
    return kit_image, build_vendor_layer(client, vendor, kit_image, sink)


def build_kit_image(
    client: docker.DockerClient, options: BuildOptions, sink: LogSink | None = None
) -> BuiltImage:
    os_image = images.load_os_image(options.os_name)
    base = options.base or os_image.default_base
    base_id = ensure_base_image(client, os_image, base)
    pip_settings = read_host_pip_settings()
    wheelhouse = select_wheelhouse(
        _wheelhouse_dirs(options, pip_settings),
        os_image.python,
        str(client.info().get("Architecture", "x86_64")),
    )
    tag = images.kit_image_tag(os_image.name)
    if sink is not None and pip_settings.dropped:
        sink(f"ckit: not usable inside a build, left out: {' '.join(pip_settings.dropped)}\n")
    with tempfile.TemporaryDirectory(prefix="ckit-kit-context-") as scratch:
        context = Path(scratch)
        write_kit_context(context, os_image, wheelhouse, pip_settings, options.extra_ca)
        buildargs = {
            "BASE_IMAGE": base,
            "BASE_IMAGE_ID": base_id,
            "TORCH_VERSION": wheelhouse.torch_version,
            "KIT_VERSION": kit.__version__,
        }
        request = BuildRequest(context, tag, buildargs, log_path_for(tag))
        image_id, steps, seconds = run_build(client, request, sink)
    return _described(client, "kit", tag, image_id, seconds, steps.all_cached())


def build_vendor_layer(
    client: docker.DockerClient,
    vendor: VendorProfile,
    kit_image: BuiltImage,
    sink: LogSink | None = None,
) -> BuiltImage:
    tag = images.vendor_image_tag(kit_image.os, vendor.id)
    with tempfile.TemporaryDirectory(prefix="ckit-vendor-context-") as scratch:
        context = Path(scratch)
        write_vendor_context(context, vendor)
        buildargs = {
            "KIT_IMAGE": kit_image.tag,
            "VENDOR_ID": vendor.id,
            "INSTALL_SCRIPT": vendor.install_script or "",
            "VENDOR_DIGEST": vendor_tree_digest(vendor),
        }
        request = BuildRequest(context, tag, buildargs, log_path_for(tag))
        image_id, steps, seconds = run_build(client, request, sink)
    return _described(client, "vendor", tag, image_id, seconds, steps.all_cached())


def ensure_base_image(client: docker.DockerClient, os_image: OsImage, base: str) -> str:
    """The id of ``base``, pulled if a registry is reachable; says how to get it otherwise."""
    try:
        return str(client.images.get(base).id)
    except docker.errors.ImageNotFound:
        pass
    try:
        return str(client.images.pull(base).id)
    except docker.errors.APIError as exc:
        hint = _base_hint(os_image, base)
        reason = str(exc.explanation or exc).splitlines()[0][:160]
        raise EnvironmentProblem(
            f"base image {base} is not in the engine and cannot be pulled ({reason}): {hint}"
        ) from None


def _base_hint(os_image: OsImage, base: str) -> str:
    if os_image.bootstrap.method != "debootstrap":
        return "load it (`docker load`), or pass --base NAME of an image the engine has"
    made = images.bootstrap_tag(os_image)
    if base == made:
        return f"create it with `ckit image bootstrap {os_image.name}`"
    return f"load it, or run `ckit image bootstrap {os_image.name}` and pass --base {made}"


def _wheelhouse_dirs(options: BuildOptions, pip_settings: HostPipSettings) -> Sequence[Path]:
    if options.wheelhouse_dirs is not None:
        return options.wheelhouse_dirs
    return pip_settings.find_links_dirs


def _described(
    client: docker.DockerClient, layer: str, tag: str, image_id: str, seconds: float, cached: bool
) -> BuiltImage:
    image = client.images.get(image_id)
    labels = dict(image.labels or {})
    return BuiltImage(
        layer=layer,
        tag=tag,
        image_id=image_id,
        os=labels.get(images.LABEL_OS, ""),
        base=labels.get(images.LABEL_BASE, ""),
        vendor=labels.get(images.LABEL_VENDOR),
        size_bytes=int(image.attrs.get("Size", 0)),
        build_s=round(seconds, 2),
        cached=cached,
        labels=labels,
    )
