"""The ladder: games per pair, the round robin's matches equal run_match's, ratings order known agents, the
cache replays nothing, the page states its figures, and bad input is a clear error."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from smear_env.evaluation import ladder as L
from smear_env.evaluation import run_match

PLAYERS = ["random", "heuristic", "passer"]


def test_pairs_with_a_searched_or_external_player_play_the_smaller_count():
    assert L.games_for("random", "heuristic", 2000, 400, 1.0) == 2000
    assert L.games_for("default", "pimc", 2000, 400, 1.0) == 400
    assert L.games_for("pimc:samples=24,bid_samples=32", "scratch", 2000, 400, 1.0) == 400
    assert L.games_for("cmd:python bot.py", "random", 2000, 400, 1.0) == 400
    assert L.games_for("random", "heuristic", 2000, 400, 0.05) == 100
    assert L.games_for("random", "pimc", 2000, 400, 0.0001) == 2  # at least one duplicate pair
    assert L.games_for("random", "heuristic", 2000, 400, 0.0015) == 4  # rounded to an even number
    assert not L.is_slow("pimcish.safetensors") and L.is_slow("pimc")


def test_round_robin_matches_and_ratings(tmp_path, monkeypatch):
    cache = tmp_path / "m.jsonl"
    doc = L.run_ladder(PLAYERS, games=20, slow_games=4, seed=7, n_boot=50, cache=cache, log=lambda _l: None)
    assert [(m["a"], m["b"]) for m in doc["matches"]] == [
        ("random", "heuristic"), ("random", "passer"), ("heuristic", "passer")]
    assert all(m["games"] == 20 for m in doc["matches"])
    direct = run_match("heuristic", "passer", games=20, seed=7).summary()
    got = doc["matches"][2]["summary"]
    assert {k: v for k, v in got.items() if k != "seconds"} == {
        k: v for k, v in direct.items() if k != "seconds"}
    order = [r["player"] for r in doc["ratings"]]
    assert order == ["heuristic", "passer", "random"]  # random overbids: the passer beats it
    rating = {r["player"]: r for r in doc["ratings"]}
    assert rating["heuristic"]["rating"] == 0.0 and doc["anchor"] == "heuristic"
    assert rating["random"]["rating"] < rating["passer"]["rating"] < 0
    assert all(r["lo"] <= r["rating"] <= r["hi"] for r in doc["ratings"])
    # the cache: a rerun plays no game and gives the same table
    lines = cache.read_text().splitlines()
    assert len(lines) == 3

    def no_games(*a, **k):
        raise AssertionError("a cached match was played again")

    monkeypatch.setattr(L, "run_match", no_games)
    again = L.run_ladder(PLAYERS, games=20, slow_games=4, seed=7, n_boot=50, cache=cache, log=lambda _l: None)
    for key in ("ratings", "players", "seed"):
        assert again[key] == doc[key]
    assert [m["summary"] for m in again["matches"]] == [m["summary"] for m in doc["matches"]]


def test_page_states_games_seed_date_and_machine(tmp_path):
    out = tmp_path / "ladder.md"
    assert L.main(["--players", ",".join(PLAYERS), "--games", "10", "--seed", "3", "--boot", "20",
                   "--out", str(out)]) == 0
    page = out.read_text()
    doc = json.loads(out.with_suffix(".json").read_text())
    assert doc["format"] == "smear-ladder/1" and doc["seed"] == 3
    assert "| 1 | `heuristic` |" in page and "| `passer` |" in page
    assert "Seed: 3" in page and "(10)" in page and "Machine: " in page and " cores; load average " in page
    assert "**A reduced ladder**: 3 of 3 pairs" in page  # 10 < 2,000 games per pair
    assert f"page generated {doc['date']}" in page and "Date: matches played 20" in page
    assert all(m["played"]["load_average"] for m in doc["matches"])
    assert "python -m smear_env.evaluation.ladder --players random,heuristic,passer" in page


def test_full_game_counts_are_not_called_reduced():
    doc = {"players": ["a", "b"], "anchor": "a", "seed": 1, "games": 2000, "slow_games": 400, "scale": 1.0,
           "n_boot": 10, "date": "d", "seconds": 1.0,
           "machine": {"start": L.machine(), "end": L.machine()},
           "ratings": [{"player": "a", "rating": 0.0, "lo": 0.0, "hi": 0.0},
                       {"player": "b", "rating": 1.0, "lo": 0.0, "hi": 2.0}],
           "matches": [{"a": "a", "b": "b", "games": 2000,
                        "summary": {"win_rate_a": 0.5, "win_rate_a_ci95": [0.4, 0.6]}}]}
    assert "reduced" not in L.render_markdown(doc)
    doc["matches"][0]["games"] = 1998
    assert "**A reduced ladder**: 1 of 1 pairs" in L.render_markdown(doc)


def test_a_cmd_bot_can_join():
    bot = Path(__file__).resolve().parents[1] / "examples" / "random_bot.py"
    spec = f"cmd:{sys.executable} {bot}"
    doc = L.run_ladder(["random", spec], games=100, slow_games=2, seed=1, n_boot=10, log=lambda _l: None)
    assert doc["matches"][0]["games"] == 2 and doc["matches"][0]["b"] == spec


@pytest.mark.parametrize(("kwargs", "needle"), [
    ({"players": ["random"]}, "at least 2 players"),
    ({"players": ["random", "heuristic", "random"]}, "given more than once: ['random']"),
    ({"players": PLAYERS, "scale": 0}, "scale must be a number in (0, 100]"),
    ({"players": PLAYERS, "games": 0}, "games must be an integer >= 1"),
    ({"players": PLAYERS, "seed": -1}, "seed must be a non-negative integer"),
    ({"players": PLAYERS, "anchor": "pimc"}, "anchor 'pimc' is not one of the players"),
])
def test_bad_input_is_a_clear_error(kwargs, needle):
    with pytest.raises(L.LadderError, match=re.escape(needle)):
        L.run_ladder(log=lambda _l: None, **kwargs)


def test_cli_bad_player_is_an_error_without_traceback(capsys, tmp_path):
    out = tmp_path / "x.md"
    assert L.main(["--players", "random,nosuchagent", "--games", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ladder: error: unknown agent spec 'nosuchagent'") and "Traceback" not in err
    assert not out.exists()


def test_cached_matches_of_a_checkpoint_are_keyed_by_its_file_contents(tmp_path):
    """A retrained agent under the same spec (new weights in the same file) plays its matches again."""
    import shutil

    from smear_env.agents.shipped import shipped_path

    ckpt = tmp_path / "agent.safetensors"
    shutil.copyfile(shipped_path("scratch"), ckpt)
    first = L.player_identity(str(ckpt))
    assert first.startswith(f"{ckpt}@sha256:") and L.player_identity("heuristic") == "heuristic"
    assert L.player_identity("scratch").startswith("scratch@sha256:")
    shutil.copyfile(shipped_path("default"), ckpt)
    assert L.player_identity(str(ckpt)) != first


def test_players_option_keeps_the_commas_of_a_pimc_spec():
    assert L.split_players("random,pimc:samples=2,bid_samples=8,pimc,default") == [
        "random", "pimc:samples=2,bid_samples=8", "pimc", "default"]
    assert L.split_players("heuristic, scratch") == ["heuristic", "scratch"]


def test_the_ladder_page_is_its_json_and_references_rendered(tmp_path):
    """docs/ladder.md is what --render-only writes from docs/ladder.json and results/ladder-references.json
    (the shipped page is current), OpenSpiel's ISMCTS included with the rating its win rate implies."""
    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "ladder.md"
    assert L.main(["--render-only", "--json", str(root / "docs/ladder.json"), "--out", str(out),
                   "--references", str(root / "results/ladder-references.json")]) == 0
    page = out.read_text()
    assert page == (root / "docs/ladder.md").read_text()
    # heuristic is rated 0: 15% implies 400 log10(0.15 / 0.85) = -301
    assert ("| `openspiel:ismcts,simulations=50` | `heuristic` | 54011 | 40 | 15.0% [6.4%, 31.2%] | "
            "-0.95 [-1.34, -0.55] | -301 [-466, -137] |") in page
    assert 'smear-eval "openspiel:ismcts,simulations=200" default --games 40 --seed 54014' in page


