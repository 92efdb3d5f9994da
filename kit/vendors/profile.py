"""Loading and validating vendor profiles."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kit import paths
from kit.config_reader import Node, Section
from kit.errors import InputError
from kit.flows import flow_names
from kit.flows.interface import FlowOptions
from kit.hashing import sha256_file
from kit.paths import VENDOR_ID
from kit.vendors.requirement_syntax import (
    is_local_requirement,
    requirement_problem,
    torch_pin_problem,
)

PROFILE_FILE = "vendor.yaml"


@dataclass(frozen=True)
class VendorInfo:
    """A report's ``vendor`` section: the profile's claims as a run recorded them. The profile
    writes it (``VendorProfile.record``) and the report model reads it back (``from_json``):
    one list of the section's fields."""

    id: str
    display_name: str
    contact: str
    docs_url: str
    device_type: str
    dtypes: tuple[str, ...]
    flows: tuple[str, ...]
    profile_sha256: str

    def to_json(self) -> dict[str, str | list[str]]:
        """The section as report.json holds it (``ckit merge`` carries a shard's over)."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in vars(self).items()}

    @classmethod
    def from_json(cls, section: Mapping[str, Any]) -> VendorInfo:
        """The section of a report already validated against its schema."""
        return cls(id=section["id"], display_name=section["display_name"],
                   contact=section["contact"], docs_url=section["docs_url"],
                   device_type=section["device_type"], dtypes=tuple(section["dtypes"]),
                   flows=tuple(section["flows"]), profile_sha256=section["profile_sha256"])


@dataclass(frozen=True)
class ContainerOptions:
    """Device passthrough for the vendor's reference container."""

    devices: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    shm_size: str | None = None
    group_add: tuple[str, ...] = ()
    privileged: bool = False


@dataclass(frozen=True)
class BuildStep:
    """A source build ``ckit vendors install`` runs after the requirements (``kit.vendors.build``):
    shell commands run in the vendor directory, in order, under ``env`` added to the host's."""

    commands: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


class CollectiveTransport(enum.StrEnum):
    """Where the claimed process-group backend runs its collectives (``process_group_transport``):
    ``native``, on the device's own buffers and links; ``host-copy``, on host copies of the device
    tensors (a CPU backend such as gloo underneath): never counted as native on the device."""

    NATIVE = "native"
    HOST_COPY = "host-copy"


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
    flow_options: dict[str, FlowOptions] = field(default_factory=dict)
    #: The variable limiting which devices a process sees (``CUDA_VISIBLE_DEVICES``); None:
    #: ``--devices`` gives each worker its device with ``torch.<device_type>.set_device``.
    device_env: str | None = None
    #: The device's memory in MiB (``device_memory_mib``), if declared: unit ``scale`` tests
    #: estimated to need more are not applicable (``kit.tiers.unit.scale_budget``).
    device_memory_mib: int | None = None
    #: The vendor's source build (``build`` in vendor.yaml); no commands: nothing to build.
    build: BuildStep = field(default_factory=BuildStep)
    #: The lower-precision dtypes the device runs ``torch.autocast`` in (``autocast``): the
    #: unit tier's autocast tests of another dtype do not apply.
    autocast: tuple[str, ...] = ()
    #: The dotted name of the call that waits for the device's queued work
    #: (``torch.cuda.synchronize``), which the models tier's timing ends each call with; None:
    #: ``torch.<device_type>.synchronize`` where torch has one.
    synchronize: str | None = None
    #: The dotted name of the call returning the device's peak allocated bytes; None:
    #: ``torch.<device_type>.max_memory_allocated`` where torch has one, else not reported.
    max_memory_allocated: str | None = None
    #: The ``torch.distributed`` backend the device's process groups use
    #: (``process_group_backend``: ``gloo`` for cpu); None: the distributed tier does not apply.
    process_group_backend: str | None = None
    #: Where that backend runs its collectives (``process_group_transport``), given with it.
    process_group_transport: CollectiveTransport | None = None
    #: The ``torch.compile`` backends the vendor serves, by their registered dynamo names
    #: (``compile_backends``: ``inductor`` for cpu); each compile test compiles with each, and
    #: none claimed: the compile tier does not apply.
    compile_backends: tuple[str, ...] = ()

    @property
    def profile_path(self) -> Path:
        return self.directory / PROFILE_FILE

    @property
    def skip_manifest_path(self) -> Path:
        return self.directory / self.skip_manifest

    def claims_dtype(self, dtype: str) -> bool:
        return dtype in self.dtypes

    def claims_autocast(self, dtype: str) -> bool:
        return dtype in self.autocast

    def resolved_requirements(self) -> list[str]:
        """Requirements with local paths made absolute (pip resolves them from any cwd)."""
        return [
            str((self.directory / req).resolve()) if is_local_requirement(req) else req
            for req in self.requirements
        ]

    def digest(self) -> str:
        return sha256_file(self.profile_path)

    def record(self) -> VendorInfo:
        """What the report records about the vendor."""
        return VendorInfo(id=self.id, display_name=self.display_name, contact=self.contact,
                          docs_url=self.docs_url, device_type=self.device_type,
                          dtypes=tuple(self.dtypes), flows=tuple(self.flows),
                          profile_sha256=self.digest())

    def summary(self) -> dict[str, str | list[str]]:
        """The report's ``vendor`` section."""
        return self.record().to_json()


