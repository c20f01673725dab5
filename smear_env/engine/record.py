"""Game records (format ``smear-record/1``): validate, save, load, and replay them through the engine.

A record holds, hand by hand, the dealer, the deal, the stock and every decision, plus the results the
engine computed. :func:`replay` re-runs every decision on a fresh :class:`~smear_env.engine.game.Game` and
checks that the recomputed results equal the recorded ones (raising :class:`RecordMismatchError` naming the
hand and the field that differ); a record that is not smear-record/1 at all (missing or mistyped fields,
nesting deeper than :data:`MAX_DEPTH`) raises :class:`RecordValidationError`. Files are JSON: one record per
line (``.jsonl``) or one JSON document; :func:`load_records` names a bad line (:class:`RecordFileError`, which
carries the valid records before it) or, with ``strict=False``, returns those records with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.actions import (
    bid_action,
    discard_action,
    play_action,
    short_repr,
    trump_action,
)
from ..core.cards import SUIT_CHARS, names, parse_card
from ..core.config import SmearRules
from ..core.jsonsafe import JsonError, loads_strict
from ..core.seeding import check_seed
from .game import BIDDING, GAME_OVER, HAND_OVER, Game, IllegalActionError
from .recording import FORMAT

SCHEMA_RESOURCE = "schema/game-record.schema.json"
RESULT_FIELDS = ("points", "card_points", "made_contract", "score_change", "scores")


class RecordValidationError(ValueError):
    """A record does not conform to the ``smear-record/1`` JSON schema."""


class RecordMismatchError(ValueError):
    """Replaying a record gives a different game: ``hand`` (index, or None for game-level fields) and
    ``field`` say where."""

    def __init__(self, hand: int | None, field: str, message: str) -> None:
        where = "game" if hand is None else f"hand {hand}"
        super().__init__(f"{where}, field {field!r}: {message}")
        self.hand = hand
        self.field = field


# ---------------------------------------------------------------------------------------------- schema
def load_schema() -> dict[str, Any]:
    """The ``smear-record/1`` JSON schema shipped in ``smear_env/schema``."""
    text = resources.files("smear_env").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    return json.loads(text)


@lru_cache(maxsize=1)
def _validator() -> Any:
    try:
        import jsonschema
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "validate_record needs the 'jsonschema' package; install the dev extra: pip install -e '.[dev]'"
        ) from e
    schema = load_schema()
    base = jsonschema.validators.validator_for(schema)
    base.check_schema(schema)
    # "integer" is an int, never a float such as 3.0 (JSON Schema's number model accepts 3.0): a record's
    # bids, seats and scores are compared and indexed as ints
    strict = base.TYPE_CHECKER.redefine("integer", lambda _checker, x: isinstance(x, int)
                                        and not isinstance(x, bool))
    cls = jsonschema.validators.extend(base, type_checker=strict)
    try:
        flat = _inline_refs(schema, schema.get("$defs", {}), 0)
    except _CannotInline:
        flat = schema
    return cls(flat)


class _CannotInline(Exception):
    pass


def _inline_refs(node: Any, defs: dict[str, Any], depth: int) -> Any:
    """The schema with its local ``#/$defs/name`` references replaced by their targets (validates the same,
    about twice as fast with jsonschema). Anything else (remote or recursive references) is not inlined."""
    if depth > 50:
        raise _CannotInline
    if isinstance(node, dict):
        ref = node.get("$ref")
        if ref is not None:
            name = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
            if len(node) != 1 or name is None or name == ref or name not in defs:
                raise _CannotInline
            return _inline_refs(defs[name], defs, depth + 1)
        return {k: _inline_refs(v, defs, depth + 1) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(v, defs, depth + 1) for v in node]
    return node


MAX_DEPTH = 32
"""Deepest nesting of lists / objects accepted in a record (a real one nests about 8 levels)."""


def check_depth(obj: Any, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`RecordValidationError` when ``obj`` nests lists / dicts deeper than ``limit`` (checked
    without recursion, so a hostile record gives this error instead of ``RecursionError``)."""
    stack = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > limit:
                raise RecordValidationError(f"record nests lists/objects deeper than {limit} levels")
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))


