"""Loopback load test of smear-serve: many concurrent games through the HTTP API, bounded in requests.

Usage::

    PYTHONPATH=. .venv/bin/python benchmarks/web_load.py --games 50 --requests 40 --seed 0

Starts the server (uvicorn, one process) on a free port of 127.0.0.1, then plays ``--games`` games at once
from an asyncio client (httpx): each game is created, then plays random legal moves (dealing the next hand
when one ends) until it is over or has made ``--requests`` requests. Only loopback traffic; bounded in
count and time (``--timeout``). Reports every non-2xx answer and transport error, and checks at the end
that every game still exists with the state its last answer showed (no game lost). Exit status 1 on any
error or lost game.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import time

import numpy as np

SERVER = """
import sys, uvicorn
from smear_env.play.web import create_app
uvicorn.run(create_app(["heuristic"]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def play_one(client, k: int, max_requests: int, seed: int, stats: dict) -> dict | None:
    rng = np.random.default_rng([seed, k])

    async def call(method: str, path: str, body=None):
        t0 = time.perf_counter()
        try:
            r = await client.request(method, path, json=body)
        except Exception as e:  # transport errors count as errors
            stats["errors"].append(f"game {k}: {method} {path}: {type(e).__name__}: {e}")
            return None
        stats["latency"].append(time.perf_counter() - t0)
        stats["requests"] += 1
        if r.status_code >= 300:
            stats["errors"].append(f"game {k}: {method} {path}: HTTP {r.status_code} {r.text[:200]}")
            return None
        return r.json()

    body = {"seat": k % 4, "rules": {"target_score": 5}, "seed": seed * 1000 + k}
    s = await call("POST", "/api/games", body)
    if s is None:
        return None
    gid = s["game_id"]
    last = s
    for _ in range(max_requests - 1):
        if last["over"]:
            break
        if last["view"]["phase"] == "HAND_OVER":
            nxt = await call("POST", f"/api/games/{gid}/next")
        else:
            legal = last["view"]["legal_actions"]
            move = {"action": legal[int(rng.integers(len(legal)))]["id"]}
            nxt = await call("POST", f"/api/games/{gid}/actions", move)
        if nxt is None:
            break
        last = nxt
    return {"id": gid, "last": last}


async def run(base: str, games: int, max_requests: int, seed: int) -> dict:
    import httpx

    stats: dict = {"requests": 0, "errors": [], "latency": []}
    limits = httpx.Limits(max_connections=games, max_keepalive_connections=games)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        t0 = time.perf_counter()
        results = await asyncio.gather(*(play_one(client, k, max_requests, seed, stats)
                                         for k in range(games)))
        wall = time.perf_counter() - t0
        lost = []
        for k, res in enumerate(results):
            if res is None:
                lost.append(f"game {k}: never created")
                continue
            r = await client.get(f"/api/games/{res['id']}")
            now = r.json() if r.status_code == 200 else None
            if now is None or now["view"] != res["last"]["view"] or now["over"] != res["last"]["over"]:
                lost.append(f"game {k}: state differs from its last answer (HTTP {r.status_code})")
    lat = np.array(stats["latency"]) * 1000
    return {
        "games": games,
        "requests": stats["requests"],
        "errors": len(stats["errors"]),
        "error_samples": stats["errors"][:5],
        "lost_games": len(lost),
        "lost_samples": lost[:5],
        "games_over": sum(1 for r in results if r and r["last"]["over"]),
        "wall_s": round(wall, 2),
        "requests_per_s": round(stats["requests"] / wall, 1),
        "latency_ms": {q: round(float(np.percentile(lat, p)), 1) for q, p in
                       (("p50", 50), ("p95", 95), ("p99", 99), ("max", 100))} if lat.size else {},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--requests", type=int, default=40,
                    help="requests per game at most (the create included)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=300, help="give up after this many seconds")
    args = ap.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port)])
    try:
        import httpx

        for _ in range(200):
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/config", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        work = run(f"http://127.0.0.1:{port}", args.games, args.requests, args.seed)
        out = asyncio.run(asyncio.wait_for(work, args.timeout))
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(json.dumps(out, indent=2))
    return 1 if out["errors"] or out["lost_games"] else 0


if __name__ == "__main__":
    sys.exit(main())