@pytest.mark.parametrize(("data", "needle"), [
    ("[1]", "expected an object with format 'smear-ladder-references/1'"),
    ('{"format": "smear-ladder-references/1", "matches": [{"agent": "x"}]}', "match 0 needs against, seed"),
    ('{"format": "smear-ladder-references/1", "matches": [{"agent": "x", "against": "heuristic", "seed": 1, '
     '"games": 2, "win_rate": 0.5, "ci95": [0.6, 0.7], "margin": 0, "margin_ci95": [0, 0], "command": "c", '
     '"played": "d"}]}', "match 0 needs ci95"),
    ("{", "references file"),
    ('{"format": "smear-ladder-references/1", "matches": [{"agent": "x", "against": "heuristic", "seed": 1, '
     '"games": 2, "win_rate": 0.5, "ci95": ["a", 0.7], "margin": 0, "margin_ci95": [0], "command": "c", '
     '"played": "d"}]}', "match 0 needs ci95, margin_ci95"),
])
def test_a_bad_references_file_is_one_line(tmp_path, capsys, data, needle):
    refs = tmp_path / "refs.json"
    refs.write_text(data)
    root = Path(__file__).resolve().parents[1]
    assert L.main(["--render-only", "--json", str(root / "docs/ladder.json"), "--out", str(tmp_path / "x.md"),
                   "--references", str(refs)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and needle in err, err


def test_references_against_a_player_off_the_ladder_are_refused(tmp_path, capsys):
    refs = tmp_path / "refs.json"
    m = {"agent": "x", "against": "nobody", "seed": 1, "games": 2, "win_rate": 0.5, "ci95": [0.4, 0.6],
         "margin": 0.0, "margin_ci95": [0.0, 0.0], "command": "c", "played": "d"}
    refs.write_text(json.dumps({"format": "smear-ladder-references/1", "matches": [m]}))
    root = Path(__file__).resolve().parents[1]
    assert L.main(["--render-only", "--json", str(root / "docs/ladder.json"), "--out", str(tmp_path / "x.md"),
                   "--references", str(refs)]) == 2
    assert "references against nobody: not ladder players" in capsys.readouterr().err