def validate_record(rec: Any) -> None:
    """Raise :class:`RecordValidationError` unless ``rec`` conforms to the smear-record/1 schema, with
    integers exactly ints (a bid ``3.0`` or a seat ``True`` is refused) and a finished game never marked
    ``truncated``."""
    check_depth(rec)
    validator = _validator()
    errors = sorted(validator.iter_errors(rec), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        path = "/".join(str(p) for p in first.absolute_path) or "<root>"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise RecordValidationError(f"record does not match {FORMAT} at {path}: {first.message}{more}")


# ---------------------------------------------------------------------------------------------- files
def save_records(path: str | Path, records: Iterable[dict[str, Any]] | dict[str, Any]) -> None:
    """Write records as JSON. A ``.json`` path gets one JSON document (the record itself when a single
    dict is given, else an array); any other suffix (``.jsonl``) gets one record per line."""
    path = Path(path)
    single = isinstance(records, dict)
    recs = [records] if single else list(records)
    for i, r in enumerate(recs):
        if not isinstance(r, dict):
            raise TypeError(f"record {i} is a {type(r).__name__}, not a dict")
    with path.open("w", encoding="utf-8") as f:
        if path.suffix == ".json":
            json.dump(recs[0] if single else recs, f, separators=(",", ":"))
            f.write("\n")
        else:
            for r in recs:
                f.write(json.dumps(r, separators=(",", ":")))
                f.write("\n")


class RecordFileError(ValueError):
    """A records file has a bad line or record: ``line`` (1-based line of a JSON-lines file, or None for a
    single JSON document), ``index`` (of the bad record) and ``valid`` (the good records before it)."""

    def __init__(self, message: str, line: int | None, index: int, valid: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.line = line
        self.index = index
        self.valid = valid


MAX_RECORD_LINE_BYTES = 4 * 2**20
"""Longest line of a JSON-lines records file (4 MiB). A game record is far shorter: the longest the default
``max_cycles=10_000`` allows (2,500 thrown-in hands) is about 0.8 MB; a longer line is refused after reading
at most this many bytes of it."""
MAX_DOCUMENT_BYTES = 64 * 2**20
"""Largest records file read as one JSON document (an array of records, or one pretty-printed record):
64 MiB. Larger collections belong in JSON lines (``.jsonl``), which are read a line at a time."""


def _parse(text: bytes) -> Any:
    """Strict JSON (:func:`smear_env.core.jsonsafe.loads_strict`: no repeated keys, no NaN / Infinity) from
    UTF-8 bytes; :class:`~smear_env.core.jsonsafe.JsonError` with the reason otherwise."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as e:
        raise JsonError(f"not UTF-8 text (byte {e.start})") from None
    return loads_strict(decoded)


def _read_document(f: Any, path: str | Path) -> Any:
    data = f.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise RecordFileError(
            f"{path}: a JSON document larger than {MAX_DOCUMENT_BYTES // 2**20} MiB is not read; write the "
            "records as JSON lines (.jsonl, one record per line)", None, 0, [])
    return _parse(data)


def load_records(path: str | Path, *, validate: bool = False, strict: bool = True) -> list[dict[str, Any]]:
    """Read records written by :func:`save_records` (JSON lines, one JSON record, or a JSON array).

    A line that is not JSON (or not strict JSON: a repeated key in an object, ``NaN``, not UTF-8), a line
    longer than :data:`MAX_RECORD_LINE_BYTES` (refused after reading that much of it), a record that is not
    an object (or, with ``validate``, not a smear-record/1 record) raises :class:`RecordFileError` naming
    the line (its ``valid`` holds the records before it); with ``strict=False`` the valid records before the
    first bad one are returned instead, with a warning naming the line (e.g. a file whose writer was killed
    mid-line). A file that is one JSON document (starting with ``[``, or a record spread over several
    lines) is read whole up to :data:`MAX_DOCUMENT_BYTES`."""
    items: list[tuple[int | None, Any]] = []
    bad: RecordFileError | None = None
    with Path(path).open("rb") as f:
        first = b""
        for _ in range(MAX_DOCUMENT_BYTES // 65536 + 1):  # skip leading white space (bounded)
            chunk = f.read(65536)
            first = chunk.lstrip()[:1]
            if first or not chunk:
                break
        f.seek(0)
        if not first:
            return []
        if first == b"[":  # a JSON array: one document
            try:
                doc = _read_document(f, path)
            except JsonError as e:
                raise RecordFileError(f"{path}: the file is not JSON: {e}", None, 0, []) from None
            items = [(None, r) for r in (doc if isinstance(doc, list) else [doc])]
        else:
            n = 0
            for n, line in enumerate(iter(lambda: f.readline(MAX_RECORD_LINE_BYTES + 1), b""), 1):
                if len(line) > MAX_RECORD_LINE_BYTES and not line.endswith(b"\n"):
                    bad = RecordFileError(
                        f"{path}: line {n} is longer than {MAX_RECORD_LINE_BYTES // 2**20} MiB "
                        "(MAX_RECORD_LINE_BYTES): not a game record", n, len(items), [])
                    break
                if not line.strip():
                    continue
                try:
                    items.append((n, _parse(line)))
                except JsonError as e:
                    if not items:  # the first line is no JSON value: maybe one record over several lines
                        f.seek(0)
                        try:
                            doc = _read_document(f, path)
                        except (JsonError, RecordFileError):
                            pass
                        else:
                            items = [(None, r) for r in (doc if isinstance(doc, list) else [doc])]
                            break
                    bad = RecordFileError(f"{path}: line {n} is not JSON: {e}", n, len(items), [])
                    break
    recs: list[dict[str, Any]] = []
    for i, (n, r) in enumerate(items):
        where = f"line {n} (record {i})" if n is not None else f"record {i}"
        problem = None
        if not isinstance(r, dict):
            problem = f"is a {type(r).__name__}, not a JSON object"
        elif validate:
            try:
                validate_record(r)
            except RecordValidationError as e:
                problem = f"is not valid: {e}"
        if problem is not None:
            bad = RecordFileError(f"{path}: {where} {problem}", n, i, [])
            break
        recs.append(r)
    if bad is None:
        return recs
    bad.valid = recs[: bad.index]
    if strict:
        raise bad
    import warnings

    warnings.warn(f"{bad}; returning the {len(bad.valid)} valid records before it", stacklevel=2)
    return bad.valid


# ---------------------------------------------------------------------------------------------- replay
def replay(record: dict[str, Any]) -> Game:
    """Rebuild the game of ``record`` by replaying every decision, checking every recorded result.

    Returns the game in its final state (mid-hand if the last hand is ``incomplete``). Raises
    :class:`RecordMismatchError` at the first difference.
    """
    game = None
    for state in _replay(record):
        game = state
    assert game is not None
    return game


def replay_states(record: dict[str, Any]) -> Iterator[Game]:
    """Yield an independent copy of the game after each action of ``record`` (checks as :func:`replay`)."""
    for game in _replay(record):
        yield game.copy()


def _replay(record: dict[str, Any]) -> Iterator[Game]:
    """Yield the (same, mutated) game after every action, and once more at the end. A record that is not
    smear-record/1 (missing or mistyped fields) raises :class:`RecordValidationError` (from
    :func:`validate_record` when jsonschema is installed), never a bare KeyError / IndexError."""
    check_depth(record)
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        shown = short_repr(_get(record, "format"))
        raise RecordMismatchError(None, "format", f"expected {FORMAT!r}, got {shown}")
    try:
        yield from _replay_fields(record)
    except RecordMismatchError:
        raise
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as e:
        raise _malformed(record, e) from None


def _malformed(record: dict[str, Any], e: Exception) -> RecordValidationError:
    """The error for a record whose replay failed on its structure: the schema's, when it names one."""
    try:
        validate_record(record)
    except RecordValidationError as v:
        return v
    except ImportError:
        pass
    detail = short_repr(e.args[0] if len(e.args) == 1 else e, 200)
    return RecordValidationError(f"record is not a valid {FORMAT} record: {type(e).__name__} {detail}")


def _replay_fields(record: dict[str, Any]) -> Iterator[Game]:
    rules = SmearRules.from_dict(record["rules"])
    seed = record.get("seed")
    if seed is not None:
        try:
            check_seed(seed, "record field 'seed'")
        except (TypeError, ValueError) as e:
            raise RecordValidationError(str(e)) from None
    hands = record["hands"]
    if not hands:
        raise RecordMismatchError(None, "hands", "a record has at least one hand")
    game: Game | None = None
    last = len(hands) - 1
    for i, h in enumerate(hands):
        deal = (h["deal"], h["stock"])
        if game is None:
            game = Game.from_deal(*deal, h["dealer"], rules, seed=record.get("seed"))
        else:
            if game.phase != HAND_OVER:
                raise RecordMismatchError(i, "hands", "the game is over after the previous hand")
            if game.next_dealer != h["dealer"]:
                raise RecordMismatchError(
                    i, "dealer", f"R4 gives dealer {game.next_dealer}, record {h['dealer']}"
                )
            game.start_next_hand(deal=deal)
        yield from _replay_hand(game, i, h, rules)
        done = game.phase >= HAND_OVER
        if bool(h.get("incomplete", False)) == done:
            raise RecordMismatchError(
                i, "incomplete", f"record incomplete={h.get('incomplete', False)}, replayed hand over={done}"
            )
        if not done and i != last:
            raise RecordMismatchError(i, "incomplete", "only the last hand may be incomplete")
        if bool(h.get("thrown_in", False)) != game.hand_thrown_in:
            raise RecordMismatchError(i, "thrown_in", f"replay thrown_in={game.hand_thrown_in}")
        if done and not game.hand_thrown_in:
            result = game.hand_result
            assert result is not None
            for key in RESULT_FIELDS:
                if key in h and h[key] != result[key]:
                    raise RecordMismatchError(i, key, f"recorded {h[key]!r}, replay gives {result[key]!r}")
    assert game is not None
    if list(record["final_scores"]) != game.scores:
        raise RecordMismatchError(
            None, "final_scores", f"recorded {record['final_scores']}, replay {game.scores}"
        )
    if record["winner"] != game.winner:
        raise RecordMismatchError(None, "winner", f"recorded {record['winner']!r}, replay {game.winner!r}")
    if record.get("truncated") is True and game.phase == GAME_OVER:
        raise RecordMismatchError(None, "truncated", "recorded truncated: true, but the game is over "
                                  "(R18-R20)")
    yield game


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _act(game: Game, i: int, field: str, seat: int | None, action: int) -> None:
    if seat is not None and seat != game.current_player:
        raise RecordMismatchError(
            i, field, f"recorded seat {seat} acts, but R6/R12 give seat {game.current_player}"
        )
    try:
        game.apply(action)
    except IllegalActionError as e:
        raise RecordMismatchError(i, field, str(e)) from e


def _replay_hand(game: Game, i: int, h: dict[str, Any], rules: SmearRules) -> Iterator[Game]:
    for b in h["bids"]:
        if game.phase != BIDDING:
            raise RecordMismatchError(i, "bids", f"bid {b!r} recorded after bidding ended (R7)")
        _act(game, i, "bids", b["seat"], bid_action(0 if b["bid"] == "pass" else b["bid"]))
        yield game
    if game.phase == BIDDING:
        return  # incomplete during bidding
    if game.hand_thrown_in:
        return
    for key, value in (("bidder", game.bidder), ("contract", game.contract)):
        if key in h and h[key] != value:
            raise RecordMismatchError(i, key, f"recorded {h[key]!r}, replay gives {value!r}")
    if "kitty" in h and h["kitty"] != names(game.kitty):
        raise RecordMismatchError(i, "kitty", f"recorded {h['kitty']}, R9 gives {names(game.kitty)}")
    if rules.kitty_size:
        if "trump" not in h:
            return
        _act(game, i, "trump", None, trump_action(SUIT_CHARS.index(h["trump"])))
        yield game
        for name in h.get("discards", []):
            _act(game, i, "discards", None, discard_action(parse_card(name)))
            yield game
    for t, trick in enumerate(h.get("tricks", [])):
        for play in trick["plays"]:
            _act(game, i, f"tricks[{t}]", play["seat"], play_action(parse_card(play["card"])))
            yield game
        leader, _, _, winner = game.tricks[t]
        if (trick["leader"], trick["winner"]) != (leader, winner):
            raise RecordMismatchError(
                i, f"tricks[{t}]", f"recorded leader/winner {trick['leader']}/{trick['winner']}, "
                f"R12 gives {leader}/{winner}"
            )
    for play in h.get("current_trick", []):
        _act(game, i, "current_trick", play["seat"], play_action(parse_card(play["card"])))
        yield game
    if "trump" in h and game.trump >= 0 and SUIT_CHARS[game.trump] != h["trump"]:
        raise RecordMismatchError(i, "trump", f"recorded {h['trump']}, replay gives {SUIT_CHARS[game.trump]}")
