"""The ``key=value,...`` options of an agent spec (``pimc:samples=16``, ``cmd[timeout=5]:...``), read the same
way by :mod:`smear_env.agents.registry` and :mod:`smear_env.agents.protocol`."""

from __future__ import annotations

from typing import Any

from ..core.actions import short_repr

__all__ = ["MAX_VALUE_CHARS", "parse_key_values", "parse_value", "shown_spec"]

MAX_VALUE_CHARS = 4096
"""The longest option value accepted: a file path fits (a ``rollout:base=`` checkpoint), while
``pimc:samples=<5,000 digits>`` is an error, not a number."""


def shown_spec(spec: str) -> str:
    """``repr(spec)`` cut to about 120 characters, for error messages."""

    return short_repr(spec, 120)


def parse_value(text: str) -> Any:
    """An option value: an int, else a float, else ``true``/``false`` (any case) as a bool, else the text."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    return text


def parse_key_values(spec: str, text: str, hint: str) -> dict[str, Any]:
    """``"samples=16,budget_ms=80"`` -> ``{"samples": 16, "budget_ms": 80}`` (values by :func:`parse_value`);
    a part that is not ``key=value`` (``hint`` ends the message) or a key given twice -> ``ValueError``
    naming ``spec``."""
    options: dict[str, Any] = {}
    if not text:
        return options
    for part in text.split(","):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier() or not value.strip():
            raise ValueError(f"bad agent spec {shown_spec(spec)}: option {shown_spec(part)} is not "
                             f"key=value; {hint}")
        if len(value.strip()) > MAX_VALUE_CHARS:
            raise ValueError(f"bad agent spec {shown_spec(spec)}: the value of option {key!r} is "
                             f"{len(value.strip()):,} characters long (at most {MAX_VALUE_CHARS})")
        if key in options:
            raise ValueError(f"bad agent spec {shown_spec(spec)}: option {key!r} given twice")
        options[key] = parse_value(value.strip())
    return options
