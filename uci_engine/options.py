"""UCI options: declaration, `option` lines, and checked `setoption` parsing."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from search.features import Features

#: Environment variable that flips search switches for measurement (see
#: `Features.with_spec`), e.g. PAWNSTORM_FEATURES=quiet_pruning.  Not a UCI
#: option: users never need it, and a GUI's option list stays the user's.
FEATURES_VARIABLE = "PAWNSTORM_FEATURES"


@dataclass
class Option:
    name: str
    kind: str  # "spin", "check", "button", "string"
    default: int | bool | str | None = None
    minimum: int | None = None
    maximum: int | None = None
    value: int | bool | str | None = None

    def __post_init__(self) -> None:
        self.value = self.default

    def declaration(self) -> str:
        """The `option ...` line sent in reply to `uci`."""
        line = f"option name {self.name} type {self.kind}"
        if self.kind == "check":
            line += f" default {'true' if self.default else 'false'}"
        elif self.kind == "spin":
            line += f" default {self.default} min {self.minimum} max {self.maximum}"
        elif self.kind == "string":
            line += f" default {self.default}"
        return line

    def parse(self, text: str | None) -> tuple[int | bool | str | None, str | None]:
        """(value to set, warning) for `setoption ... value text`; value None: rejected."""
        if self.kind == "button":
            return True, None
        if text is None:
            if self.kind == "string":
                return "", None
            return None, f"option {self.name} needs a value"
        if self.kind == "check":
            lowered = text.strip().lower()
            if lowered in ("true", "false"):
                return lowered == "true", None
            return None, f"option {self.name} expects true or false, got {text!r}"
        if self.kind == "spin":
            try:
                number = int(float(text.strip()))
            except (ValueError, OverflowError):
                return None, f"option {self.name} expects an integer, got {text!r}"
            assert self.minimum is not None and self.maximum is not None
            clamped = min(max(number, self.minimum), self.maximum)
            if clamped != number:
                return clamped, (f"option {self.name} value {number} out of range "
                                 f"[{self.minimum}, {self.maximum}], using {clamped}")
            return number, None
        return text, None


class Options:
    """The engine's options by case-insensitive name, with change callbacks."""

    def __init__(self) -> None:
        self._options: dict[str, Option] = {}
        self._callbacks: dict[str, Callable[[Option], None]] = {}

    def add(self, option: Option, on_change: Callable[[Option], None] | None = None) -> None:
        self._options[option.name.lower()] = option
        if on_change:
            self._callbacks[option.name.lower()] = on_change

    def __getitem__(self, name: str) -> int | bool | str | None:
        return self._options[name.lower()].value

    def declarations(self) -> list[str]:
        return [option.declaration() for option in self._options.values()]

    def set(self, name: str, text: str | None) -> list[str]:
        """Apply a setoption; returns messages for the GUI (unknown, clamped, ...)."""
        option = self._options.get(" ".join(name.split()).lower())
        if option is None:
            return [f"unknown option {name!r}"]
        value, warning = option.parse(text)
        messages = [warning] if warning else []
        if value is not None:
            previous, option.value = option.value, value
            callback = self._callbacks.get(option.name.lower())
            if callback:
                try:
                    callback(option)
                except Exception:
                    option.value = previous  # not applied: the option keeps saying what is in force
                    raise
        return messages


def split_setoption(tokens: list[str], line: str | None = None) -> tuple[str, str | None] | None:
    """`name <words...> [value <words...>]` → (name, value); None if malformed.

    `line`, the whole command as it came: the value is then taken from it
    as written, its inner whitespace kept (a path may hold two spaces or a
    tab), instead of its words joined by one space.
    """
    if not tokens or tokens[0] != "name":
        return None
    rest = tokens[1:]
    if "value" in rest:
        at = rest.index("value")
        name, value = rest[:at], (" ".join(rest[at + 1:]) if line is None else _raw_value(line))
    else:
        name, value = rest, None
    if not name:
        return None
    return " ".join(name), value


def _raw_value(line: str) -> str:
    """What follows the first word `value` after `setoption name` in `line`, stripped at its ends only."""
    words = list(re.finditer(r"\S+", line))
    for word in words[2:]:
        if word.group() == "value":
            return line[word.end():].strip()
    raise ValueError(f"no value in {line!r}")  # (the caller found one among the same words)


def search_features(environ: Mapping[str, str] = os.environ) -> tuple[Features, list[str]]:
    """The search's switches: the defaults, changed by `FEATURES_VARIABLE` if set; and its problems."""
    features, problems = Features().with_spec(environ.get(FEATURES_VARIABLE, ""))
    return features, [f"{FEATURES_VARIABLE}: {problem}" for problem in problems]
