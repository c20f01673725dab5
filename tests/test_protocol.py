"""The bot protocol smear-bot/1 (docs/PROTOCOL.md): a short match through it, exactness against the
in-process agent, every message private, and failing bots reported by name with finished games kept."""

from __future__ import annotations

import json
import sys
import textwrap

import numpy as np
import pytest

from smear_env.agents import make_agent
from smear_env.agents.protocol import BotError, ProtocolAgent
from smear_env.config import SmearRules
from smear_env.evaluation import run_match
from smear_env.evaluation.cli import main as eval_main
from smear_env.infoset import view_of
from smear_env.play.session import Session
from smear_env.record import replay, validate_record
from smear_env.seat_view import seat_view, validate_seat_view
from tests.play_helpers import card_names_in, known_names
from tests.test_privacy import _redeal_hidden

PY = sys.executable
FAST = SmearRules(target_score=5)
RANDOM_BOT = f"cmd:{PY} examples/random_bot.py"


def _summary(m):
    s = m.summary()
    for k in ("team_a", "seconds"):
        s.pop(k)
    s["teams"]["a"].pop("agent")
    return s


def test_short_match_through_the_protocol_with_the_example_bot():
    recs = []
    m = run_match(RANDOM_BOT, "heuristic", games=2, rules=FAST, seed=1, records=recs.append)
    assert m.team_a == RANDOM_BOT and len(recs) == 2
    for r in recs:
        validate_record(r)
        replay(r)
        assert r["players"].count(RANDOM_BOT) == 2


def test_a_python_agent_behind_the_protocol_plays_exactly_as_in_process():
    bot = f"cmd:{PY} -m smear_env.agents.protocol heuristic"
    via = run_match(bot, "random", games=4, rules=FAST, seed=3)
    direct = run_match("heuristic", "random", games=4, rules=FAST, seed=3)
    assert _summary(via) == _summary(direct)


def test_every_protocol_message_holds_only_what_the_seat_may_know_r23():
    """Bots in seats 1 and 2: each view they are sent is exactly their seat view, names no card they may
    not know, and does not change when the hidden cards are re-dealt."""
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(3):
        bots = {s: ProtocolAgent([PY, "examples/random_bot.py"]) for s in (1, 2)}
        agents = [make_agent("heuristic"), bots[1], bots[2], make_agent("random")]
        session = Session(agents, SmearRules(kitty_size=seed + 1, target_score=4), seed=seed, max_hands=12)
        for s, bot in bots.items():
            original = bot.act_json

            def spy(view_json, s=s, original=original, session=session):
                nonlocal checked
                g = session.game
                validate_seat_view(view_json)
                assert json.loads(json.dumps(view_json)) == seat_view(view_of(g, s))
                assert card_names_in(view_json) <= known_names(g, s)
                assert seat_view(view_of(_redeal_hidden(g, s, rng), s)) == view_json
                checked += 1
                return original(view_json)

            bot.act_json = spy
        session.advance()
        while not session.over:
            session.next_hand()
        assert session.error is None
        session.close()
    assert checked > 40


def _bot(tmp_path, body: str) -> str:
    path = tmp_path / "bot.py"
    path.write_text(textwrap.dedent("""
        import json, sys, time
        n = 0
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] != "act":
                continue
            n += 1
            legal = [a["id"] for a in m["view"]["legal_actions"]]
    """) + textwrap.indent(textwrap.dedent(body), "    "))
    return f"cmd[timeout=1]:{PY} {path}"


@pytest.mark.parametrize("body,message", [
    ("if n > 25:\n    sys.exit('boom')\nprint(json.dumps({'action': legal[0]}), flush=True)",
     r"exited \(code 1\) instead of answering; its last stderr lines:\nboom"),
    ("if n > 25:\n    time.sleep(30)\nprint(json.dumps({'action': legal[0]}), flush=True)",
     r"did not answer within 1 s"),
    ("print('hello' if n > 25 else legal[0], flush=True)", r"answered 'hello', which is not an action"),
    ("print(json.dumps({'action': 71 if n > 25 else legal[0]}), flush=True)",
     r"answered action 71 \(play AS\), which is not legal; legal actions: "),
])
def test_a_failing_bot_stops_the_match_by_name_and_finished_games_are_kept(tmp_path, body, message):
    spec = _bot(tmp_path, body)
    recs = []
    with pytest.raises(BotError, match=message) as e:
        run_match(spec, "heuristic", games=4, rules=SmearRules(target_score=3), seed=0, records=recs.append)
    assert e.value.bot == spec and spec in str(e.value)
    assert len(recs) >= 1  # the bot fails in the second game: the first is kept
    for r in recs:  # each finished game is kept, complete
        replay(r)
        assert r["winner"] is not None


def test_smear_eval_reports_a_failing_bot_cleanly(tmp_path, capsys):
    spec = _bot(tmp_path, "print(json.dumps({'action': 71}), flush=True)")
    out = tmp_path / "games.jsonl"
    rc = eval_main([spec, "heuristic", "--games", "2", "--target-score", "3", "--records", str(out)])
    err = capsys.readouterr().err
    assert rc == 1 and "match stopped" in err and "not legal" in err and "Traceback" not in err


def test_bad_cmd_specs_are_clear_errors():
    with pytest.raises(ValueError, match="not found"):
        make_agent("cmd:no-such-program-xyz")
    with pytest.raises(ValueError, match="empty"):
        make_agent("cmd:")
    with pytest.raises(ValueError, match="unknown option 'speed'"):
        make_agent(f"cmd[speed=2]:{PY} x.py")
    with pytest.raises(ValueError, match="timeout must be"):
        make_agent(f"cmd[timeout=0]:{PY} x.py")
