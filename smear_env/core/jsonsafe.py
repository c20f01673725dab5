"""Strict JSON parsing for files a user hands in (game records, checkpoint metadata).

:func:`loads_strict` is ``json.loads`` that also rejects what the standard library lets through: an object
with a repeated key (``{"bid": 2, "bid": 4}``: readers disagree on which one counts), the non-standard
constants ``NaN``, ``Infinity`` and ``-Infinity``, and it turns every parse failure (including an integer
of more digits than Python converts, and nesting too deep for the parser) into one :class:`JsonError`
(a ``ValueError``) with a short reason. :func:`json_depth` measures a text's nesting without parsing it, in
time linear in its length (a check to make before ``json.loads``, which recurses).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .actions import short_repr


class JsonError(ValueError):
    """A text is not strict JSON (see the module docstring); the message says why."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise JsonError(f"duplicate key {short_repr(k)} in a JSON object")
        out[k] = v
    return out


def _no_constant(name: str) -> Any:
    raise JsonError(f"{name} is not JSON (only finite numbers are)")


_CHUNK = 1 << 20


def json_depth(text: str | bytes) -> int:
    """Deepest nesting of ``[`` / ``{`` in a JSON text (brackets inside strings skipped), without parsing
    it: linear in the text's length, a megabyte at a time (numpy), whatever the text holds."""
    data = text.encode("utf-8", errors="replace") if isinstance(text, str) else bytes(text)
    depth = deepest = 0
    quotes = 0  # unescaped quotes so far: odd inside a string
    run = 0  # backslashes just before the chunk
    for start in range(0, len(data), _CHUNK):
        a = np.frombuffer(data, dtype=np.uint8, count=min(_CHUNK, len(data) - start), offset=start)
        idx = np.arange(a.size, dtype=np.int64)
        bs = a == ord("\\")
        last_other = np.maximum.accumulate(np.where(bs, -1, idx))  # last non-backslash at or before i
        through = np.where(last_other < 0, idx + 1 + run, idx - last_other)  # backslashes ending at i
        before = np.empty_like(through)
        before[0] = run
        before[1:] = through[:-1]
        quote = (a == ord('"')) & (before % 2 == 0)
        inside = ((np.cumsum(quote) + quotes) % 2).astype(bool)  # a quote counts as inside: no bracket
        steps = ((a == ord("[")) | (a == ord("{"))).astype(np.int64)
        steps -= (a == ord("]")) | (a == ord("}"))
        steps[inside] = 0
        level = np.cumsum(steps) + depth
        deepest = max(deepest, int(level.max()))
        depth = int(level[-1])
        quotes += int(quote.sum())
        run = int(through[-1])
    return deepest


def loads_strict(text: str | bytes) -> Any:
    """Parse ``text`` as strict JSON (module docstring); :class:`JsonError` with the reason otherwise."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except JsonError:
        raise
    except json.JSONDecodeError as e:
        raise JsonError(str(e)) from None
    except RecursionError:
        raise JsonError("nested too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:  # e.g. an integer beyond sys.get_int_max_str_digits()
        raise JsonError(short_repr(str(e), 120)) from None


__all__ = ["JsonError", "json_depth", "loads_strict"]
