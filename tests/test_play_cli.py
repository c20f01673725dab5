"""smear-play: a whole game driven from a script (in process, and as a real process on stdin), move
parsing, rule flags derived from SmearRules, hints."""

from __future__ import annotations

import dataclasses
import io
import subprocess
import sys

import numpy as np
import pytest
from rich.console import Console

from smear_env.agents import make_agent
from smear_env.core.config import SmearRules
from smear_env.engine.game import Game
from smear_env.engine.record import load_records, replay, validate_record
from smear_env.engine.seat_view import seat_view_of
from smear_env.play.cli import build_parser, parse_move, play, shipped_agent_path
from smear_env.play.hints import Hinter
from smear_env.play.session import Session
from smear_env.tables.arguments import rules_from_args


def _typed(view, k: int) -> str:
    """Ways a person names the k-th legal move, by turns: a number, the action name, a bare card or suit."""
    a = view["legal_actions"][k % len(view["legal_actions"])]
    verb, _, arg = a["name"].partition(" ")
    style = k % 3
    if style == 0:
        return str(k % len(view["legal_actions"]) + 1)
    if style == 1 or verb in ("pass", "bid"):
        return a["name"].upper() if k % 2 else a["name"]
    if verb == "trump":
        return {"C": "clubs", "D": "♦", "H": "hearts", "S": "s"}[arg]
    return arg[0].replace("T", "10") + "♣♦♥♠"["CDHS".index(arg[1])] if k % 2 else arg.lower()


def test_a_whole_game_from_a_script_in_process():
    out = io.StringIO()
    console = Console(file=out, width=120, highlight=False)
    session = Session([None, make_agent("heuristic"), make_agent("heuristic"), make_agent("heuristic")],
                      SmearRules(target_score=4), seed=11)
    typed = []

    def read_line(prompt: str) -> str:
        if prompt.startswith("Press Enter"):
            return ""
        k = len(typed)
        text = "xyzzy" if k == 1 else "9" * 3 if k == 3 else _typed(session.view(0), k)
        typed.append(text)
        return text

    assert play(session, 0, console, read_line) == "over"
    text = out.getvalue()
    assert "'xyzzy' is not understood. Legal moves: 1)" in text
    assert "'999' is not a legal move here" in text
    assert "Hand over:" in text and ("You win the game" in text or "opponents win the game" in text)
    rec = session.record()
    validate_record(rec)
    assert replay(rec).winner == session.game.winner
    assert len(typed) > 10


def test_smear_play_as_a_process_reads_moves_from_stdin(tmp_path):
    path = tmp_path / "game.json"
    cmd = [sys.executable, "-m", "smear_env.play.cli", "--seed", "2", "--target-score", "3",
           "--partner", "heuristic", "--opponents", "random", "--hint", "heuristic", "--record", str(path)]
    lines = ["hint", "help", "bogus"] + ["1"] * 400
    p = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "hint: heuristic would" in p.stdout and "'bogus' is not understood" in p.stdout
    assert "Hand over:" in p.stdout and "Game saved to" in p.stdout
    (rec,) = load_records(path, validate=True)
    assert rec["players"] == ["you", "random", "heuristic", "random"] and rec["seed"] == 2
    replay(rec)


