"""Skip manifests and the standard's skip policy.

Policy (from the standard): an unexpired entry skips the tests it matches; an expired entry
skips nothing and counts as a failure; an entry that matches no collected test is stale; a
matched test the standard marks never-skip is a policy violation (no "conformant" grade).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kit.config_reader import Node
from kit.hashing import sha256_file
from kit.patterns import matches

#: Every skip-manifest reason starts with this, so a skip can be told from "not applicable".
SKIP_PREFIX = "skip manifest: "


@dataclass(frozen=True)
class SkipEntry:
    test: str
    reason: str
    tracking: str
    expires: dt.date
    note: str = ""

    def describe(self) -> str:
        """The reason a skipped test shows, in pytest and in the report alike."""
        return f"{SKIP_PREFIX}{self.reason} ({self.tracking}, expires {self.expires})"

    def is_expired(self, today: dt.date) -> bool:
        return today > self.expires

    def to_json(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "reason": self.reason,
            "tracking": self.tracking,
            "expires": self.expires.isoformat(),
            "note": self.note,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SkipEntry:
        """An entry as a report recorded it (``to_json``), to grade the report again."""
        return cls(
            test=str(data["test"]),
            reason=str(data["reason"]),
            tracking=str(data["tracking"]),
            expires=dt.date.fromisoformat(data["expires"]),
            note=str(data.get("note", "")),
        )


@dataclass(frozen=True)
class SkipDecision:
    """What the manifest says about one test id."""

    entry: SkipEntry | None
    skip: bool
    expired: bool

    @property
    def details(self) -> dict[str, Any]:
        if self.entry is None:
            return {}
        return {"skip": {**self.entry.to_json(), "expired": self.expired}}


NO_SKIP = SkipDecision(entry=None, skip=False, expired=False)


@dataclass(frozen=True)
class SkipManifest:
    entries: tuple[SkipEntry, ...]
    source: Path | None = None
    sha256: str = ""

    def decide(self, test_id: str, today: dt.date) -> SkipDecision:
        """The first matching entry wins, as in the file's order."""
        for entry in self.entries:
            if matches(test_id, entry.test):
                expired = entry.is_expired(today)
                return SkipDecision(entry=entry, skip=not expired, expired=expired)
        return NO_SKIP

    def stale_entries(self, test_ids: Iterable[str]) -> list[SkipEntry]:
        ids = list(test_ids)
        return [e for e in self.entries if not any(matches(t, e.test) for t in ids)]

    def expired_entries(self, today: dt.date) -> list[SkipEntry]:
        return [e for e in self.entries if e.is_expired(today)]


#: The keys of a skip entry: these it must give, and ``note`` optionally.
ENTRY_FIELDS = ("test", "reason", "tracking", "expires")
#: The reasons an entry may give (the standard's ``skip_policy.reasons`` may allow fewer).
REASONS = ("unsupported-op", "unsupported-dtype", "precision", "infra", "upstream-bug")
TRACKING_LINK = re.compile(r"https?://\S+")


def read_skip_entry(node: Node) -> SkipEntry:
    fields = node.section(ENTRY_FIELDS, ("note",), what="a mapping of skip entry fields")
    return SkipEntry(
        test=fields["test"].text(expected="a test id or glob"),
        reason=fields["reason"].choice(REASONS),
        tracking=fields["tracking"].text(
            pattern=TRACKING_LINK, expected="an http:// or https:// link"
        ),
        # Quoted or not: a manifest written by hand or by a tool reads the same.
        expires=fields["expires"].date(quoted=True),
        note=fields.optional("note", "", Node.text, empty_ok=True),
    )


def load_skip_manifest(source: Path) -> SkipManifest:
    document = Node.read(source)
    if document.value is None:  # an empty file skips nothing
        return SkipManifest(entries=(), source=source, sha256=sha256_file(source))
    skips = document.section(("skips",), what="a mapping with the key skips")["skips"]
    entries = tuple(read_skip_entry(item) for item in skips.items(what="a list of skip entries"))
    return SkipManifest(entries=entries, source=source, sha256=sha256_file(source))
