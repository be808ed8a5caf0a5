"""Whole-line, flushed, thread-safe output to the GUI.

The loop thread and the search thread both print; a lock makes every line
arrive whole, and a vanished GUI (broken pipe) silences output instead of
raising in whichever thread happened to write.
"""
from __future__ import annotations

import sys
import threading
from typing import TextIO


class Output:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.lock = threading.Lock()
        self.closed = False

    def send(self, line: str) -> None:
        with self.lock:
            if self.closed:
                return
            try:
                self.stream.write(line + "\n")
                self.stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.closed = True

    def info_string(self, message: str) -> None:
        # Newlines would end the info line early and confuse the GUI.
        self.send("info string " + " ".join(message.split()))
