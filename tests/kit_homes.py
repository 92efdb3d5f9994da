"""A kit home (``CKIT_HOME``) holding a copy of the checkout's standards whose current standard
says something more: the one way tests give a tier a short limit or an extra list."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kit.standard import load_standard
from kit.standard.catalogue import standard_directory


def kit_home_with(home: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """``home`` made a kit home: the standards copied, ``change`` applied to the current
    standard's ``standard.yaml`` (as a mapping); returns the current standard's directory."""
    version = load_standard().version
    shutil.copytree(standard_directory(version).parent, home / "standards")
    source = home / "standards" / version / "standard.yaml"
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    change(data)
    source.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return source.parent


def kit_home_with_limits(home: Path, **limits: int) -> Path:
    """``home`` made a kit home whose current standard gives each named tier its limit (s)."""
    kit_home_with(home, lambda data: data.setdefault("timeouts", {}).update(limits))
    return home
