"""Loopback load test of smear-serve: many concurrent games with two people each, then abandoned games and
the idle reaper. Bounded in requests and time.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/web_load.py --games 100 --requests 120 --abandon 1000 --seed 0

Starts the server (uvicorn, one process, agents ``heuristic``) on a free port of 127.0.0.1. Then:

1. **Play**: ``--games`` games at once from an asyncio client (httpx). Each game has two human seats (a
   pair of partners or of opponents, by turns) and two agents; each human seat has its own link. The
   client plays both people: it polls both links (``?since=``, as the page does), moves for whichever
   seat is to act (a random legal move), deals the next hand when one ends, until the game is over or has
   made ``--requests`` requests. Every non-2xx answer and transport error is an error; when a game stops
   it must still answer on both links with the state its last answers showed (no game lost; a game that
   then idles past the TTL is reaped, as it should be).
2. **Abandon**: ``--abandon`` games (default rules; the agents are the shipped agent when it is here) are
   created and a move made, then left alone. The server runs with
   ``--ttl`` seconds of idle time-to-live; the script reads the server's resident memory (``VmRSS``) before,
   after creating them, and after the reaper ran; then repeats once (memory must not keep growing) and
   checks that an abandoned link answers 404.

Exit status 1 on any error, lost game, or an abandoned game that was not reaped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SERVER = """
import sys, uvicorn
from smear_env.play.web import create_app
from smear_env.play.cli import shipped_agent_path
agents = ["heuristic"] + (["default"] if shipped_agent_path() else [])
app = create_app(agents, hints=["heuristic"], idle_ttl=float(sys.argv[2]), reap_every=0.5, max_games=100000)
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")  # pragma: no cover


class Client:
    def __init__(self, client, stats: dict) -> None:
        self.client = client
        self.stats = stats

    async def call(self, method: str, path: str, body=None, what: str = ""):
        t0 = time.perf_counter()
        try:
            r = await self.client.request(method, path, json=body)
        except Exception as e:  # transport errors count as errors
            self.stats["errors"].append(f"{what}: {method} {path}: {type(e).__name__}: {e}")
            return None
        self.stats["latency"].append(time.perf_counter() - t0)
        self.stats["requests"] += 1
        if r.status_code >= 300:
            self.stats["errors"].append(f"{what}: {method} {path}: HTTP {r.status_code} {r.text[:200]}")
            return None
        return r.json()


def _humans(k: int) -> list[int]:
    first = k % 4
    return [first, (first + 2) % 4] if k % 2 == 0 else [first, (first + 1) % 4]


async def play_one(c: Client, k: int, max_requests: int, seed: int) -> dict | None:
    rng = np.random.default_rng([seed, k])
    body = {"humans": _humans(k), "rules": {"target_score": 5}, "seed": seed * 1000 + k}
    s = await c.call("POST", "/api/games", body, f"game {k}")
    if s is None:
        return None
    toks = {int(seat): link.split("game=")[1] for seat, link in s["links"]["seats"].items()}
    seqs = dict.fromkeys(toks, 0)
    last = {}
    n = 1
    while n < max_requests:
        for seat, tok in toks.items():  # both pages poll for the other's moves
            st = await c.call("GET", f"/api/games/{tok}?since={seqs[seat]}", what=f"game {k}")
            n += 1
            if st is None:
                return None
            seqs[seat] = st["seq"]
            last[seat] = st
        st = last[toks.__iter__().__next__()]
        if st["over"]:
            break
        if st["view"]["phase"] == "HAND_OVER":
            seat = list(toks)[int(rng.integers(2))]
            nxt = await c.call("POST", f"/api/games/{toks[seat]}/next", what=f"game {k}")
        else:
            seat = st["view"]["to_act"]
            legal = last[seat]["view"]["legal_actions"]
            move = {"action": legal[int(rng.integers(len(legal)))]["id"]}
            path = f"/api/games/{toks[seat]}/actions?since={seqs[seat]}"
            nxt = await c.call("POST", path, move, f"game {k}")
        n += 1
        if nxt is None:
            return None
        seqs[seat] = nxt["seq"]
        last[seat] = nxt
    lost = []
    newest = max(toks, key=lambda x: last[x]["seq"])  # the seat whose answer came last
    for seat, tok in toks.items():  # the game is still there, as its last answers showed it
        st = await c.call("GET", f"/api/games/{tok}", what=f"game {k}")
        was = last[seat]
        if st is None or st["seq"] != last[newest]["seq"] or (seat == newest and st["view"] != was["view"]):
            lost.append(f"game {k} seat {seat}: state differs from its last answer")
    return {"toks": toks, "last": last, "lost": lost}


