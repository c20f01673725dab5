"""Strict JSON parsing for files a user hands in (game records, checkpoint metadata).

:func:`loads_strict` is ``json.loads`` that also rejects what the standard library lets through: an object
with a repeated key (``{"bid": 2, "bid": 4}``: readers disagree on which one counts), the non-standard
constants ``NaN``, ``Infinity`` and ``-Infinity``, and it turns every parse failure (including an integer
of more digits than Python converts, and nesting too deep for the parser) into one :class:`JsonError`
(a ``ValueError``) with a short reason.
"""

from __future__ import annotations

import json
from typing import Any

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


__all__ = ["JsonError", "loads_strict"]
