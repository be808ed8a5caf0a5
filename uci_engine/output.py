"""Whole-line, flushed, thread-safe output to the GUI.

The loop thread and the search thread both print; a lock makes every line
arrive whole, and a vanished GUI (broken pipe) silences output instead of
raising in whichever thread happened to write.
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, TextIO


#: Longest `info string` text sent; longer messages are cut.
MAX_MESSAGE = 300


class Output:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.lock = threading.Lock()
        self.closed = False
        #: Run once when a write finds the reader gone (the engine stops its search).
        self.on_close: Callable[[], None] | None = None

    def send(self, line: str) -> None:
        with self.lock:
            if self.closed:
                return
            try:
                self.stream.write(line + "\n")
                self.stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.closed = True
                if self.on_close is not None:
                    self.on_close()

    def info_string(self, message: str) -> None:
        # Newlines would end the info line early and confuse the GUI, and
        # echoing a huge bad input back in full would flood it.
        text = " ".join(message.split())
        if len(text) > MAX_MESSAGE:
            text = text[:MAX_MESSAGE] + f"... ({len(text)} chars)"
        self.send("info string " + text)