#: The fields of a profile: these it must give, and the optional ones after them.
REQUIRED_FIELDS = (
    "id", "display_name", "contact", "docs_url", "device_type", "dtypes", "skip_manifest"
)
OPTIONAL_FIELDS = (
    "import_modules", "requirements", "install_script", "flows", "flow_options", "device_env",
    "accepts_grade", "container", "device_memory_mib", "build", "autocast", "synchronize",
    "max_memory_allocated", "process_group_backend", "process_group_transport",
    "compile_backends",
)
CONTAINER_FIELDS = ("devices", "env", "shm_size", "group_add", "privileged")
#: The dtypes a profile may claim.
DTYPES = (
    "float64", "float32", "float16", "bfloat16", "complex64",
    "int64", "int32", "int16", "int8", "uint8", "bool",
)
#: The lower-precision dtypes ``torch.autocast`` runs in, which a profile may claim.
AUTOCAST_DTYPES = ("bfloat16", "float16")
DEVICE_TYPE = re.compile(r"[a-z][a-z0-9_]*")
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
#: A dotted name of a callable: ``torch.cuda.synchronize``.
CALL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")
ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
LINK = re.compile(r"https?://\S+")
CONTACT = re.compile(r".{3,}", re.DOTALL)
DEVICE_PATH = re.compile(r"/dev/\S+")
SHM_SIZE = re.compile(r"[0-9]+[bkmg]?")


def confined_path(node: Node, directory: Path, text: str) -> str:
    """``text``, a path the profile names, if it stays inside the vendor directory (links
    followed): a profile never makes the kit read, run or install a file from elsewhere."""
    root = directory.resolve()
    if Path(text).is_absolute() or not (root / text).resolve().is_relative_to(root):
        raise node.error(f"{text!r} is outside the vendor directory {root}: give a path "
                         "inside it")
    return text


def _read_confined(node: Node, directory: Path) -> str:
    return confined_path(node, directory, node.text())


def read_requirements(node: Node, directory: Path) -> tuple[str, ...]:
    """Each requirement is one PEP 508 specifier or one local path inside the vendor
    directory, never a pip option."""
    from kit.standard import current_torch_release

    requirements = node.strings(expected="a requirement or a path")
    for index, requirement in enumerate(requirements):
        problem = requirement_problem(requirement) or torch_pin_problem(
            requirement, current_torch_release)
        if problem is not None:
            raise node.child(index, requirement).error(problem)
        if is_local_requirement(requirement):
            confined_path(node.child(index, requirement), directory, requirement)
    return requirements


def read_flows(node: Node) -> tuple[str, ...]:
    """Each claimed flow is one the registry knows: a built-in or an installed vendor flow."""
    return node.choices(flow_names(), unique=True)


def read_flow_options(node: Node) -> dict[str, FlowOptions]:
    """Each flow's options, as its flow accepts them (an unknown flow or option is refused)."""
    from kit.flows import get_flow

    options: dict[str, FlowOptions] = {}
    for flow, values in node.entries(what="a mapping of flow to its options"):
        options[flow] = {key: option.value for key, option in values.entries()}
        try:
            problem = get_flow(flow).option_problem(options[flow])
        except InputError as exc:  # an unknown flow, named with the known ones
            raise values.error(str(exc)) from None
        if problem is not None:
            raise values.error(problem)
    return options


def _env(node: Node) -> dict[str, str]:
    return {name: value.text(empty_ok=True) for name, value in node.entries()}


