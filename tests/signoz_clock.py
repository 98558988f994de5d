"""A clock for the SigNoz client (``signoz_http.Clock``) whose time moves only when something sleeps.

Deadlines, timeouts and back-offs of seconds or minutes then pass in no real time, and a read ends the
same way on every run, however fast or loaded the machine is:

- ``sleep(s)`` moves the time ``s`` forward at once: the client's back-off, or a slow server's delay
  (the test double sleeps on the clock it is given);
- ``wait(event, s)``, the client waiting for an answer, moves no time: it is True when the event is set
  while the time is still before its end, and False as soon as a sleep has moved the time to its end.
  An answer sent after such a sleep (a server that slept past the end, then answered) comes too late,
  as it would on a real clock;
- ``monotonic()`` starts at 1000 s, so that a reading is never mistaken for a duration.

A wait that no sleep can end (a test whose server neither answers nor sleeps) fails after
``guard_s`` of real time instead of hanging the suite; that guard is no bound on what is tested.
"""

from __future__ import annotations

import threading
import time

__all__ = ["FakeClock"]


class FakeClock:
    def __init__(self, start: float = 1000.0, *, guard_s: float = 60.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self._guard_s = guard_s
        self.sleeps: list[float] = []  # every sleep asked, in order, by the client or the double

    def monotonic(self) -> float:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self._now += max(seconds, 0.0)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        with self._lock:
            end = self._now + seconds
        give_up = time.monotonic() + self._guard_s
        while True:
            answered = event.wait(0.001)  # real time: only how often the fake time is looked at
            with self._lock:  # read after the event: a sleep that came before the answer is seen
                if self._now >= end:
                    return False
            if answered:
                return True
            if time.monotonic() > give_up:
                raise AssertionError(f"nothing moved the fake clock for {self._guard_s:g} s of a wait")
