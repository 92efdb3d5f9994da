"""The run journal: one JSON line per finished test, appended and fsynced as it finishes."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from kit.outfiles import open_for_append
from kit.results import TestRecord

JOURNAL_NAME = "journal.jsonl"


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._fd = open_for_append(path)  # O_NOFOLLOW: a planted link is refused, not followed

    def append(self, record: TestRecord) -> None:
        line = (json.dumps(record.to_json(), sort_keys=True) + "\n").encode("utf-8")
        with self._lock:
            os.write(self._fd, line)
            os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def load_journal(path: Path) -> dict[str, TestRecord]:
    """Finished records by id; a torn last line (killed mid-write) is ignored, later lines win."""
    records: dict[str, TestRecord] = {}
    if not path.exists():
        return records
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = TestRecord.from_json(json.loads(line))
        except (ValueError, KeyError, TypeError):
            continue
        records[record.id] = record
    return records
