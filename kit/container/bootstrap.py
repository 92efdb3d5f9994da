"""``ckit image bootstrap``: a base image from a Debian-family mirror, for engines with no registry.

``debootstrap --variant=minbase`` fills a directory with a root file system, which is streamed as
a tar into ``docker import``. Air-gapped labs and CI need nothing but a package mirror.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

import docker
import docker.errors

from kit.container.build import build_log_dir
from kit.container.images import OsImage, bootstrap_tag, load_os_image
from kit.errors import EnvironmentProblem, InputError

_CHUNK = 1 << 20
# Left out of the image: the engine provides /dev, apt fetches fresh lists, debs are spent.
# The apt sources become those of the official image (updates and security included).
_FINISH = (
    "rm -rf {root}/var/cache/apt/archives/*.deb {root}/var/lib/apt/lists/* {root}/dev/*"
    " && : > {root}/etc/resolv.conf && : > {root}/etc/hostname"
    " && printf %s {sources} > {root}/etc/apt/sources.list"
)


@dataclass(frozen=True)
class BootstrapResult:
    tag: str
    image_id: str
    os: str
    #: False when the tag already existed and nothing was done.
    created: bool
    seconds: float
    size_bytes: int

    def to_json(self) -> dict[str, object]:
        """The fields as ``ckit image bootstrap --json`` prints them (the dataclass is the type)."""
        return asdict(self)


def bootstrap_base(
    client: docker.DockerClient,
    os_name: str,
    tag: str | None = None,
    force: bool = False,
    mirror: str | None = None,
) -> BootstrapResult:
    os_image = load_os_image(os_name)
    method = os_image.bootstrap
    if method.method != "debootstrap":
        raise InputError(
            f"{os_name} cannot be bootstrapped here (bootstrap method {method.method!r}): load a "
            f"base image into the engine and pass `ckit image build --os {os_name} --base NAME`"
        )
    tag = tag or bootstrap_tag(os_image)
    started = time.monotonic()
    if not force:
        existing = _existing(client, tag)
        if existing is not None:
            return _result(existing, tag, os_name, False, time.monotonic() - started)
    prefix = _root_prefix()
    _check_tools(os_image)
    log_path = build_log_dir() / f"bootstrap-{os_name}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("", encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="ckit-bootstrap-") as scratch:
        root = Path(scratch) / "rootfs"
        try:
            _debootstrap(prefix, os_image, root, mirror or method.mirror, log_path)
            sources = shlex.quote(method.sources_list(mirror or method.mirror))
            finish = _FINISH.format(root=shlex.quote(str(root)), sources=sources)
            _run([*prefix, "sh", "-c", finish], log_path, "finish the root file system")
            image = _import(client, prefix, root, tag, os_image)
        finally:
            # debootstrap's files belong to root: remove them with the same rights.
            # --one-file-system: a mount debootstrap left behind (proc) is never descended into.
            subprocess.run([*prefix, "rm", "-rf", "--one-file-system", str(root)], check=False)
    return _result(image, tag, os_name, True, time.monotonic() - started)


def _existing(client: docker.DockerClient, tag: str) -> Any:
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None


def _root_prefix() -> list[str]:
    """debootstrap must run as root (chroot, device nodes): as is, or through sudo."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") and subprocess.run(["sudo", "-n", "true"], check=False).returncode == 0:
        return ["sudo", "-n"]
    raise EnvironmentProblem("debootstrap needs root: run `sudo ckit image bootstrap ...`")


def _check_tools(os_image: OsImage) -> None:
    if shutil.which("debootstrap") is None:
        raise EnvironmentProblem(
            "debootstrap is not installed: `sudo apt-get install debootstrap` "
            "(or run `.ci/start-docker`)"
        )
    keyring = os_image.bootstrap.keyring
    if keyring and not Path(keyring).is_file():
        raise EnvironmentProblem(
            f"{os_image.name}: archive keyring {keyring} not found; install the distribution's "
            f"keyring package (e.g. `sudo apt-get install ubuntu-keyring`)"
        )


def _debootstrap(prefix: list[str], os_image: OsImage, root: Path, mirror: str, log: Path) -> None:
    method = os_image.bootstrap
    command = [*prefix, "debootstrap", f"--variant={method.variant}"]
    command.append(f"--components={','.join(method.components)}")
    if method.keyring:
        command.append(f"--keyring={method.keyring}")
    command += [method.suite, str(root), mirror]
    _run(command, log, "debootstrap")


def _run(command: list[str], log_path: Path, step: str) -> None:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(command)}\n")
        log.flush()
        result = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        last = _last_line(log_path)
        raise EnvironmentProblem(
            f"bootstrap step {step} failed (exit code {result.returncode}): {last} "
            f"(log: {log_path})"
        )


def _last_line(path: Path) -> str:
    lines = [line.strip() for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _import(
    client: docker.DockerClient, prefix: list[str], root: Path, tag: str, os_image: OsImage
) -> Any:
    repository, _, version = tag.rpartition(":") if _has_tag(tag) else (tag, "", "latest")
    changes = [
        "ENV LANG=C.UTF-8",
        'CMD ["bash"]',
        "LABEL org.ckit.bootstrap=debootstrap",
        f"LABEL org.ckit.os={os_image.name}",
        f"LABEL org.ckit.suite={os_image.bootstrap.suite}",
    ]
    tar = subprocess.Popen(
        [*prefix, "tar", "--numeric-owner", "-C", str(root), "-c", "."], stdout=subprocess.PIPE
    )
    assert tar.stdout is not None
    try:
        client.api.import_image_from_stream(
            _chunks(tar.stdout), repository=repository, tag=version, changes=changes
        )
    except docker.errors.APIError as exc:
        reason = exc.explanation or exc
        raise EnvironmentProblem(f"docker import of {tag} failed: {reason}") from None
    finally:
        tar.stdout.close()
        tar.wait()
    if tar.returncode != 0:
        raise EnvironmentProblem(f"tar of the {os_image.name} root file system failed")
    return client.images.get(tag)


def _has_tag(name: str) -> bool:
    # "host:5000/repo" has a colon but no tag: a tag never contains "/".
    return ":" in name and "/" not in name.rsplit(":", 1)[1]


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    while chunk := stream.read(_CHUNK):
        yield chunk


def _result(image: Any, tag: str, os_name: str, created: bool, seconds: float) -> BootstrapResult:
    return BootstrapResult(
        tag=tag,
        image_id=str(image.id),
        os=os_name,
        created=created,
        seconds=round(seconds, 2),
        size_bytes=int(image.attrs.get("Size", 0)),
    )
