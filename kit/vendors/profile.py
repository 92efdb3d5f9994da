"""Loading and validating vendor profiles."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit import paths
from kit.errors import InputError
from kit.flows import flow_names
from kit.hashing import sha256_file
from kit.vendors.requirement_syntax import is_local_requirement, requirement_problem
from kit.vendors.validation import validate
from kit.yamlio import load_yaml

PROFILE_FILE = "vendor.yaml"


@dataclass(frozen=True)
class ContainerOptions:
    """Device passthrough for the vendor's reference container."""

    devices: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    shm_size: str | None = None
    group_add: tuple[str, ...] = ()
    privileged: bool = False


@dataclass(frozen=True)
class VendorProfile:
    id: str
    display_name: str
    contact: str
    docs_url: str
    device_type: str
    import_modules: tuple[str, ...]
    requirements: tuple[str, ...]
    install_script: str | None
    dtypes: tuple[str, ...]
    flows: tuple[str, ...]
    skip_manifest: str
    container: ContainerOptions
    directory: Path
    #: The worst grade the vendor accepts: skip entries costing a grade no worse than this one
    #: are warnings at validate time instead of errors (a grade name of the standard).
    accepts_grade: str | None = None
    #: Per flow, the vendor's options for it (``flow_options`` in vendor.yaml).
    flow_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The variable limiting which devices a process sees (``CUDA_VISIBLE_DEVICES``); None:
    #: ``--devices`` gives each worker its device with ``torch.<device_type>.set_device``.
    device_env: str | None = None

    @property
    def profile_path(self) -> Path:
        return self.directory / PROFILE_FILE

    @property
    def skip_manifest_path(self) -> Path:
        return self.directory / self.skip_manifest

    def claims_dtype(self, dtype: str) -> bool:
        return dtype in self.dtypes

    def resolved_requirements(self) -> list[str]:
        """Requirements with local paths made absolute (pip resolves them from any cwd)."""
        return [
            str((self.directory / req).resolve()) if is_local_requirement(req) else req
            for req in self.requirements
        ]

    def digest(self) -> str:
        return sha256_file(self.profile_path)

    def summary(self) -> dict[str, Any]:
        """What the report records about the vendor."""
        return {
            "id": self.id,
            "display_name": self.display_name,
            "contact": self.contact,
            "docs_url": self.docs_url,
            "device_type": self.device_type,
            "dtypes": list(self.dtypes),
            "flows": list(self.flows),
            "profile_sha256": self.digest(),
        }


def check_requirements(requirements: list[str], source: Path) -> None:
    """Each requirement is one PEP 508 specifier or one local path, never a pip option."""
    for index, requirement in enumerate(requirements):
        problem = requirement_problem(requirement)
        if problem is not None:
            raise InputError(f"{source}: field requirements.{index}: {problem}")


def check_flows(flows: list[str], source: Path) -> None:
    """Each claimed flow is one the registry knows: a built-in or an installed vendor flow."""
    known = flow_names()
    for flow in flows:
        if flow not in known:
            raise InputError(
                f"{source}: field flows: unknown flow {flow!r} (known: {', '.join(known)})"
            )


def _looks_like_path(vendor: str) -> bool:
    return "/" in vendor or vendor.startswith(".")


def vendor_dir(vendor_id: str, root: Path | None = None) -> Path:
    return (root or paths.vendors_dir()) / vendor_id


def list_vendor_ids(root: Path | None = None) -> list[str]:
    base = root or paths.vendors_dir()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / PROFILE_FILE).is_file())


def load_vendor(vendor: str | Path, root: Path | None = None) -> VendorProfile:
    """Load a profile by id (``vendors/<id>``) or by a directory/profile path."""
    candidate = Path(vendor)
    if candidate.name == PROFILE_FILE:
        directory = candidate.parent
    elif _looks_like_path(str(vendor)):
        directory = candidate
    else:
        directory = vendor_dir(str(vendor), root)
    source = directory / PROFILE_FILE
    if not source.exists():
        known = ", ".join(list_vendor_ids(root)) or "none"
        raise InputError(f"{source}: no vendor profile for {vendor!r} (known vendors: {known})")
    data = load_yaml(source)
    if not isinstance(data, dict):
        raise InputError(f"{source}: expected a mapping of profile fields")
    validate(data, "vendor.schema.json", source)
    check_requirements(data.get("requirements", []), source)
    check_flows(data.get("flows", []), source)
    if data["id"] != directory.name:
        raise InputError(
            f"{source}: field id: expected the directory name {directory.name!r}, "
            f"got {data['id']!r}"
        )
    container = data.get("container", {})
    return VendorProfile(
        id=data["id"],
        display_name=data["display_name"],
        contact=data["contact"],
        docs_url=data["docs_url"],
        device_type=data["device_type"],
        import_modules=tuple(data.get("import_modules", [])),
        requirements=tuple(data.get("requirements", [])),
        install_script=data.get("install_script"),
        dtypes=tuple(data["dtypes"]),
        flows=tuple(data.get("flows", ["eager"])),
        skip_manifest=data["skip_manifest"],
        container=ContainerOptions(
            devices=tuple(container.get("devices", [])),
            env=dict(container.get("env", {})),
            shm_size=container.get("shm_size"),
            group_add=tuple(container.get("group_add", [])),
            privileged=bool(container.get("privileged", False)),
        ),
        directory=directory.resolve(),
        accepts_grade=data.get("accepts_grade"),
        flow_options=checked_flow_options(data.get("flow_options", {}), source),
        device_env=data.get("device_env"),
    )


def checked_flow_options(options: dict[str, Any], source: Path) -> dict[str, dict[str, Any]]:
    """Each flow's options, as its flow accepts them (an unknown flow or option is refused)."""
    from kit.flows import get_flow

    for flow, values in options.items():
        try:
            problem = get_flow(flow).option_problem(values)
        except InputError as exc:
            raise InputError(f"{source}: field flow_options.{flow}: {exc}") from None
        if problem is not None:
            raise InputError(f"{source}: field flow_options.{flow}: {problem}")
    return {flow: dict(values) for flow, values in options.items()}
