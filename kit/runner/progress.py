"""A progress line on stderr: tests done/total, failures so far, ETA."""

from __future__ import annotations

import collections
import statistics
import sys
import threading
import time
from typing import TextIO

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
    def __init__(self, total: int, done: int = 0, failed: int = 0, stream: TextIO | None = None):
        self.total = total
        self.done = done
        self.failed = failed
        self._start_done = done
        self._started = time.monotonic()
        self._last_plain = 0.0
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._lock = threading.Lock()
        #: When each of the last ``RECENT`` tests was recorded.
        self._recent: collections.deque[float] = collections.deque(maxlen=RECENT)

    def line(self) -> str:
        fraction = self.done / self.total if self.total else 1.0
        filled = int(round(fraction * _BAR_WIDTH))
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        remaining = self.remaining_s()
        eta = _clock(remaining) if remaining is not None else "--:--"
        return f"[{bar}] {self.done}/{self.total} failed {self.failed} ETA {eta}"

    def remaining_s(self) -> float | None:
        """Seconds left at this run's pace so far; None until a test ran."""
        ran = self.done - self._start_done
        elapsed = time.monotonic() - self._started
        return elapsed / ran * (self.total - self.done) if ran else None

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

    def advance(self, failed: bool) -> None:
        with self._lock:
            self.done += 1
            self.failed += int(failed)
            self._recent.append(time.monotonic())
            self._render(final=self.done == self.total)

    def note(self, text: str) -> None:
        with self._lock:
            prefix = "\r\033[K" if self._tty else ""
            self._stream.write(f"{prefix}{text}\n")
            self._render(final=False)

    def _render(self, final: bool) -> None:
        now = time.monotonic()
        if self._tty:
            self._stream.write("\r\033[K" + self.line() + ("\n" if final else ""))
        elif final or now - self._last_plain >= _PLAIN_INTERVAL_S:
            self._stream.write(self.line() + "\n")
            self._last_plain = now
        self._stream.flush()
