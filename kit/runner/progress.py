"""A progress line on stderr: tests done/total, failures so far, ETA, and the test running now
with its tier (the one a slot started last), so a slow or hung test is seen by name.

The ETA goes tier by tier: a run's tiers differ by orders of magnitude a test (a compiled model
takes seconds, a unit test milliseconds), so each tier's tests left are timed at that tier's own
pace so far; a tier none of whose tests has finished yet is not guessed at, and the ETA then
ends in ``+`` (that much, plus the tiers not timed yet).
"""

from __future__ import annotations

import collections
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Mapping
from typing import TextIO

from kit.errors import InputError
from kit.test_ids import TestId

_BAR_WIDTH = 24
_PLAIN_INTERVAL_S = 15.0
#: The tests whose pace ``recent_remaining_s`` goes by.
RECENT = 64


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


class Progress:
    def __init__(self, total: int, done: int = 0, failed: int = 0, stream: TextIO | None = None,
                 left_by_tier: Mapping[str, int] | None = None):
        """``left_by_tier``: the tests of each tier still to run (default: one tier, "")."""
        self.total = total
        self.done = done
        self.failed = failed
        self._started = time.monotonic()
        self._left = collections.Counter(left_by_tier or {"": total - done})
        #: Per tier: tests recorded, and the wall seconds since the record before each.
        self._timed: dict[str, tuple[int, float]] = {}
        self._last_record = self._started
        self._last_plain = 0.0
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._lock = threading.Lock()
        #: When each of the last ``RECENT`` tests was recorded.
        self._recent: collections.deque[float] = collections.deque(maxlen=RECENT)
        #: The test a slot started last (None: none yet, or the run is over).
        self.running: str | None = None

    def line(self, width: int | None = None) -> str:
        fraction = self.done / self.total if self.total else 1.0
        filled = int(round(fraction * _BAR_WIDTH))
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        remaining = self.remaining_s()
        eta = _clock(remaining) if remaining is not None else "--:--"
        if remaining is not None and self.untimed_tiers_left():
            eta += "+"
        counts = f"[{bar}] {self.done}/{self.total} failed {self.failed} ETA {eta}"
        if self.running is None:
            return counts
        return _fitted(f"{counts} | {_tier_words(self.running)}: ", self.running, width)

    def start(self, test_id: str) -> None:
        """A slot hands ``test_id`` to its worker: the line names it until the next one."""
        with self._lock:
            self.running = test_id
            if self._tty:  # a plain stream keeps its one line per interval
                self._render(final=False)

    def remaining_s(self) -> float | None:
        """Seconds left for the tiers timed so far, each at its own pace; None until a test ran."""
        timed = [self._left[tier] * seconds / count
                 for tier, (count, seconds) in self._timed.items()]
        return sum(timed) if timed else None

    def untimed_tiers_left(self) -> bool:
        """Whether a tier with tests left has had none of them finish yet."""
        return any(left and tier not in self._timed for tier, left in self._left.items())

    def recent_remaining_s(self, min_tests: int, min_s: float) -> float | None:
        """Seconds left at the recent pace: the median time between the last ``RECENT``
        tests' records (a run's tiers differ by orders of magnitude a test; the median is not
        swayed by a few slow tests among fast ones). None until ``min_tests`` ran, or two and
        ``min_s`` seconds passed."""
        with self._lock:  # slot threads append as they record
            times = list(self._recent)
        ran = len(times)
        elapsed = time.monotonic() - self._started
        if ran < 2 or (ran < min_tests and elapsed < min_s):
            return None
        pace = statistics.median(b - a for a, b in zip(times, times[1:], strict=False))
        return pace * (self.total - self.done)

    def advance(self, failed: bool, test_id: str | None = None) -> None:
        """One test recorded (``test_id`` names its tier; None: the run's only tier)."""
        with self._lock:
            self.done += 1
            if self.done == self.total:
                self.running = None
            self.failed += int(failed)
            now = time.monotonic()
            self._recent.append(now)
            self._time(_tier_of(test_id) if test_id is not None else "", now)
            self._render(final=self.done == self.total)

    def _time(self, tier: str, now: float) -> None:
        if tier not in self._left:  # not in the plan's tiers: counted with the run's only one
            tier = next(iter(self._left), "")
        self._left[tier] = max(self._left[tier] - 1, 0)
        count, seconds = self._timed.get(tier, (0, 0.0))
        self._timed[tier] = (count + 1, seconds + now - self._last_record)
        self._last_record = now

    def note(self, text: str) -> None:
        with self._lock:
            prefix = "\r\033[K" if self._tty else ""
            self._stream.write(f"{prefix}{text}\n")
            self._render(final=False)

    def _render(self, final: bool) -> None:
        now = time.monotonic()
        if self._tty:
            # One terminal line: a line that wraps is never erased by the next "\r".
            width = shutil.get_terminal_size().columns - 1
            self._stream.write("\r\033[K" + self.line(width) + ("\n" if final else ""))
        elif final or now - self._last_plain >= _PLAIN_INTERVAL_S:
            self._stream.write(self.line() + "\n")
            self._last_plain = now
        self._stream.flush()


def _tier_of(test_id: str) -> str:
    try:
        return TestId.split(test_id).tier
    except InputError:
        return ""  # not an id's form


def _tier_words(test_id: str) -> str:
    tier = _tier_of(test_id)
    return f"tier {tier}" if tier else "test"  # not an id's form: named as it is


def _fitted(head: str, test_id: str, width: int | None) -> str:
    """``head`` then ``test_id``, its start cut ("...") where the line would pass ``width``."""
    room = None if width is None else width - len(head)
    if room is None or len(test_id) <= room:
        return head + test_id
    return head + "..." + test_id[-max(room - 3, 8):]
