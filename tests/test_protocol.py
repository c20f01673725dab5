"""The bot protocol smear-bot/1 (docs/PROTOCOL.md): a short match through it, exactness against the
in-process agent, every message private, and failing bots reported by name with finished games kept."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from smear_env.agents import make_agent
from smear_env.agents.protocol import BotError, ProtocolAgent
from smear_env.core.config import SmearRules
from smear_env.engine.infoset import view_of
from smear_env.engine.record import replay, validate_record
from smear_env.engine.seat_view import seat_view, validate_seat_view
from smear_env.evaluation import run_match
from smear_env.evaluation.cli import main as eval_main
from smear_env.play.session import Session
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


# ---------------------------------------------------------------------------- issue 20: the protocol host


def _script(tmp_path, body: str, name: str = "bot.py") -> list[str]:
    """A bot that answers the first legal action until its ``n``-th decision, where ``body`` runs instead
    (``n``, ``legal``, ``m`` the request and ``answer(a)`` in scope)."""
    path = tmp_path / name
    path.write_text(textwrap.dedent("""
        import json, os, signal, subprocess, sys, time
        def answer(a, **extra):
            print(json.dumps({"action": a, **extra}), flush=True)
        LOG = sys.argv[1] if len(sys.argv) > 1 else None
        if LOG:
            open(LOG, "a").write(f"pid {os.getpid()}\\n")
        n = 0
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "quit":
                if LOG:
                    open(LOG, "a").write("quit\\n")
                break
            if m["type"] != "act":
                continue
            n += 1
            legal = [a["id"] for a in m["view"]["legal_actions"]]
    """) + textwrap.indent(textwrap.dedent(body), "    "))
    return [PY, str(path)]


def _view(legal=(0, 1, 2, 3)) -> dict:
    return {"legal_actions": [{"id": a, "name": ""} for a in legal]}


def _within(seconds: float, fn, *args):
    """Run ``fn(*args)`` in a thread; its result or exception, or a test failure if it takes longer
    (the old host hung forever on several of these bots)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            box["error"] = e

    t = threading.Thread(target=run, daemon=True)
    t0 = time.monotonic()
    t.start()
    t.join(seconds)
    if t.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} did not return within {seconds} s (the host hangs)")
    box["seconds"] = time.monotonic() - t0
    return box


def _agent(argv, **kw) -> ProtocolAgent:
    a = ProtocolAgent(argv, name="cmd:testbot", **{"timeout": 1.0, "startup_timeout": 5.0, **kw})
    a.start_game(0, FAST, np.random.default_rng(0))
    return a


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _gone(pids, seconds: float = 3.0) -> bool:
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _kill_pids(pids) -> None:
    import signal

    for p in pids:
        if _alive(p):
            os.kill(p, signal.SIGKILL)


pytestmark_linux = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")


@pytestmark_linux
def test_item1_a_wrapped_bot_with_a_helper_holding_the_pipes_is_killed_with_its_group(tmp_path):
    """Item 1: `bash -c '...'` around a bot that forks a helper holding the pipes, then hangs: the host
    reports the timeout in time and kills the whole group (the old host hung in close(), orphaning them)."""
    pids = tmp_path / "pids"
    argv = _script(tmp_path, f"""
        if n > 1:
            open({str(pids)!r}, "a").write(f"{{os.getpid()}}\\n")
            h = subprocess.Popen([sys.executable, "-c",
                                  "import os,signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                                  "open({str(pids)!r}, 'a').write(str(os.getpid()) + chr(10)); "
                                  "time.sleep(60)"])
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(60)
        answer(legal[0])
    """)
    wrapper = ["bash", "-c", shlex.join(argv) + "; true"]  # '; true': bash stays, the bot is its child
    a = _agent(wrapper)
    assert a.act_json(_view()) == 0
    box = _within(10, a.act_json, _view())
    written = [int(x) for x in pids.read_text().split()] if pids.exists() else []
    try:
        assert isinstance(box.get("error"), BotError), box
        assert "did not answer within 1 s" in str(box["error"]) and "cmd:testbot" in str(box["error"])
        assert len(written) == 2 and _gone(written), "a process of the bot's group survived"
        assert box["seconds"] < 5
    finally:
        _kill_pids(written)
    box = _within(5, a.close)  # nothing left to close; never blocks
    assert "error" not in box