def test_quit_saves_the_game_so_far(tmp_path):
    path = tmp_path / "g.json"
    cmd = [sys.executable, "-m", "smear_env.play.cli", "--seed", "1", "--opponents", "random", "--partner",
           "random", "--hint", "random", "--record", str(path)]
    p = subprocess.run(cmd, input="quit\n", capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "Traceback" not in p.stderr
    (rec,) = load_records(path, validate=True)
    assert rec["truncated"] is True


def test_parse_move_accepts_numbers_names_cards_and_suits():
    g = Game.from_deal([h.split() for h in ["AH KH QH JH TH 9H", "AS KS QS JS TS 9S", "AD KD QD JD TD 9D",
                                            "AC KC QC JC TC 9C"]], "7H 8H 7S 8S 7D 8D 7C 8C".split(), 3,
                       SmearRules(kitty_size=0), seed=0)
    v = seat_view_of(g, 0)
    assert parse_move("1", v) == 0 and parse_move("pass", v) == 0 and parse_move(" Bid  3 ", v) == 2
    with pytest.raises(ValueError, match=r"'5' is not a legal move here. Legal moves: 1\) pass, 2\) bid 2"):
        parse_move("5", v)
    with pytest.raises(ValueError, match="'bid 5' is not understood"):
        parse_move("bid 5", v)
    g.apply(3)  # seat 0 bids 4: bidding ends (R7), seat 0 leads
    v = seat_view_of(g, 0)
    assert parse_move("JH", v) == parse_move("j♥", v) == parse_move("play jh", v) == 40 + 2 * 8 + 4
    assert parse_move("10h", v) == 40 + 2 * 8 + 3
    with pytest.raises(ValueError, match="'AS' is not a legal move here"):
        parse_move("AS", v)


def test_every_rule_option_is_a_flag():
    ap = build_parser()
    args = ap.parse_args(["--kitty-size", "2", "--high-low", "in_play", "--win-requires-bid", "--all-pass",
                          "dealer_must_bid", "--target-score", "7", "--cap-defenders",
                          "--game-point-tie", "bidder"])
    rules = rules_from_args(args)
    assert rules == SmearRules(kitty_size=2, high_low="in_play", win_requires_bid=True,
                               all_pass="dealer_must_bid", target_score=7, cap_defenders=True,
                               game_point_tie="bidder")
    flags = {a.dest for a in ap._actions}
    assert {f.name for f in dataclasses.fields(SmearRules)} <= flags
    with pytest.raises(SystemExit):
        ap.parse_args(["--high-low", "sideways"])


@pytest.mark.skipif(shipped_agent_path() is None, reason="the shipped checkpoint is not in this checkout")
def test_hints_give_the_shipped_agents_probability_and_a_worth_per_move():
    rules = SmearRules()
    g = Game(rules, seed=4)
    h = Hinter(["default", "heuristic"], rules, seed=0).hint(g, g.current_player, np.random.default_rng(1))
    moves = h["moves"]
    assert h["probability_from"] == "default"
    assert [a["agent"] for a in h["agents"]] == ["default", "heuristic"]
    assert abs(sum(m["p"] for m in moves) - 1) < 1e-3
    assert {m["id"] for m in moves} == set(g.legal_actions())
    best = max(moves, key=lambda m: m["p"])
    assert h["agents"][0]["id"] == best["id"] and "default" in best["chosen_by"]  # greedy: the most probable
    assert [m["value"] for m in moves] == sorted((m["value"] for m in moves), reverse=True)
    again = Hinter(["default", "heuristic"], rules, seed=0).hint(g, g.current_player,
                                                                np.random.default_rng(1))
    assert again == h  # the same generator, the same hint


def test_hint_under_other_rules_falls_back_like_a_seat_and_says_why():
    rules = SmearRules(target_score=11, kitty_size=1)
    g = Game(rules, seed=4)
    hinter = Hinter(["default", "pimc"], rules, seed=0)
    assert hinter.specs == ["heuristic", "pimc"]
    assert "plays only the rules it was trained on" in hinter.notes[0]
    h = hinter.hint(g, g.current_player)
    assert h["probability_from"] is None
    assert all(m["p"] is None and m["value"] is not None for m in h["moves"])


def test_the_terminal_hint_is_a_table_and_names_agents_by_their_shipped_name():
    from smear_env.play.cli import hint_markup

    rules = SmearRules()
    g = Game(rules, seed=4)
    out = io.StringIO()
    Console(file=out, width=120, highlight=False).print(
        hint_markup(Hinter(["default", "pimc"], rules, seed=0).hint(g, g.current_player)))
    text = out.getvalue()
    assert "hint: default would" in text and "worth" in text and ".safetensors" not in text
    assert "/" not in text.split("worth:")[0]


def test_an_illegal_card_names_the_rule_and_the_legal_moves_with_suit_symbols():
    g = Game.from_deal([h.split() for h in ["AH KH QH JH TH 9S", "AS KS QS JS TS 9H", "AD KD QD JD TD 9D",
                                            "AC KC QC JC TC 9C"]], "7H 8H 7S 8S 7D 8D 7C 8C".split(), 3,
                       SmearRules(kitty_size=0), seed=0)
    g.apply(3)  # seat 0 bids 4 and leads
    g.apply(40 + 2 * 8 + 7)  # A♥ led: hearts are trump (kitty 0, R10)
    v = seat_view_of(g, 1)
    with pytest.raises(ValueError) as e:
        parse_move("AS", v, g)
    msg = str(e.value)
    assert "trump (♥) was led: you hold trump, so you must play trump (R12)" in msg
    assert "Legal moves: 1) play 9♥" in msg


def test_the_end_of_a_hand_names_the_cards_and_players_and_grammar():
    from smear_env.play.cli import SeatNames, result_markup
    from smear_env.play.explain import point_details

    s = Session([None, make_agent("heuristic"), make_agent("heuristic"), make_agent("heuristic")],
                SmearRules(target_score=30), seed=3)
    s.advance()
    for _ in range(60):
        if s.hand_over or s.over:
            break
        s.act(0, s.game.legal_actions()[0])
    v = s.view(0)
    text = result_markup(v, SeatNames(0, s.names), point_details(s.game))
    assert " a bid of " in text and "Score change:" in text and "played by" in text
    assert "the 3 bid" not in text and "the 2 bid" not in text


def test_a_failing_bot_stops_smear_play_by_name_and_the_game_is_saved(tmp_path):
    bot = tmp_path / "bot.py"
    # the bot answers only requests (output before a request is a protocol error of its own)
    bot.write_text("import sys\nfor line in sys.stdin:\n"
                   "    if '\"act\"' in line:\n        print('{\"action\": 99}', flush=True)\n")
    path = tmp_path / "g.json"
    spec = f"cmd[timeout=5]:{sys.executable} {bot}"
    cmd = [sys.executable, "-m", "smear_env.play.cli", "--seed", "1", "--partner", "heuristic",
           "--opponents", spec, "--hint", "random", "--record", str(path)]
    p = subprocess.run(cmd, input="1\n" * 50, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert "Game stopped" in p.stdout and "not legal" in p.stdout and "cmd[timeout=5]" in p.stdout
    (rec,) = load_records(path, validate=True)
    assert rec["truncated"] is True


def test_a_seed_gives_the_same_game_and_agents_cannot_rebuild_the_deal_from_their_generator():
    seen = []

    class Spy:
        name = "spy"

        def __init__(self):
            self.inner = make_agent("heuristic")

        def start_game(self, seat, rules, rng):
            seen.append(rng.bit_generator.seed_seq)
            self.inner.start_game(seat, rules, rng)

        def act_view(self, view):
            return self.inner.act_view(view)

    def game(seed):
        s = Session([Spy(), Spy(), Spy(), Spy()], SmearRules(target_score=4), seed=seed)
        s.advance()
        while not s.over:
            s.next_hand()
        return s.record()

    assert game(9) == game(9) != game(10)
    for ss in seen:  # the agent's seed is a hash, not (seed, ...) from which the deals' SeedSequence follows
        assert 9 not in np.atleast_1d(ss.entropy).tolist() and 10 not in np.atleast_1d(ss.entropy).tolist()
        assert ss.spawn_key == ()