def read_container(node: Node) -> ContainerOptions:
    section = node.section(optional=CONTAINER_FIELDS)
    return ContainerOptions(
        devices=section.optional(
            "devices", (), Node.strings, pattern=DEVICE_PATH, expected="a /dev/ path"
        ),
        env=section.optional("env", {}, _env),
        shm_size=section.optional(
            "shm_size", None, Node.text, pattern=SHM_SIZE, expected="a size such as 2g"
        ),
        group_add=section.optional("group_add", (), Node.strings),
        privileged=section.optional("privileged", False, Node.flag),
    )


def _build_env(node: Node) -> dict[str, str]:
    env = {}
    for name, value in node.entries(what="a mapping of variable name to value"):
        if not ENV_NAME.fullmatch(name):
            raise node.child(name, value.value).error("expected a variable name such as MAX_JOBS")
        env[name] = value.text(empty_ok=True, expected="text (quote numbers: \"2\")")
    return env


def read_build(node: Node) -> BuildStep:
    section = node.section(("commands",), ("env",), what="a mapping of commands and env")
    return BuildStep(
        commands=section["commands"].strings(expected="a shell command", non_empty=True),
        env=section.optional("env", {}, _build_env),
    )


def _id(node: Node, directory: Path) -> str:
    vendor_id = node.text(pattern=VENDOR_ID, expected="a lower-case id of 2 to 32 a-z, 0-9, -")
    if vendor_id != directory.name:
        raise node.expected(f"the directory name {directory.name!r}")
    return vendor_id


def read_profile(node: Node, directory: Path) -> VendorProfile:
    """The profile ``node`` holds, for the vendor directory ``directory``."""
    fields = node.section(REQUIRED_FIELDS, OPTIONAL_FIELDS, what="a mapping of profile fields")
    return VendorProfile(
        id=_id(fields["id"], directory),
        display_name=fields["display_name"].text(),
        contact=fields["contact"].text(pattern=CONTACT, expected="contact details"),
        docs_url=fields["docs_url"].text(pattern=LINK, expected="an http:// or https:// link"),
        device_type=fields["device_type"].text(
            pattern=DEVICE_TYPE, expected="a torch device type such as cpu, cuda or npu"
        ),
        import_modules=fields.optional(
            "import_modules", (), Node.strings, pattern=MODULE_NAME, expected="a module name"
        ),
        requirements=fields.optional("requirements", (), read_requirements, directory),
        install_script=fields.optional("install_script", None, _read_confined, directory),
        dtypes=fields["dtypes"].choices(DTYPES, non_empty=True, unique=True),
        flows=fields.optional("flows", ("eager",), read_flows),
        skip_manifest=_read_confined(fields["skip_manifest"], directory),
        container=fields.optional("container", ContainerOptions(), read_container),
        directory=directory.resolve(),
        accepts_grade=fields.optional("accepts_grade", None, Node.text),
        flow_options=fields.optional("flow_options", {}, read_flow_options),
        device_env=fields.optional(
            "device_env", None, Node.text, pattern=ENV_NAME, expected="a variable name"
        ),
        device_memory_mib=fields.optional(
            "device_memory_mib", None, Node.integer, minimum=1, what="the device memory in MiB"
        ),
        build=fields.optional("build", BuildStep(), read_build),
        autocast=fields.optional("autocast", (), Node.choices, AUTOCAST_DTYPES, unique=True),
        synchronize=fields.optional(
            "synchronize", None, Node.text, pattern=CALL_NAME,
            expected="a dotted name such as torch.cuda.synchronize",
        ),
        max_memory_allocated=fields.optional(
            "max_memory_allocated", None, Node.text, pattern=CALL_NAME,
            expected="a dotted name such as torch.cuda.max_memory_allocated",
        ),
        process_group_backend=fields.optional(
            "process_group_backend", None, Node.text, pattern=MODULE_NAME,
            expected="a torch.distributed backend name such as gloo",
        ),
        process_group_transport=_read_transport(fields),
        compile_backends=fields.optional(
            "compile_backends", (), Node.strings, pattern=MODULE_NAME, unique=True,
            expected="a torch.compile backend name such as inductor",
        ),
    )


def _read_transport(fields: Section) -> CollectiveTransport | None:
    """``process_group_transport``: required with ``process_group_backend``, refused without."""
    node = fields.get("process_group_transport")
    if (node is None) == ("process_group_backend" not in fields.data):
        return None if node is None else CollectiveTransport(
            node.choice([transport.value for transport in CollectiveTransport]))
    if node is None:
        raise fields.node.child("process_group_transport", None).error(
            "missing; a profile claiming process_group_backend says where its collectives run: "
            "native (on the device) or host-copy (on host copies of the device tensors)")
    raise node.error("given without process_group_backend, the backend it describes")


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
    return read_profile(Node.read(source), directory)
