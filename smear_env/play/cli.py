"""``smear-play``: play Smear in the terminal against agents.

You take one seat (``--seat``, default 0); your partner and the opponents are agent specs (``--partner``,
``--opponents``, or ``--left`` / ``--right``; default: the shipped agent ``default``, or ``heuristic`` when
the rules differ from the ones it was trained on: :func:`smear_env.play.choices.default_agent`, the same
decision as the web table's). Every rule option of :class:`~smear_env.core.config.SmearRules` is a flag
(``--kitty-size 2``, ``--high-low in_play``, ``--win-requires-bid`` ...).

At your turn the table is shown (scores, bids, contract, trump, the trick, your hand sorted by suit with
suit symbols) and the legal moves, numbered. Type a number, an action name (``play JH``, ``bid 3``,
``pass``, ``trump H``, ``discard TS``), just a card (``JH``, ``J♥``, ``10h``) or a suit for trump
(``hearts``, ``♥``); ``hint`` shows every legal move with the shipped agent's probability and an estimate of
its worth (:mod:`smear_env.play.hints`), and what each hint agent (``--hint``, default the shipped agent
and ``pimc``) would do; ``quit`` stops. Anything else gets a message naming the legal moves, and for an
illegal move the rule it breaks. The game is saved as smear-record/1 JSON (``--record``) when it ends or
you quit.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from ..agents.registry import make_agent
from ..agents.shipped import shipped_path
from ..core.actions import PASS_ACTION, discard_action, parse_action, play_action, trump_action
from ..core.cards import RANK_CHARS, SUIT_CHARS, SUIT_SYMBOLS, parse_card
from ..core.config import SmearRules
from ..engine.game import IllegalActionError
from ..engine.record import save_records
from ..tables.arguments import add_rule_arguments, check_run_arguments, rules_from_args
from .choices import default_agent, display_name
from .explain import move_text, point_details, why_illegal
from .hints import Hinter
from .session import DEFAULT_MAX_HANDS, Event, Session

SHIPPED_AGENT = "checkpoints/smear_v0_default.safetensors"
SUIT_WORDS = {"c": 0, "club": 0, "clubs": 0, "d": 1, "diamond": 1, "diamonds": 1, "h": 2, "heart": 2,
              "hearts": 2, "s": 3, "spade": 3, "spades": 3}
RELATIVE_NAMES = ("you", "left", "partner", "right")


# ---------------------------------------------------------------------------------------------- agents
def shipped_agent_path() -> str | None:
    """The shipped agent ``default``'s checkpoint (inside the installed package, or a clone's
    ``checkpoints/``; :mod:`smear_env.agents.shipped`), else ``None``."""

    try:
        return str(shipped_path("default"))
    except FileNotFoundError:
        return None


def default_agent_spec(rules: SmearRules) -> tuple[str, str | None]:
    """(spec, note): the shipped agent ``default`` when it plays these rules, else ``heuristic`` with a note
    why (:func:`smear_env.play.choices.default_agent`)."""

    return default_agent(rules)


# ---------------------------------------------------------------------------------------------- display
def card_markup(name: str) -> str:
    """``"JH"`` -> ``"J♥"`` in red (rich markup); clubs and spades in bold."""
    rank, suit = name[0], SUIT_CHARS.index(name[1])
    text = ("10" if rank == "T" else rank) + SUIT_SYMBOLS[suit]
    return f"[bold red]{text}[/]" if suit in (1, 2) else f"[bold]{text}[/]"


def hand_markup(cards: Sequence[str], trump: str | None = None) -> str:
    """A hand grouped by suit, trump first, high to low."""
    order = sorted(range(4), key=lambda s: (SUIT_CHARS[s] != trump, s))
    groups = []
    for s in order:
        cs = sorted((c for c in cards if c[1] == SUIT_CHARS[s]), key=lambda c: -RANK_CHARS.index(c[0]))
        if cs:
            groups.append(" ".join(card_markup(c) for c in cs))
    return "   ".join(groups) if groups else "-"


def move_markup(name: str) -> str:
    """An action name with its card or suit drawn: ``play J♥``, ``trump ♥``."""
    verb, _, arg = name.partition(" ")
    if verb in ("play", "discard") and len(arg) == 2:
        return f"{verb} {card_markup(arg)}"
    if verb == "trump" and arg in SUIT_CHARS:
        s = SUIT_CHARS.index(arg)
        return f"trump {'[bold red]' if s in (1, 2) else '[bold]'}{SUIT_SYMBOLS[s]}[/]"
    return name


class SeatNames:
    """Seat labels relative to the person: ``you``, ``left (heuristic)``, ..."""

    def __init__(self, seat: int, players: Sequence[str]) -> None:
        self.seat = seat
        self.players = players

    def __call__(self, s: int) -> str:
        rel = RELATIVE_NAMES[(s - self.seat) % 4]
        if s == self.seat:
            return rel

        return escape(f"{rel} ({display_name(self.players[s])})")


def table_markup(view: dict[str, Any], name: SeatNames) -> str:
    """The table as one seat sees it (rich markup), from its seat view."""
    me = view["seat"]
    team = view["team"]
    lines = [
        f"[bold]Scores[/]: you+partner {view['scores'][team]}, opponents {view['scores'][1 - team]}"
        f"  (target {view['target_score']})    dealer: {name(view['dealer'])}"
    ]
    bids = []
    for i in range(4):
        s = (me + 1 + i) % 4
        b = view["bids"][s]
        if b is not None:
            bids.append(f"{name(s)}: {'pass' if b == 'pass' else 'bid ' + str(b)}")
    if bids:
        lines.append("Bids: " + ", ".join(bids))
    if view["contract"] is not None:
        trump = view["trump"]
        shown = move_markup(f"trump {trump}").removeprefix("trump ") if trump else "not shown yet"
        lines.append(f"Contract: {view['contract']} by {name(view['bidder'])}    trump: {shown}")
    if view["kitty"]:
        lines.append("Kitty you took: " + " ".join(card_markup(c) for c in view["kitty"])
                     + ("    discarded: " + " ".join(card_markup(c) for c in view["discards"])
                        if view["discards"] else ""))
    if view["trick"]:
        plays = [f"{name(t['seat'])} {card_markup(t['card'])}" for t in view["trick"]]
        lines.append("Trick: " + ", ".join(plays))
    lines.append("Your hand: " + hand_markup(view["hand"], view["trump"]))
    return "\n".join(lines)


def legal_markup(view: dict[str, Any]) -> str:
    moves = view["legal_actions"]
    return "  ".join(f"[cyan]{i}[/]) {move_markup(a['name'])}" for i, a in enumerate(moves, 1))


def event_markup(e: dict[str, Any], name: SeatNames) -> str:
    text = f"{name(e['seat'])}: {move_markup(e['name'])}"
    if "trick_winner" in e:
        text += f"   -> trick won by {name(e['trick_winner'])}"
    if e.get("thrown_in"):
        text += "   -> everybody passed: the hand is thrown in and the same dealer deals again (R8)"
    return text


def signed(n: int) -> str:
    """``+2``, ``-3``, ``0``."""
    return f"+{n}" if n > 0 else str(n)


def result_markup(view: dict[str, Any], name: SeatNames, details: dict[str, Any] | None = None) -> str:
    """The end of a hand: each point with its card and who won it (``details``:
    :func:`smear_env.play.explain.point_details`), card points per team, contract made or set, the score
    change and the scores."""
    r = view.get("hand_result") or {}
    if r.get("thrown_in"):
        return "Everybody passed: the hand is thrown in (R8); the same dealer deals again."
    team = view["team"]
    who = {team: "you+partner", 1 - team: "opponents", None: "nobody"}
    parts = []
    for k in ("high", "low", "jack", "game"):
        d = (details or {}).get("points", {}).get(k, {})
        text = f"{k.capitalize()}: {who[r['points'][k]]}"
        if d.get("card"):
            text += f" ({card_markup(d['card'])} played by {name(d['played_by'])}"
            if k == "jack" and d.get("won_by") is not None and d["won_by"] != d["played_by"]:
                text += f", won by {name(d['won_by'])}"
            text += ")"
        elif k != "game":
            text += " (its card was not played)"
        parts.append(text)
    made = "made" if r["made_contract"] else "[bold red]went set[/] on"
    ch = r["score_change"]
    return (f"Hand over: {'; '.join(parts)}. Card points: you+partner {r['card_points'][team]}, opponents "
            f"{r['card_points'][1 - team]}. {name(view['bidder'])} {made} a bid of {view['contract']}. "
            f"Score change: you+partner {signed(ch[team])}, opponents {signed(ch[1 - team])}; scores: "
            f"you+partner {r['scores'][team]}, opponents {r['scores'][1 - team]}.")


def hint_markup(h: dict[str, Any], limit: int = 8) -> str:
    """A hint (:meth:`smear_env.play.hints.Hinter.hint`) as a small table: move, probability, worth."""

    lines = []
    for note in h.get("notes", []):
        lines.append(f"[yellow]note[/]: {escape(note)}")
    picks = ", ".join(f"{escape(a['agent'])} would {move_markup(a['name'])}" for a in h["agents"])
    lines.append(f"hint: {picks}")
    pfrom = h.get("probability_from")
    head = f"  {'move':<14}" + (f"{escape(pfrom) + ' %':>12}" if pfrom else "") + f"{'worth':>8}"
    lines.append(head)
    for m in h["moves"][:limit]:
        p = ("-" if m["p"] is None else f"{100 * m['p']:.0f}%") if pfrom else ""
        v = "-" if m["value"] is None else f"{m['value']:+.1f}"
        label = move_markup(m["name"])
        pad = 14 - len(_plain(m["name"]))
        lines.append(f"  {label}{' ' * max(pad, 1)}" + (f"{p:>12}" if pfrom else "") + f"{v:>8}")
    if len(h["moves"]) > limit:
        lines.append(f"  ... {len(h['moves']) - limit} more")
    if h.get("value_note"):
        lines.append(f"  [dim]{escape(h['value_note'])}[/]")
    return "\n".join(lines)


def _plain(name: str) -> str:
    verb, _, arg = name.partition(" ")
    if verb in ("play", "discard") and len(arg) == 2:
        return f"{verb} {'10' if arg[0] == 'T' else arg[0]}x"
    if verb == "trump":
        return "trump x"
    return name


# ---------------------------------------------------------------------------------------------- input
def parse_move(text: str, view: dict[str, Any], game: Any = None) -> int:
    """The legal action id a person means by ``text`` (a menu number, an action name, a card, a suit);
    ``ValueError`` naming the legal moves otherwise, and (with ``game``) the rule an illegal move breaks
    (:func:`smear_env.play.explain.why_illegal`)."""
    legal = [a["id"] for a in view["legal_actions"]]
    t = text.strip()
    low = t.lower()
    action: int | None = None
    if low.isdigit():
        k = int(low)
        if 1 <= k <= len(legal):
            return legal[k - 1]
    else:
        action = _parse_words(t, view["phase"])
    if action is not None and action in legal:
        return action

    menu = ", ".join(f"{i}) {move_text(a['id'])}" for i, a in enumerate(view["legal_actions"], 1))
    what = "not a legal move here" if action is not None or low.isdigit() else "not understood"
    why = why_illegal(game, action) if game is not None and action is not None and legal else None
    raise ValueError(f"{t!r} is {what}{': ' + why if why else ''}. Legal moves: {menu}")


def _card(text: str) -> int | None:
    t = text.strip().upper()
    for s, sym in enumerate(SUIT_SYMBOLS):
        t = t.replace(sym, SUIT_CHARS[s])
    if t.startswith("10"):
        t = "T" + t[2:]
    try:
        return parse_card(t)
    except ValueError:
        return None


def _suit(text: str) -> int | None:
    t = text.strip().lower()
    if t in SUIT_WORDS:
        return SUIT_WORDS[t]
    return SUIT_SYMBOLS.index(t) if len(t) == 1 and t in SUIT_SYMBOLS else None


def _parse_words(text: str, phase: str) -> int | None:
    low = " ".join(text.lower().split())
    if low == "pass":
        return PASS_ACTION
    verb, _, arg = low.partition(" ")
    if verb == "bid" and arg.isdigit():
        try:
            return parse_action(f"bid {int(arg)}")
        except ValueError:
            return None
    if verb == "trump" and _suit(arg) is not None:
        return trump_action(_suit(arg))  # type: ignore[arg-type]
    if verb in ("play", "discard") and _card(arg) is not None:
        c = _card(arg)
        return play_action(c) if verb == "play" else discard_action(c)  # type: ignore[arg-type]
    c = _card(low)
    if c is not None:
        return discard_action(c) if phase == "DISCARD" else play_action(c)
    s = _suit(low)
    if s is not None and phase == "TRUMP":
        return trump_action(s)
    return None


# ---------------------------------------------------------------------------------------------- the loop
QUIT_WORDS = ("quit", "q", "exit")
HELP = ("Type a move's number, its name ('play JH', 'bid 3', 'pass', 'trump H', 'discard TS'), a card "
        "('JH', 'J♥', '10h') or a suit for trump ('hearts'). Commands: hint, table, help, quit.")


def play(session: Session, seat: int, console: Any, read_line: Callable[[str], str],
         hinter: Any = None, pause: float = 0.0) -> str:
    """Run ``session`` with the person at ``seat``: show events and the table, read moves with
    ``read_line(prompt)`` (EOFError ends the game like ``quit``). Returns why it ended: ``"over"``
    (won or truncated), ``"quit"`` or ``"error"`` (an agent failed; ``session.error``)."""

    name = SeatNames(seat, session.names)

    def show(events: list[Event]) -> None:
        for e in session.events_for(seat, events):
            console.print(event_markup(e, name))
            if pause:
                time.sleep(pause)

    console.print(f"You sit in seat {seat} (team {seat & 1}). Partner: {name((seat + 2) % 4)}; "
                  f"opponents: {name((seat + 1) % 4)}, {name((seat + 3) % 4)}. Type 'help' for help.")
    show(session.advance())
    shown_table = False
    while True:
        if session.error is not None:
            console.print(f"[bold red]Game stopped[/]: {escape(session.error)}")
            return "error"
        view = session.view(seat)
        if session.hand_over or session.over:
            if view.get("hand_result"):
                console.print(result_markup(view, name, point_details(session.game)))
            if session.over:
                if session.truncated:
                    console.print(f"The game stops after {session.max_hands} hands (R21): no winner.")
                else:
                    winner = session.game.winner
                    console.print("[bold green]You win the game![/]" if winner == seat & 1
                                  else "[bold]The opponents win the game.[/]")
                return "over"
            try:
                answer = read_line("Press Enter for the next hand (or 'quit') ")
            except EOFError:
                return "quit"
            if answer.strip().lower() in QUIT_WORDS:
                return "quit"
            show(session.next_hand())
            shown_table = False
            continue
        if not shown_table:
            console.print(table_markup(view, name))
            console.print(legal_markup(view))
            shown_table = True
        try:
            text = read_line("Your move: ")
        except EOFError:
            return "quit"
        cmd = text.strip().lower()
        if cmd in QUIT_WORDS:
            return "quit"
        if cmd in ("help", "h"):
            console.print(HELP)
            continue
        if cmd in ("table", "t", "show"):
            shown_table = False
            continue
        if cmd in ("hint", "?"):
            if hinter is None:
                console.print("No hint agents (--hint).")
            else:
                console.print(hint_markup(hinter.hint(session.game, seat)))
            continue
        try:
            action = parse_move(text, view, session.game)
        except ValueError as e:
            console.print(f"[yellow]{escape(str(e))}[/]")
            continue
        try:
            events = session.act(seat, action)
        except IllegalActionError as e:  # pragma: no cover - parse_move only returns legal moves
            console.print(f"[yellow]{escape(str(e))}[/]")
            continue
        show(events)
        shown_table = False


# ---------------------------------------------------------------------------------------------- main
MAX_PAUSE = 60.0
"""The longest ``--pause`` accepted, in seconds."""


def pause_seconds(text: str) -> float:
    """``--pause``: a finite number of seconds from 0 to :data:`MAX_PAUSE` (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= MAX_PAUSE:  # also false for nan
        raise argparse.ArgumentTypeError(f"must be a number of seconds from 0 to {MAX_PAUSE:g}, not {text!r}")
    return value


def check_record_path(path: Path) -> str | None:
    """Why the game could not be saved at ``path`` (a folder, a missing or read-only folder, a file that
    cannot be written), else None: checked before the game starts, so a finished game is not lost."""
    if path.is_dir():
        return f"{str(path)!r} is a folder; give a file name"
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        return f"the folder {str(parent)!r} does not exist"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"the folder {str(parent)!r} is not writable"
    if path.exists() and not os.access(path, os.W_OK):
        return f"{str(path)!r} is not writable"
    return None


def save_game(path: Path, record: dict[str, Any]) -> tuple[Path | None, str | None]:
    """Save ``record`` at ``path``; when that fails, in a new file of the temporary folder instead.
    Returns (where it was saved or None, why ``path`` failed or None)."""

    try:
        save_records(path, record)
        return path, None
    except OSError as e:
        why = f"{e.strerror or e}"
    try:
        fd, spare = tempfile.mkstemp(prefix="smear-game-", suffix=".json")
        os.close(fd)
        save_records(spare, record)
        return Path(spare), why
    except OSError:
        return None, why


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="smear-play",
        description="Play Smear in the terminal: you take a seat, agents take the others. An agent is "
                    "'random', 'heuristic', 'pimc[:key=value,...]', a checkpoint path or "
                    "'cmd:<bot command>'.",
    )
    ap.add_argument("--seat", type=int, default=0, choices=range(4), metavar="0..3",
                    help="your seat (default 0; your partner sits opposite, seat + 2)")
    ap.add_argument("--partner", help="agent spec of your partner (default: the shipped agent)")
    ap.add_argument("--opponents", help="agent spec of both opponents (default: the shipped agent)")
    ap.add_argument("--left", help="agent spec of the opponent on your left (overrides --opponents)")
    ap.add_argument("--right", help="agent spec of the opponent on your right (overrides --opponents)")
    ap.add_argument("--hint", action="append", metavar="SPEC",
                    help="agent asked by the 'hint' command (repeatable; default: the shipped agent, pimc)")
    ap.add_argument("--seed", type=int, help="seed of the deals and agents (default: fresh randomness)")
    ap.add_argument("--max-hands", type=int, default=DEFAULT_MAX_HANDS,
                    help=f"stop the game after this many hands (R21, default {DEFAULT_MAX_HANDS})")
    ap.add_argument("--record", metavar="FILE",
                    help="save the game as smear-record/1 JSON here (default smear-game-<time>.json)")
    ap.add_argument("--no-record", action="store_true", help="do not save the game")
    ap.add_argument("--pause", type=pause_seconds, default=0.0,
                    help=f"seconds to pause after each agent move (0 to {MAX_PAUSE:g}; default 0)")
    add_rule_arguments(ap)
    return ap


