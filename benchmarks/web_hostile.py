"""What a hostile client costs the other clients of smear-serve (issue 50): honest pollers' latency alone,
then with each kind of hostile request running, on a real uvicorn server on loopback.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/web_hostile.py --seconds 10 --pollers 6 --seed 0
    PYTHONPATH=. .venv/bin/python benchmarks/web_hostile.py --reference /path/to/other/checkout  # both

For each phase a fresh server starts (one process, ``python -c``: agents heuristic and random, hints
heuristic and pimc, as ``smear-serve``'s default hint agents with the first agent heuristic) on a free port
of 127.0.0.1. ``--pollers`` honest clients (each a game with one person, the rest agents) poll their game
(``GET /api/games/{token}?since=seq``) every ``--interval`` seconds; a game with two people (seats 0 and 2)
has its seat 2 polling too and moving when it is to act. The hostile load runs in another process (so it
does not share the honest clients' interpreter), from ``--seconds / 5`` after the start:

* ``json``: two loops posting a 24 KB body of escaped quotes (``"\\"\\"...``) and a 5 MiB one to
  ``/api/replay``, and a 128 KiB body to ``/api/games``;
* ``upload``: four loops posting valid records of 500 hands (each a new file: nothing cached) and of 4,000
  hands (over the cap);
* ``hints``: the seat to act of the two-person game asking for hints in six parallel loops, and moving
  when it can (so positions change and hints are computed again);
* ``all``: the three together.

Reported per phase: the honest polls' p50 / p95 / p99 / max (ms) and count, the added p95 against the
``baseline`` phase of the same server code, the p95 of the two-person game's other seat (``hints``), the
hostile requests by status, and the load average before and after. Exit status 0 (figures only).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

SERVER = """
import sys, uvicorn
from smear_env.play.web import create_app
app = create_app(["heuristic", "random"], hints=["heuristic", "pimc"])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error")
"""
KINDS = ("json", "upload", "hints")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(src: str) -> tuple[subprocess.Popen, str]:
    import httpx

    port = free_port()
    env = dict(os.environ, PYTHONPATH=src)
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(port)], env=env, cwd=src)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/api/config", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the server under {src} did not start")


def records(seed: int) -> tuple[str, str]:
    """(a valid 500-hand record, a 4,000-hand one), as JSON text."""
    from smear_env.agents import make_agent
    from smear_env.core.config import SmearRules
    from smear_env.evaluation import play_game

    rec, _ = play_game([make_agent("random") for _ in range(4)], SmearRules(target_score=10**6), seed=seed,
                       max_hands=500)
    big = dict(rec, hands=rec["hands"] * 8)
    return json.dumps(rec, separators=(",", ":")), json.dumps(big, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------- hostile
def hostile(base: str, kinds: list[str], seconds: float, hint_token: str, seed: int, out: str) -> None:
    """The hostile process: loops of the ``kinds`` of requests until ``seconds`` pass; writes the count of
    answers by status to ``out``."""
    import httpx

    stop = time.monotonic() + seconds
    counts: dict[str, int] = {}
    lock = threading.Lock()

    def note(what: str, status: object) -> None:
        with lock:
            counts[f"{what} {status}"] = counts.get(f"{what} {status}", 0) + 1

    def loop(what: str, fn) -> None:
        with httpx.Client(base_url=base, timeout=60) as c:
            k = 0
            while time.monotonic() < stop:
                try:
                    note(what, fn(c, k).status_code)
                except httpx.HTTPError as e:
                    note(what, type(e).__name__)
                k += 1

    quotes_small = '"' + '\\"' * 12000
    quotes_big = '"' + '\\"' * ((5 << 20) // 2 - 8)
    flat = b"[" + b"0," * ((128 << 10) // 2 - 8) + b"0]"
    jobs = []
    if "json" in kinds:
        jobs += [("json 24KB", lambda c, k: c.post("/api/replay", content=quotes_small,
                                                    headers={"Content-Type": "application/json"})),
                 ("json 5MiB", lambda c, k: c.post("/api/replay", content=quotes_big,
                                                   headers={"Content-Type": "application/json"})),
                 ("json 128KiB", lambda c, k: c.post("/api/games", content=flat,
                                                     headers={"Content-Type": "application/json"}))]
    if "upload" in kinds:
        rec, big = records(seed)
        head = rec.index('"rules"')

        def upload(c, k, n=[0]):  # noqa: B006 - a counter shared by the loops
            n[0] += 1
            body = rec[:head] + f'"note":"{n[0]}",' + rec[head:] if k % 2 == 0 else big
            return c.post("/api/replay", content=body, headers={"Content-Type": "application/json"})

        jobs += [("upload", upload)] * 4
    if "hints" in kinds:
        jobs += [("hint", lambda c, k: c.get(f"/api/games/{hint_token}/hint"))] * 6
        rng = np.random.default_rng(seed)

        def mover(c, k):
            s = c.get(f"/api/games/{hint_token}").json()
            if s["view"]["phase"] == "HAND_OVER":
                return c.post(f"/api/games/{hint_token}/next")
            legal = s["view"]["legal_actions"]
            if not legal:
                time.sleep(0.05)
                return c.get(f"/api/games/{hint_token}?since={s['seq']}")
            time.sleep(0.3)  # a position lives a little while: the hint loops ask about it
            return c.post(f"/api/games/{hint_token}/actions",
                          json={"action": legal[int(rng.integers(len(legal)))]["id"]})

        jobs += [("hint-seat move", mover)]
    threads = [threading.Thread(target=loop, args=j) for j in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    Path(out).write_text(json.dumps(counts))


# ---------------------------------------------------------------------------------------------- honest
def honest(base: str, pollers: int, seconds: float, interval: float, seed: int, hostile_kinds: list[str],
           src: str) -> dict:
    import httpx

    with httpx.Client(base_url=base, timeout=60) as c:
        tokens = []
        for k in range(pollers):
            s = c.post("/api/games", json={"seat": k % 4, "seed": seed * 100 + k,
                                           "rules": {"target_score": 11}}).json()
            tokens.append(s["game_id"])
        duo = c.post("/api/games", json={"humans": [0, 2], "seed": seed * 100 + 99}).json()
        seats = {int(a): b.split("=", 1)[1] for a, b in duo["links"]["seats"].items()}
    lat: list[float] = []
    other: list[float] = []
    stop = time.monotonic() + seconds
    rng = np.random.default_rng(seed)

    def poll(tok: str, sink: list[float], plays: bool) -> None:
        seq = 0
        with httpx.Client(base_url=base, timeout=30) as c:
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                try:
                    r = c.get(f"/api/games/{tok}?since={seq}")
                except httpx.HTTPError:  # a stalled server: the wait counts, the poll goes on
                    sink.append(time.perf_counter() - t0)
                    continue
                sink.append(time.perf_counter() - t0)
                s = r.json()
                seq = s["seq"]
                if plays and s["view"]["legal_actions"]:
                    legal = s["view"]["legal_actions"]
                    try:
                        s = c.post(f"/api/games/{tok}/actions",
                                   json={"action": legal[int(rng.integers(len(legal)))]["id"]}).json()
                        seq = s.get("seq", seq)
                    except httpx.HTTPError:
                        pass
                time.sleep(interval)

    threads = [threading.Thread(target=poll, args=(t, lat, False)) for t in tokens]
    threads.append(threading.Thread(target=poll, args=(seats[2], other, True)))
    load = [round(x, 2) for x in os.getloadavg()]
    counts = {}
    proc = None
    if hostile_kinds:
        out = Path(f"/tmp/web_hostile_{os.getpid()}_{'-'.join(hostile_kinds)}.json")
        proc = subprocess.Popen([sys.executable, __file__, "--hostile", ",".join(hostile_kinds),
                                 "--base", base, "--seconds", str(seconds * 0.8), "--token", seats[0],
                                 "--seed", str(seed), "--out", str(out)],
                                env=dict(os.environ, PYTHONPATH=src))
        time.sleep(seconds * 0.2)  # (the hostile process starts meanwhile)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if proc is not None:
        try:
            proc.wait(timeout=seconds + 60)
            counts = json.loads(out.read_text())
            out.unlink()
        except (subprocess.TimeoutExpired, FileNotFoundError):
            proc.kill()
            counts = {"hostile process": "did not finish"}

    def q(x: list[float]) -> dict:
        a = np.array(x) * 1000
        return {"n": int(a.size), **{k: round(float(np.percentile(a, p)), 1) for k, p in
                                     (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100))}} if a.size else {}

    return {"polls_ms": q(lat), "other_seat_ms": q(other), "hostile": counts, "load_before": load,
            "load_after": [round(x, 2) for x in os.getloadavg()]}


def run(src: str, args: argparse.Namespace) -> dict:
    out = {}
    phases = {"baseline": [], "json": ["json"], "upload": ["upload"], "hints": ["hints"], "all": list(KINDS)}
    for name, kinds in phases.items():
        if args.phases and name not in args.phases and name != "baseline":
            continue
        proc, base = start_server(src)
        try:
            out[name] = honest(base, args.pollers, args.seconds, args.interval, args.seed, kinds, src)
        finally:
            proc.terminate()  # uvicorn shuts down: the server closes its games and its replay worker
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        p95 = out[name]["polls_ms"].get("p95")
        if name != "baseline" and p95 is not None:
            out[name]["added_p95_ms"] = round(p95 - out["baseline"]["polls_ms"]["p95"], 1)
        print(f"{src} {name}: {json.dumps(out[name])}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    ap.add_argument("--pollers", type=int, default=6, help="honest pollers (one game each)")
    ap.add_argument("--interval", type=float, default=0.2, help="seconds between a poller's requests")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--phases", nargs="*", help=f"phases besides the baseline (default all: {KINDS}, all)")
    ap.add_argument("--reference", help="another checkout to measure too (its phases interleaved)")
    ap.add_argument("--out", help="write the figures here as JSON")
    ap.add_argument("--hostile", help=argparse.SUPPRESS)
    ap.add_argument("--base", help=argparse.SUPPRESS)
    ap.add_argument("--token", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.hostile:
        hostile(args.base, args.hostile.split(","), args.seconds, args.token, args.seed, args.out)
        return 0
    here = str(Path(__file__).resolve().parents[1])
    result = {"cpus": os.cpu_count(), "seconds": args.seconds, "pollers": args.pollers,
              "interval": args.interval, "seed": args.seed, "this": run(here, args)}
    if args.reference:
        result["reference"] = run(str(Path(args.reference).resolve()), args)
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