async def play(base: str, games: int, max_requests: int, seed: int) -> dict:
    import httpx

    stats: dict = {"requests": 0, "errors": [], "latency": []}
    limits = httpx.Limits(max_connections=games * 2, max_keepalive_connections=games * 2)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        c = Client(client, stats)
        t0 = time.perf_counter()
        results = await asyncio.gather(*(play_one(c, k, max_requests, seed) for k in range(games)))
        wall = time.perf_counter() - t0
        lost = [x for r in results if r for x in r["lost"]]
        lost += [f"game {k}: stopped by an error" for k, r in enumerate(results) if r is None]
    lat = np.array(stats["latency"]) * 1000
    return {
        "games": games,
        "humans_per_game": 2,
        "requests": stats["requests"],
        "errors": len(stats["errors"]),
        "error_samples": stats["errors"][:5],
        "lost_games": len(lost),
        "lost_samples": lost[:5],
        "games_over": sum(1 for r in results if r and next(iter(r["last"].values()))["over"]),
        "wall_s": round(wall, 2),
        "requests_per_s": round(stats["requests"] / wall, 1),
        "latency_ms": {q: round(float(np.percentile(lat, p)), 1) for q, p in
                       (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100))} if lat.size else {},
    }


async def abandon(base: str, n: int, seed: int, batch: int = 50) -> tuple[int, str | None]:
    """Create ``n`` two-human games, make a move in each, and leave them. Returns (errors, the newest
    game's link)."""
    import httpx

    errors = 0
    link = None
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        cfg = (await client.get("/api/config")).json()
        ids = [a["id"] for a in cfg["agents"]]
        shipped = "default" in ids
        async def one(k: int) -> str | None:
            nonlocal errors
            humans = _humans(k)
            body = {"humans": humans, "seed": seed + k}
            if shipped:
                body["agents"] = {str(x): "default" for x in range(4) if x not in humans}
            r = await client.post("/api/games", json=body)
            if r.status_code != 201:
                errors += 1
                return None
            s = r.json()
            toks = {int(a): b.split("game=")[1] for a, b in s["links"]["seats"].items()}
            seat = s["view"]["to_act"]
            if seat in toks:
                st = (await client.get(f"/api/games/{toks[seat]}")).json()
                legal = st["view"]["legal_actions"]
                if legal:
                    r = await client.post(f"/api/games/{toks[seat]}/actions", json={"action": legal[0]["id"]})
                    errors += r.status_code != 200
            return toks[s["seat"]]

        for start in range(0, n, batch):
            out = await asyncio.gather(*(one(k) for k in range(start, min(n, start + batch))))
            link = next((x for x in reversed(out) if x), link)  # the newest abandoned game
    return errors, link


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--requests", type=int, default=120,
                    help="requests per game at most (the create included)")
    ap.add_argument("--abandon", type=int, default=1000, help="abandoned games to create (twice)")
    ap.add_argument("--ttl", type=float, default=30.0, help="the server's idle time-to-live (seconds)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=600, help="give up after this many seconds")
    args = ap.parse_args()
    import httpx

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(args.ttl)])
    out: dict = {}
    try:
        for _ in range(300):
            try:
                httpx.get(base + "/api/config", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        out["rss_mb_start"] = rss_mb(server.pid)
        out["play"] = asyncio.run(asyncio.wait_for(play(base, args.games, args.requests, args.seed),
                                                   args.timeout))
        out["rss_mb_after_play"] = rss_mb(server.pid)
        time.sleep(args.ttl + 2)  # the played games are idle now: reaped too
        out["rss_mb_after_play_reaped"] = rss_mb(server.pid)
        ab: dict = {"games": args.abandon, "ttl_s": args.ttl}
        for rnd in (1, 2):
            errors, link = asyncio.run(asyncio.wait_for(abandon(base, args.abandon, 10**6 * rnd),
                                                        args.timeout))
            ab[f"round{rnd}_errors"] = errors
            ab[f"round{rnd}_rss_mb_created"] = rss_mb(server.pid)
            ab[f"round{rnd}_link_before_reap"] = httpx.get(f"{base}/api/games/{link}").status_code
            time.sleep(args.ttl + 2)
            ab[f"round{rnd}_rss_mb_reaped"] = rss_mb(server.pid)
            ab[f"round{rnd}_link_after_reap"] = httpx.get(f"{base}/api/games/{link}").status_code
        out["abandon"] = ab
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(json.dumps(out, indent=2))
    p, ab = out["play"], out["abandon"]
    bad = p["errors"] or p["lost_games"] or ab["round1_errors"] or ab["round2_errors"] \
        or ab["round1_link_after_reap"] != 404 or ab["round2_link_after_reap"] != 404 \
        or ab["round1_link_before_reap"] != 200
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
