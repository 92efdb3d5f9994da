"""Running one ``docker build`` with the classic builder: streamed log, named failing step, cache.

Every ``RUN`` in the kit's Dockerfiles starts with ``echo "ckit-step: <name>"``; the step a build
died in is named by the last such marker, so a broken vendor recipe reads as "failed at step
'vendor install_script'" instead of a shell command line.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import docker
import docker.errors

from kit.errors import EnvironmentProblem

LogSink = Callable[[str], None]

_STEP = re.compile(r"^Step \d+/\d+ : (?P<instruction>.*)$")
_MARKER = re.compile(r'ckit-step: (?P<name>[^"\n]+)')
_EXIT_CODE = re.compile(r"returned a non-zero code: (?P<code>\d+)")
# The engine colours a step's stderr; the parsed log must not carry the escapes.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_BUILDER_NOISE = ("--->", "Removing intermediate", "The command '")


class ImageBuildFailed(EnvironmentProblem):
    """A layer did not build; ``step`` names where, the log file holds everything."""

    def __init__(self, tag: str, step: str, reason: str, log_path: Path) -> None:
        self.tag = tag
        self.step = step
        self.reason = reason
        self.log_path = log_path
        super().__init__(f"building {tag} failed at step {step!r}: {reason} (log: {log_path})")


@dataclass(frozen=True)
class BuildSteps:
    """The classic builder's log, split into its steps."""

    steps: tuple[tuple[str, tuple[str, ...]], ...] = field(default_factory=tuple)

    @classmethod
    def parse(cls, log: str) -> BuildSteps:
        steps: list[tuple[str, list[str]]] = []
        for line in _ANSI.sub("", log).splitlines():
            match = _STEP.match(line.strip())
            if match:
                steps.append((match["instruction"], []))
            elif steps:
                steps[-1][1].append(line)
        return cls(tuple((instruction, tuple(lines)) for instruction, lines in steps))

    def all_cached(self) -> bool:
        """Did every step that makes a layer come from the cache? (FROM/ARG make none.)"""
        layered = [lines for i, lines in self.steps if not i.upper().startswith(("FROM", "ARG"))]
        return bool(layered) and all(any("Using cache" in ln for ln in lines) for lines in layered)

    def last_step_name(self) -> str:
        if not self.steps:
            return "start"
        instruction, _ = self.steps[-1]
        marker = _MARKER.search(instruction)
        return marker["name"].strip() if marker else instruction[:80]

    def last_output_line(self) -> str:
        if not self.steps:
            return ""
        _, lines = self.steps[-1]
        meaningful = [
            line.strip()
            for line in lines
            if line.strip()
            and not line.strip().startswith(_BUILDER_NOISE)
            and not _MARKER.search(line)
        ]
        return meaningful[-1] if meaningful else ""


@dataclass(frozen=True)
class BuiltImage:
    """One built layer, as `ckit image build` prints it and a report can record it."""

    layer: str
    tag: str
    image_id: str
    os: str
    base: str
    vendor: str | None
    size_bytes: int
    build_s: float
    cached: bool
    labels: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """The fields as ``ckit image build --json`` prints them (the dataclass is the type)."""
        return asdict(self)


@dataclass(frozen=True)
class BuildRequest:
    context: Path
    tag: str
    buildargs: dict[str, str]
    log_path: Path


def run_build(
    client: docker.DockerClient, request: BuildRequest, sink: LogSink | None = None
) -> tuple[str, BuildSteps, float]:
    """Build ``request``; return (image id, parsed log, seconds). Raises ``ImageBuildFailed``."""
    request.log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    log_parts: list[str] = []
    error: str | None = None
    with request.log_path.open("w", encoding="utf-8") as log_file:
        for text, chunk_error in _stream(client, request):
            log_parts.append(text)
            log_file.write(text)
            if sink is not None and text:
                sink(text)
            error = error or chunk_error
    steps = BuildSteps.parse("".join(log_parts))
    elapsed = time.monotonic() - started
    if error is not None:
        reason = _reason(error, steps)
        raise ImageBuildFailed(request.tag, steps.last_step_name(), reason, request.log_path)
    image_id = client.images.get(request.tag).id
    return image_id, steps, elapsed


def _stream(client: docker.DockerClient, request: BuildRequest) -> Iterator[tuple[str, str | None]]:
    try:
        chunks = client.api.build(
            path=str(request.context),
            tag=request.tag,
            buildargs=request.buildargs,
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
        )
        for chunk in chunks:
            if "error" in chunk:
                message = str(chunk.get("errorDetail", {}).get("message") or chunk["error"])
                yield message + "\n", message
            elif "stream" in chunk:
                yield str(chunk["stream"]), None
    except docker.errors.APIError as exc:
        message = str(exc.explanation or exc)
        yield message + "\n", message


def _reason(error: str, steps: BuildSteps) -> str:
    exit_code = _EXIT_CODE.search(error)
    if exit_code is None:
        return error.strip().splitlines()[0][:300]
    last = steps.last_output_line()
    said = f": {last[:200]}" if last else ""
    return f"exit code {exit_code['code']}{said}"


def build_log_dir() -> Path:
    """Per-user cache directory for build logs (never inside the checkout)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ckit" / "image-builds"


def log_path_for(tag: str) -> Path:
    return build_log_dir() / (re.sub(r"[^A-Za-z0-9_.-]+", "_", tag) + ".log")