@pytest.mark.parametrize("body,message", [
    ("if n > 1:\n    os.close(0)\nanswer(legal[0])\nif n > 1:\n    time.sleep(60)",
     "closed its stdin but is still running"),
    ("if n > 1:\n    os.close(1)\n    time.sleep(60)\nanswer(legal[0])",
     "closed its stdout but is still running"),
])
def test_item2_a_bot_closing_a_pipe_but_running_is_a_clear_error_not_a_hang(tmp_path, body, message):
    """Item 2: a bot that closes its stdin (the old host hung in proc.wait()) or its stdout (the old host
    raised subprocess.TimeoutExpired) and keeps running: a BotError naming it, within a few seconds."""
    a = _agent(_script(tmp_path, body))
    assert a.act_json(_view()) == 0
    box = _within(10, lambda: [a.act_json(_view()) for _ in range(3)])
    assert isinstance(box.get("error"), BotError), box
    assert message in str(box["error"]) and "cmd:testbot" in str(box["error"])
    assert box["seconds"] < 5
    a.close()


def test_item3_an_endless_stdout_line_is_rejected_while_it_is_read(tmp_path):
    """Item 3: a bot writing one endless line is stopped as soon as the line passes 64 KiB (the old host
    buffered the whole line first: 800 MB took it to 1.9 GB); the flood here is capped at 32 MB."""
    a = _agent(_script(tmp_path, """
        chunk = "x" * 65536
        for _ in range(512):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        time.sleep(60)
    """))
    box = _within(10, a.act_json, _view())
    assert isinstance(box.get("error"), BotError), box
    assert "wrote a line longer than 65536 bytes" in str(box["error"])


def test_item3_a_long_stderr_line_is_kept_bounded_and_reported_fast(tmp_path):
    """Item 3: 8 MB of stderr on one line, then a crash: the report is quick and holds at most the last
    8 KiB (the old one held the whole line and took 33 s to build)."""
    a = _agent(_script(tmp_path, """
        sys.stderr.write("z" * (8 << 20) + "\\nlast words\\n")
        sys.stderr.flush()
        sys.exit(3)
    """))
    box = _within(10, a.act_json, _view())
    e = box.get("error")
    assert isinstance(e, BotError), box
    assert "exited (code 3) instead of answering" in str(e) and str(e).endswith("last words")
    assert len(str(e)) < 9000 and box["seconds"] < 5


def test_item3_a_bot_flooding_stderr_cannot_block_or_grow_the_host(tmp_path):
    """Item 3: endless stderr without a newline and no answer: a timeout, with a bounded tail."""
    a = _agent(_script(tmp_path, """
        while n > 1:
            sys.stderr.write("y" * 65536)
        answer(legal[0])
    """))
    assert a.act_json(_view()) == 0
    box = _within(10, a.act_json, _view())
    e = box.get("error")
    assert isinstance(e, BotError) and "did not answer within 1 s" in str(e), box
    assert len(str(e)) < 9000


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "0", "-1", "3601", "abc", "true"])
def test_item4_timeout_options_must_be_finite_positive_and_at_most_an_hour(value):
    """Item 4: nan (never timed out, 100% CPU), inf / 1e400 (an OverflowError traceback) and the others:
    a ValueError naming the option and the allowed range."""
    for key in ("timeout", "startup_timeout"):
        with pytest.raises(ValueError, match=rf"{key} must be a number of seconds > 0 and <= 3600, not"):
            make_agent(f"cmd[{key}={value}]:{PY} x.py")
    with pytest.raises(ValueError, match="timeout must be a number of seconds > 0 and <= 3600"):
        ProtocolAgent([PY, "x.py"], timeout=float("nan"))
    assert ProtocolAgent.from_spec(f"cmd[timeout=3600,startup_timeout=0.5]:{PY} x.py").timeout == 3600


