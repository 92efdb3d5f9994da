"""Running the kit inside a vendor image: the checkout read-only, results out, no signing key in.

The image holds the vendor stack; the kit itself comes from the host checkout, mounted read-only
at ``/opt/ckit``, so the code that ran is the code whose digest the report carries. The host
signs what comes out: no key is ever mounted, and only the variables set here enter.
"""

from __future__ import annotations

import codecs
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import docker
import docker.errors

from kit import paths
from kit.container import images
from kit.container.context import vendor_tree_digest
from kit.container.engine import connect
from kit.container.requirements import IMAGE_VENDORS_DIR
from kit.errors import EnvironmentProblem, ExitCode, InputError
from kit.grading.environment import CONTAINER_ENV  # the image identity, carried in for the report
from kit.vendors import VendorProfile, load_vendor

KIT_MOUNT = "/opt/ckit"
OUT_MOUNT = "/out"
#: Names a vendor profile may not set: they decide what code runs and where results go.
_RESERVED_ENV_PREFIXES = ("CKIT_", "PYTHON", "HF_", "PIP_")

OutputSink = Callable[[str], None]


@dataclass(frozen=True)
class ContainerRun:
    image: str
    image_id: str
    command: tuple[str, ...]
    #: The command's exit status inside the container (a kit ``ExitCode`` for ``ckit run``).
    exit_code: int
    out_dir: Path


def kit_run_command(vendor_id: str, tiers: Sequence[str], extra_args: Sequence[str]) -> list[str]:
    tier_list = ",".join(tiers)  # `ckit run --tier` takes a comma-separated list
    command = ["python", "-m", "kit", "run", "--vendor", vendor_id, "--tier", tier_list]
    return [*command, "--out", OUT_MOUNT, "--no-sign", *extra_args]


def run_in_container(
    vendor: str,
    image: str | None,
    out_dir: Path,
    tiers: Sequence[str],
    extra_args: Sequence[str] = (),
    *,
    command: Sequence[str] | None = None,
    output: OutputSink | None = None,
    client: docker.DockerClient | None = None,
) -> ContainerRun:
    """Run ``ckit run`` (or ``command``, for tests) in the vendor image, streaming its output.

    ``image`` defaults to the vendor's Debian 12 image. Returns the exit status whatever it is;
    raises ``EnvironmentProblem`` when the engine, not the kit, failed (no such image, the command
    could not start, the container was killed).
    """
    client = client or connect()
    profile = load_vendor(vendor)
    tag = image or images.vendor_image_tag(images.DEFAULT_OS, profile.id)
    found = _image(client, tag, profile)
    _check_built_from(found, tag, profile)
    argv = list(command) if command is not None else kit_run_command(profile.id, tiers, extra_args)
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    container = client.containers.create(
        found.id,
        argv,
        environment=container_environment(profile, tag, found),
        volumes=_volumes(_kit_checkout(), out_dir),
        working_dir=KIT_MOUNT,
        **_user_options(),
        **_device_options(profile),
    )
    try:
        _start(container, tag)
        _stream_output(container, output or _to_stdout)
        exit_code = int(container.wait()["StatusCode"])
        container.reload()
        _raise_if_engine_failed(container.attrs.get("State", {}), exit_code, tag)
    finally:
        container.remove(force=True)
    return ContainerRun(tag, str(found.id), tuple(argv), exit_code, out_dir)


def container_identity(tag: str, image: Any) -> dict[str, str]:
    """What ``CKIT_CONTAINER`` says: the report's record of the image the run used."""
    labels = dict(image.labels or {})
    return {
        "image": tag,
        "image_id": str(image.id),
        "base": labels.get(images.LABEL_BASE, ""),
        "os": labels.get(images.LABEL_OS, ""),
    }


