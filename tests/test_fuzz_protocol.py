"""Fuzz tier (issue 50): the bot protocol. A ``cmd:`` bot that plays a few legal moves and then answers
random bytes, random lines, malformed or out-of-range JSON, over-long lines, several answers at once, then
exits, hangs or closes its stdout: every case ends, within its time bound, either with a finished match
(the bytes happened to be legal answers) or with a :class:`~smear_env.agents.protocol.BotError` whose first
line names the bot; no other exception, no hang, and no bot process left behind. Size:
``SMEAR_FUZZ_EXAMPLES`` (tests/fuzz_helpers.py).
"""

from __future__ import annotations

import base64
import json
import sys
import time
from pathlib import Path

from hypothesis import event, given
from hypothesis import strategies as st

from smear_env.agents.protocol import BotError
from smear_env.core.config import SmearRules
from smear_env.evaluation import run_match
from tests.fuzz_helpers import fuzz_settings, time_bound

BOT = Path(__file__).resolve().parent / "fuzz_bot.py"

ACTIONS = st.one_of(st.integers(-5, 80), st.integers(), st.floats(), st.text(max_size=8), st.none(),
                    st.booleans(), st.lists(st.integers(0, 71), max_size=2))
JSON_LINES = st.one_of(
    ACTIONS.map(lambda a: {"action": a}),
    st.tuples(ACTIONS, st.one_of(st.integers(-2, 10**20), st.text(max_size=4))).map(
        lambda t: {"action": t[0], "id": t[1]}),
    st.dictionaries(st.text(max_size=6), ACTIONS, max_size=3),
).map(lambda d: (json.dumps(d) + "\n").encode())
CHUNKS = st.one_of(
    st.binary(max_size=120),
    st.binary(max_size=60).map(lambda b: b + b"\n"),
    st.text(max_size=40).map(lambda t: (t + "\n").encode("utf-8", "surrogatepass")),
    JSON_LINES,
    st.integers(-3, 100).map(lambda n: f"{n}\n".encode()),
    st.sampled_from([b"\n", b"1e400\n", b"NaN\n", b"{\"action\": 1e999}\n", b"\xff\xfe\n", b"40\n40\n",
                     b"x" * 70_000 + b"\n", b"{" * 5_000 + b"\n", b"[" * 50_000 + b"\n"]),
)


def _survivors(pids: list[int], seconds: float = 5.0) -> list[int]:
    """The bot processes still alive ``seconds`` after the match ended."""
    end = time.monotonic() + seconds
    while True:
        alive = []
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                        alive.append(pid)
            except (FileNotFoundError, ProcessLookupError, IndexError):
                pass
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.1)


@given(legal_first=st.integers(0, 6), chunks=st.lists(CHUNKS, max_size=4),
       end=st.sampled_from(["exit", "hang", "close"]), seat_b=st.booleans())
@fuzz_settings()
def test_fuzz_bot_answers(legal_first: int, chunks: list[bytes], end: str, seat_b: bool,
                          tmp_path: Path) -> None:
    n = len(list(tmp_path.glob("plan*.json")))
    plan, pids = tmp_path / f"plan{n}.json", tmp_path / f"pids{n}.txt"
    plan.write_text(json.dumps({"legal_first": legal_first, "end": end,
                                "chunks": [base64.b64encode(c).decode() for c in chunks]}))
    spec = f"cmd[timeout=1,startup_timeout=5]:{sys.executable} {BOT} {plan} {pids}"
    teams = ("random", spec) if seat_b else (spec, "random")
    try:
        with time_bound(60):
            run_match(*teams, games=2, rules=SmearRules(target_score=5), seed=n, max_hands=2,
                      engine="reference")
        event("match finished")
    except BotError as e:
        first = str(e).splitlines()[0]
        assert first.startswith("bot ") and "fuzz_bot.py" in first, str(e)[:500]
        assert len(first) < 2000, first[:300]
        event("BotError")
    started = [int(p) for p in pids.read_text().split()] if pids.exists() else []
    assert not _survivors(started), f"bot processes left running: {started}"