def test_item4_smear_eval_rejects_a_nan_timeout_in_one_line(capsys):
    with pytest.raises(SystemExit) as ex:
        eval_main([f"cmd[timeout=nan]:{PY} examples/random_bot.py", "random"])
    err = capsys.readouterr().err
    assert ex.value.code == 2 and "Traceback" not in err and "timeout must be a number of seconds" in err


def test_item5_an_extra_answer_line_is_a_protocol_error_not_played_later(tmp_path):
    """Item 5: a bot answering 2 then 0 to one request: the old host played 2, queued the 0 and played it
    for the next decision; now the second line is an error naming the bot and what it wrote."""
    a = _agent(_script(tmp_path, "print(json.dumps({'action': 2}) + '\\n' + json.dumps({'action': 0}), "
                                 "flush=True)"))
    box = _within(10, lambda: [a.act_json(_view()) for _ in range(3)])
    e = box.get("error")
    assert isinstance(e, BotError), box
    assert re.search(r"^bot 'cmd:testbot' \(seat 0\) wrote '\{\"action\": 0\}(\\n)?' after its answer "
                     r"'\{\"action\": 2\}' to request 1 ", str(e)), str(e)


def test_item5_an_answer_before_the_request_is_a_protocol_error(tmp_path):
    """Item 5: a line written before the host asked is reported as such (the old host took it as the
    answer to the next request and blamed that move)."""
    path = tmp_path / "early.py"
    path.write_text(textwrap.dedent("""
        import json, sys
        for line in sys.stdin:
            m = json.loads(line)
            if m["type"] == "start_game":
                print(json.dumps({"action": 3}), flush=True)   # before any request
            elif m["type"] == "act":
                print(json.dumps({"action": 0}), flush=True)
    """))
    a = _agent([PY, str(path)])
    time.sleep(0.5)
    box = _within(10, a.act_json, _view())
    e = box.get("error")
    assert isinstance(e, BotError), box
    assert "wrote '{\"action\": 3}\\n' before it was asked (request 1)" in str(e)


def test_item5_an_answer_to_another_request_id_is_a_protocol_error(tmp_path):
    """Item 5: requests carry an id; a bot that echoes one must echo the request's (here: a late answer
    to request 1 arriving for request 2)."""
    a = _agent(_script(tmp_path, """
        answer(legal[0], id=m["id"] if n == 1 else 1)
    """))
    assert a.act_json(_view()) == 0
    assert a.sent[-1:] == [] and a._request == 1
    box = _within(10, a.act_json, _view())
    e = box.get("error")
    assert isinstance(e, BotError), box
    assert "to request 2 (its \"id\" must be the request's id)" in str(e)


def test_item5_requests_are_numbered_and_echoed_ids_accepted(tmp_path):
    a = _agent(_script(tmp_path, "answer(legal[-1], id=m['id'])"))
    a.keep_messages = True
    assert [a.act_json(_view()) for _ in range(3)] == [3, 3, 3]
    assert [m["id"] for m in a.sent] == [1, 2, 3]
    a.close()


def test_item6_run_match_sends_quit_to_its_bots_and_none_survives(tmp_path):
    """Item 6: at the end of a one-process match each bot gets `quit` and has ended (the old host never
    sent it: the bots were SIGKILLed when the agents were collected, or outlived the match)."""
    log = tmp_path / "bots.log"
    spec = "cmd:" + shlex.join(_script(tmp_path, "answer(legal[0])") + [str(log)])
    recs = []
    run_match(spec, "heuristic", games=2, rules=FAST, seed=0, records=recs.append)
    lines = log.read_text().split("\n")
    pids = [int(x.split()[1]) for x in lines if x.startswith("pid ")]
    assert len(recs) == 2 and len(pids) == 2  # one process per seat of the bot's team
    assert lines.count("quit") == 2
    assert _gone(pids, 0.5)


