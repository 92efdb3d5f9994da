"""What both templates share: checking the run they start, and writing YAML text.

The text is deterministic (same inputs, same bytes): keys keep the order the engine built them
in, and no line is folded, so a shell line stays one line for a reader to copy.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from kit.engines.interface import ShardedRun
from kit.errors import InputError, KitCrash
from kit.signing.keys import check_vendor_id

_SCHEMAS = Path(__file__).parent / "schemas"
#: ``ckit run`` options each shard's command sets itself, or that would leave a shard the merge
#: refuses (``--no-sign``: shards are signed); given again they would contradict it.
RESERVED_RUN_OPTIONS = ("--vendor", "--shard", "--out", "--no-sign", "--key", "--resume")
#: The merge's command line names every shard directory, and each engine starts one job per
#: shard: a count far beyond any cluster's would only build a command no system takes.
MAX_SHARDS = 4096


def _reserved(arg: str) -> str | None:
    return next((o for o in RESERVED_RUN_OPTIONS if arg == o or arg.startswith(f"{o}=")), None)


def check_sharded_run(run: ShardedRun) -> ShardedRun:
    """One line for a run no engine can start: a bad vendor id, no shards, a clashing option."""
    check_vendor_id(run.vendor)
    if run.shards < 1:
        raise InputError(f"--shards: a run has at least 1 shard, got {run.shards}")
    if run.shards > MAX_SHARDS:
        raise InputError(f"--shards: a run has at most {MAX_SHARDS} shards, got {run.shards}")
    if not run.root:
        raise InputError("--root: the shared directory must not be empty")
    clash = next((o for o in map(_reserved, run.run_args) if o is not None), None)
    if clash is not None:
        raise InputError(
            f"extra ckit run option {clash}: the template sets it for every shard; leave it out"
        )
    return run


class _TemplateDumper(yaml.SafeDumper):
    """Plain YAML a reader can follow: no anchors or aliases, multi-line scripts as blocks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.Node:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_TemplateDumper.add_representer(str, _represent_str)


def yaml_text(documents: Sequence[Mapping[str, Any]], header: Sequence[str] = ()) -> str:
    """``documents`` as one YAML stream, after ``header`` as ``#`` comment lines."""
    comments = "".join(f"# {line}\n".replace("# \n", "#\n") for line in header)
    body = yaml.dump_all(
        [dict(d) for d in documents], Dumper=_TemplateDumper, sort_keys=False,
        default_flow_style=False, width=1 << 16, explicit_start=len(documents) > 1,
    )
    return comments + body


@functools.cache
def _validator(schema_name: str) -> jsonschema.protocols.Validator:
    schema = json.loads((_SCHEMAS / schema_name).read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def schema_problems(document: Any, schema_name: str) -> list[str]:
    """Each way ``document`` breaks ``schemas/<schema_name>``, as ``field: problem``."""
    errors = sorted(_validator(schema_name).iter_errors(document), key=lambda e: list(e.path))
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top level)'}: {e.message}" for e in errors]


def check_rendered(document: Any, schema_name: str) -> None:
    """A template the kit's own schema refuses is the kit's bug, never the user's input."""
    problems = schema_problems(document, schema_name)
    if problems:
        raise KitCrash(f"the rendered template breaks {schema_name}: {problems[0]}")