def main(argv: Sequence[str] | None = None, read_line: Callable[[str], str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    rules = rules_from_args(args, ap)
    check_run_arguments(args, ap)
    record_path = None
    if not args.no_record:
        record_path = Path(args.record or time.strftime("smear-game-%Y%m%d-%H%M%S.json"))
    if record_path is not None:
        why = check_record_path(record_path)
        if why is not None:
            ap.error(f"--record: cannot save the game there: {why} (or give --no-record)")

    console = Console(highlight=False)
    default, note = default_agent_spec(rules)
    if note and not all([args.partner, args.left or args.opponents, args.right or args.opponents]):
        console.print(f"[yellow]note[/]: {escape(note)}")
    seat = args.seat
    specs = [""] * 4
    specs[(seat + 2) % 4] = args.partner or default
    specs[(seat + 1) % 4] = args.left or args.opponents or default
    specs[(seat + 3) % 4] = args.right or args.opponents or default

    agents: list[Any] = [None] * 4
    try:
        for s in range(4):
            if s != seat:
                agents[s] = make_agent(specs[s], rules)
        hint_specs = args.hint if args.hint is not None else ["default", "pimc"]
        hinter = Hinter(hint_specs, rules, seed=args.seed) if hint_specs else None
    except (ValueError, FileNotFoundError) as e:
        ap.error(str(e))

    names = ["you" if s == seat else display_name(specs[s]) for s in range(4)]
    session = Session(agents, rules, seed=args.seed, max_hands=args.max_hands, names=names)
    reader = read_line if read_line is not None else _read_line
    try:
        outcome = play(session, seat, console, reader, hinter=hinter, pause=args.pause)
    except KeyboardInterrupt:
        outcome = "quit"
        console.print()
    finally:
        session.close()
    if record_path is not None:
        saved, why = save_game(record_path, session.record())
        if why is not None:
            where = f"saved to {escape(str(saved))} instead" if saved is not None else "not saved"
            console.print(f"[bold red]Could not save the game to {escape(str(record_path))}[/] "
                          f"({escape(why)}): {where}.")
            if saved is None:
                return 1
        console.print(f"Game saved to {escape(str(saved))} (smear-record/1; open it in smear-serve's replay "
                      "viewer).")
    return 1 if outcome == "error" else 0


def _read_line(prompt: str) -> str:
    return input(prompt)


if __name__ == "__main__":
    sys.exit(main())