def test_close_is_idempotent_and_safe_from_another_thread_while_it_waits(tmp_path):
    """smear-serve closes agents from other threads: close() during an exchange ends it promptly with a
    BotError, kills the bot, and closing again (or from several threads) is harmless."""
    log = tmp_path / "bot.log"
    a = _agent(_script(tmp_path, "time.sleep(60)") + [str(log)], timeout=30.0)
    result: dict = {}

    def wait():
        try:
            a.act_json(_view())
        except BotError as e:
            result["error"] = e

    t = threading.Thread(target=wait)
    t.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    closers = [threading.Thread(target=a.close) for _ in range(3)]
    for c in closers:
        c.start()
    for c in closers:
        c.join(5)
    t.join(5)
    assert not t.is_alive() and time.monotonic() - t0 < 3
    assert "was closed by the host" in str(result["error"])
    assert _gone([int(log.read_text().split()[1])])
    a.close()
    a.close()
    from smear_env.agents.protocol import close_agents

    close_agents([a, make_agent("random")])


def test_a_bot_that_never_reads_cannot_block_the_host(tmp_path):
    """A bot that stops reading: the host's write is bounded by the timeout too (the old host blocked in
    write() forever once the pipe was full)."""
    a = _agent(["sleep", "60"], startup_timeout=1.0)
    view = _view()
    view["padding"] = "p" * (4 << 20)  # more than any pipe buffer
    box = _within(10, a.act_json, view)
    e = box.get("error")
    assert isinstance(e, BotError) and "did not read its input within" in str(e), box


def test_non_utf8_and_escape_codes_are_shown_escaped(tmp_path):
    """Answers and stderr are shown with control characters escaped (a bot cannot drive the terminal)."""
    a = _agent(_script(tmp_path, """
        sys.stderr.write("\\x1b[2J cleared\\n"); sys.stderr.flush()
        os.write(1, b"\\x1b[31m\\xff\\n")
    """))
    box = _within(10, a.act_json, _view())
    e = str(box.get("error"))
    assert "\x1b" not in e and "not UTF-8" in e and "\\x1b[2J cleared" in e, e


def test_a_bot_that_exits_at_once_is_reported(tmp_path):
    path = tmp_path / "quick.py"
    path.write_text("")
    a = ProtocolAgent([PY, str(path)], name="cmd:quick", timeout=1.0)
    box = _within(10, lambda: (a.start_game(0, FAST, np.random.default_rng(0)), a.act_json(_view())))
    e = box.get("error")
    assert isinstance(e, BotError) and "exited (code 0)" in str(e), box


def test_bad_cmd_specs_with_a_nul_character_are_clear_errors():
    with pytest.raises(ValueError, match="cannot hold a NUL character"):
        make_agent(f"cmd:{PY} a\x00b")


def test_a_bot_that_cannot_start_is_a_short_error():
    a = ProtocolAgent([PY, "-c", "pass", "x" * (3 << 20)], name="cmd:huge")  # over the argv size limit
    with pytest.raises(BotError, match="cannot start") as e:
        a.start_game(0, FAST, np.random.default_rng(0))
    assert len(str(e.value)) < 1000


@pytestmark_linux
def test_a_bot_cannot_write_to_the_users_terminal(tmp_path):
    """The bot runs in a session of its own, without the host's controlling terminal: opening /dev/tty
    fails (the old host let a bot write to, or read from, the user's terminal)."""
    import pty

    host = tmp_path / "host.py"
    host.write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(os.getcwd())!r})
        import numpy as np
        from smear_env.agents.protocol import ProtocolAgent
        from smear_env.core.config import SmearRules
        bot = ("import os, sys, json\\n"
               "for l in sys.stdin:\\n"
               "    if json.loads(l)['type'] == 'act':\\n"
               "        try:\\n"
               "            os.write(os.open('/dev/tty', os.O_WRONLY), b'BOT-ON-TTY')\\n"
               "        except OSError:\\n"
               "            pass\\n"
               "        print(0, flush=True)\\n")
        a = ProtocolAgent([sys.executable, "-c", bot], name="cmd:tty", timeout=5.0)
        a.start_game(0, SmearRules(), np.random.default_rng(0))
        print("answer", a.act_json({{"legal_actions": [{{"id": 0, "name": ""}}]}}), flush=True)
        a.close()
    """))
    pid, fd = pty.fork()
    if pid == 0:  # the child has the pty as its controlling terminal
        os.execv(PY, [PY, str(host)])
    out = b""
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        out += data
    os.waitpid(pid, 0)
    os.close(fd)
    assert b"answer 0" in out, out
    assert b"BOT-ON-TTY" not in out
