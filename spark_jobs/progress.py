"""The progress line of a long scan: segments and bytes done, rate, ETA; on a TTY only."""

from __future__ import annotations

import threading
import time
from typing import Any, TextIO


class Progress:
    """Polls the executors' counters (``scan.Counters``) once a second and redraws one line."""

    def __init__(self, counters: Any, out: TextIO, enabled: bool) -> None:
        self.counters = counters
        self.out = out
        self.enabled = enabled
        self.total_segments = 0
        self.total_bytes = 0
        self.started = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def set_total(self, segments: int, size: int) -> None:
        self.total_segments, self.total_bytes = segments, size
        self.started = time.monotonic()
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def line(self, segments: int, size: int, elapsed: float) -> str:
        rate = size / elapsed if elapsed > 0 else 0.0
        left = max(self.total_bytes - size, 0)
        eta = f"{left / rate:,.0f} s" if rate > 0 and size else "?"
        return (
            f"segments {segments:,}/{self.total_segments:,}, {_mib(size)}/{_mib(self.total_bytes)}"
            f" MiB, {rate / 1048576:,.1f} MiB/s, ETA {eta}"
        )

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self._draw()

    def _draw(self) -> None:
        elapsed = time.monotonic() - self.started
        text = self.line(self.counters.segments.value, self.counters.bytes.value, elapsed)
        self.out.write(f"\r\x1b[2K{text}")
        self.out.flush()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._draw()
            self.out.write("\n")
            self.out.flush()


def _mib(size: int) -> str:
    return f"{size / 1048576:,.1f}"
