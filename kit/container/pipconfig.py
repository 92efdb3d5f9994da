"""How the building host reaches the Python package index, replicated inside image builds.

Vendor labs often sit behind TLS-intercepting proxies: pip only works there with the proxy's CA
in its bundle. The host's own pip settings (``pip config list``: files and ``PIP_*`` variables)
already solve this on the host, so builds reuse them: index URLs that a container can reach,
the CA bundle (copied into the image), and find-links directories (the default wheelhouse).
"""

from __future__ import annotations

import re
import ssl
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from kit.errors import InputError

#: Where the image keeps the CA bundle pip uses (``ca/pip-ca.crt`` of the build context).
IMAGE_CA_BUNDLE = "/etc/ckit/ca/pip-ca.crt"
#: Where the image keeps the wheelhouse it was built from; every pip in the image looks there.
IMAGE_WHEELHOUSE = "/opt/ckit-wheelhouse"

_LINE = re.compile(r"^(?P<section>[^.]*)\.(?P<key>[a-z-]+)='(?P<value>.*)'$")
# Later sections win: environment variables override command sections override [global].
_PRECEDENCE = ("global", "install", ":env:")
_KEYS = ("index-url", "extra-index-url", "find-links", "cert", "trusted-host")


@dataclass(frozen=True)
class HostPipSettings:
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    trusted_hosts: tuple[str, ...] = ()
    cert: Path | None = None
    find_links_dirs: tuple[Path, ...] = ()
    #: Settings a container cannot use (``file://`` indexes of the host), for the build log.
    dropped: tuple[str, ...] = ()


def read_host_pip_settings(python: str = sys.executable) -> HostPipSettings:
    """Ask the host's pip (``python -m pip config list``) rather than re-implementing its lookup."""
    try:
        listing = subprocess.run(
            [python, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return HostPipSettings()  # no pip on the host: builds use pip's own defaults
    return parse_pip_config_list(listing)


def parse_pip_config_list(listing: str) -> HostPipSettings:
    values = _effective_values(listing)
    index_urls = values.get("index-url", [])[:1]
    extra = values.get("extra-index-url", [])
    reachable = [u for u in index_urls + extra if _is_remote(u)]
    dropped = [u for u in index_urls + extra if not _is_remote(u)]
    find_links = [_local_dir(link) for link in values.get("find-links", [])]
    certs = values.get("cert", [])
    return HostPipSettings(
        index_url=index_urls[0] if index_urls and index_urls[0] in reachable else None,
        extra_index_urls=tuple(u for u in extra if u in reachable),
        trusted_hosts=tuple(values.get("trusted-host", [])),
        cert=Path(certs[0]) if certs and Path(certs[0]).is_file() else None,
        find_links_dirs=tuple(d for d in find_links if d is not None and d.is_dir()),
        dropped=tuple(dropped),
    )


def _effective_values(listing: str) -> dict[str, list[str]]:
    ranked: dict[str, tuple[int, list[str]]] = {}
    for line in listing.splitlines():
        match = _LINE.match(line.strip())
        if not match or match["key"] not in _KEYS:
            continue
        section = match["section"]
        rank = _PRECEDENCE.index(section) if section in _PRECEDENCE else -1
        if rank < 0:
            continue  # another command's section (e.g. [download]) does not apply to install
        if match["key"] not in ranked or rank >= ranked[match["key"]][0]:
            ranked[match["key"]] = (rank, match["value"].split())
    return {key: value for key, (_, value) in ranked.items()}


def _is_remote(url: str) -> bool:
    return urlparse(url).scheme in ("http", "https")


def _local_dir(link: str) -> Path | None:
    parsed = urlparse(link)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if parsed.scheme in ("", None):
        return Path(link)
    return None


def ca_bundle_text(host_cert: Path | None, extra_ca: Path | None) -> str:
    """The bundle the image's pip uses, or "" to leave pip on its built-in bundle.

    An extra CA (a lab's proxy) is added to the host's bundle, or to the system bundle when the
    host's pip uses its built-in one: pip's ``cert`` setting replaces the bundle, not extends it.
    """
    if host_cert is None and extra_ca is None:
        return ""
    parts = []
    base = host_cert or _system_bundle()
    if base is not None:
        parts.append(base.read_text(encoding="utf-8", errors="replace"))
    if extra_ca is not None:
        parts.append(read_extra_ca(extra_ca))
    return "\n".join(part.strip() + "\n" for part in parts)


def read_extra_ca(path: Path) -> str:
    """The PEM text of ``path``; refuses a file without a parseable certificate."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read the extra CA bundle: {exc.strerror}") from None
    try:
        certificates = x509.load_pem_x509_certificates(data)
    except ValueError:
        raise InputError(f"{path}: not a PEM CA bundle (no parseable certificate)") from None
    return "".join(cert.public_bytes(Encoding.PEM).decode("ascii") for cert in certificates)


def _system_bundle() -> Path | None:
    defaults = ssl.get_default_verify_paths()
    for candidate in (defaults.cafile, defaults.openssl_cafile):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def render_pip_conf(settings: HostPipSettings, has_ca_bundle: bool) -> str:
    lines = [
        "# Written by `ckit image build` from the building host's pip settings.",
        "[global]",
        "disable-pip-version-check = true",
        f"find-links = {IMAGE_WHEELHOUSE}",
    ]
    if settings.index_url:
        lines.append(f"index-url = {settings.index_url}")
    if settings.extra_index_urls:
        lines.append(f"extra-index-url = {' '.join(settings.extra_index_urls)}")
    if settings.trusted_hosts:
        lines.append(f"trusted-host = {' '.join(settings.trusted_hosts)}")
    if has_ca_bundle:
        lines.append(f"cert = {IMAGE_CA_BUNDLE}")
    return "\n".join(lines) + "\n"