def container_environment(profile: VendorProfile, tag: str, image: Any) -> dict[str, str]:
    for name in profile.container.env:
        if name.startswith(_RESERVED_ENV_PREFIXES):
            raise InputError(
                f"{profile.profile_path}: container.env may not set {name}: names starting "
                f"with {', '.join(_RESERVED_ENV_PREFIXES)} are the kit's"
            )
    environment = dict(profile.container.env)
    environment.update(
        {
            "CKIT_HOME": KIT_MOUNT,
            "PYTHONPATH": KIT_MOUNT,
            # The recipe copy baked into the image, which the digest label vouches for.
            paths.VENDORS_DIR_VARIABLE: IMAGE_VENDORS_DIR,
            "HF_HUB_OFFLINE": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONUNBUFFERED": "1",
            # The checkout is read-only: caches go to the container's own /tmp.
            "HOME": "/tmp",
            "HYPOTHESIS_STORAGE_DIRECTORY": "/tmp/hypothesis",
            CONTAINER_ENV: json.dumps(container_identity(tag, image), sort_keys=True),
        }
    )
    return environment


def _image(client: docker.DockerClient, tag: str, profile: VendorProfile) -> Any:
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        raise EnvironmentProblem(
            f"image {tag} not found: build it with `ckit image build --vendor {profile.id}`"
        ) from None


def _check_built_from(image: Any, tag: str, profile: VendorProfile) -> None:
    labels = dict(image.labels or {})
    if labels.get(images.LABEL_VENDOR) != profile.id:
        raise InputError(
            f"image {tag} is not a vendor image of {profile.id!r} "
            f"(label {images.LABEL_VENDOR}={labels.get(images.LABEL_VENDOR)!r})"
        )
    if labels.get(images.LABEL_VENDOR_DIGEST) != vendor_tree_digest(profile):
        raise InputError(
            f"image {tag} was built from another version of {profile.directory}: "
            f"rebuild it with `ckit image build --vendor {profile.id}`"
        )


def _kit_checkout() -> Path:
    home = paths.kit_home()
    if not (home / "kit" / "__init__.py").is_file() or not (home / "standards").is_dir():
        raise InputError(f"{home} is not a kit checkout, which in-container runs mount")
    return home


def _volumes(kit_home: Path, out_dir: Path) -> dict[str, dict[str, str]]:
    return {
        str(kit_home): {"bind": KIT_MOUNT, "mode": "ro"},
        str(out_dir): {"bind": OUT_MOUNT, "mode": "rw"},
    }


class _UserOptions(TypedDict, total=False):
    """docker-py's ``user`` option of ``containers.create``."""

    user: str


class _DeviceOptions(TypedDict, total=False):
    """docker-py's device options of ``containers.create``, from the profile's ``container``."""

    privileged: bool
    devices: list[str]
    group_add: list[str]
    shm_size: str


def _user_options() -> _UserOptions:
    # Results in out_dir belong to the invoking user, not to root.
    if os.geteuid() == 0:
        return {}
    return {"user": f"{os.geteuid()}:{os.getegid()}"}


def _device_options(profile: VendorProfile) -> _DeviceOptions:
    options = profile.container
    device_options: _DeviceOptions = {"privileged": options.privileged}
    if options.devices:
        device_options["devices"] = [f"{d}:{d}:rwm" for d in options.devices]
    if options.group_add:
        device_options["group_add"] = list(options.group_add)
    if options.shm_size:
        device_options["shm_size"] = options.shm_size
    return device_options


def _start(container: Any, tag: str) -> None:
    try:
        container.start()
    except docker.errors.APIError as exc:
        reason = str(exc.explanation or exc).splitlines()[0][:200]
        raise EnvironmentProblem(f"the container of {tag} did not start: {reason}") from None


def _stream_output(container: Any, output: OutputSink) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # docker-py lifts the client's read timeout on log streams: a long quiet test is fine.
    for chunk in container.logs(stream=True, follow=True):
        text = decoder.decode(chunk)
        if text:
            output(text)
    tail = decoder.decode(b"", final=True)
    if tail:
        output(tail)


def _raise_if_engine_failed(state: Mapping[str, object], exit_code: int, tag: str) -> None:
    if state.get("OOMKilled"):
        raise EnvironmentProblem(f"the container of {tag} was killed for using too much memory")
    if exit_code in (126, 127):
        raise EnvironmentProblem(
            f"the command could not start in {tag} (exit code {exit_code}: "
            f"{'not executable' if exit_code == 126 else 'not found'})"
        )
    if exit_code > 128 and exit_code != ExitCode.INTERRUPTED:
        raise EnvironmentProblem(f"the container of {tag} was killed by signal {exit_code - 128}")


def _to_stdout(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()
