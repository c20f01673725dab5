"""The win-probability model (smear_env.agents.winprob, training.winprob) and the game-aware search."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from smear_env.agents.checkpoint import CheckpointError
from smear_env.agents.registry import rollout_from_spec, rollout_players
from smear_env.agents.rollout import rollout_values
from smear_env.agents.shipped import shipped_path
from smear_env.agents.winprob import WinProbability, load_winprob
from smear_env.core.config import SmearRules
from smear_env.engine.decoding import decode_batch
from smear_env.engine.vector import VectorGame
from smear_env.evaluation.batched import even_shares
from training import winprob as train_wp
from training.config import ConfigError
from training.config_files import validated
from training.stages import winprob as stage


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("winprob")
    cfg = stage.Config(games=60, steps=200, hidden=[8], seed=2)
    assert stage.run(cfg, {"team": "heuristic"}, folder, resume=False) == 0
    return folder / "winprob.safetensors"


def test_collect_labels_every_hand_start_of_a_finished_game_by_its_result() -> None:
    """Each finished game gives its hand starts, the first at 0-0, all labelled by the game's winner."""
    x, y = train_wp.collect("heuristic", "heuristic", 30, 5, SmearRules(), lanes=8)
    assert x.shape[1] == 3 and x.shape[0] == y.size >= 30
    assert set(np.unique(y)) <= {0.0, 1.0}
    starts = np.flatnonzero((x[:, 0] == 0) & (x[:, 1] == 0))
    assert starts.size >= 30
    assert (x[:, :2] < SmearRules().target_score).all()  # a hand start is never a finished game
    assert set(np.unique(x[:, 2])) <= {0.0, 1.0}


def test_the_model_file_loads_and_gives_probabilities(model_file: Path) -> None:
    model = load_winprob(model_file, SmearRules())
    p = model.prob(np.array([0, 14, -5]), np.array([0, -5, 14]), np.array([1, 0, 1]))
    assert ((p > 0) & (p < 1)).all()
    with pytest.raises(CheckpointError, match="target_score"):
        load_winprob(model_file, SmearRules(target_score=21))
    with pytest.raises(CheckpointError, match="not a win-probability model"):
        load_winprob(shipped_path("default"))


def test_a_hand_that_ends_the_game_is_worth_its_result_else_the_models_chance() -> None:
    """The objective: 1 where team 0 won the game, 0 where it lost, 0.5 for a game cut off at max_hands,
    otherwise the model's chance from the new score with the new dealer."""
    weights = {"winprob.0.weight": np.array([[2.0, -2.0, 0.5]]), "winprob.0.bias": np.array([0.1])}
    model = WinProbability(weights, {"hidden_sizes": []}, target_score=10)
    res = SimpleNamespace(scores=np.array([[10, 3], [4, 11], [5, 5], [7, 2], [1, 1]]),
                          game_over=np.array([True, True, False, False, False]),
                          winner=np.array([0, 1, -1, -1, -1]),
                          truncated=np.array([False, False, True, False, False]))
    vg = SimpleNamespace(dealer=np.array([0, 1, 2, 3, 0]))
    got = model(vg, res, np.arange(5))
    z = 2.0 * 0.7 - 2.0 * 0.2 + 0.5 * 0 + 0.1  # lane 3: 7-2, the other team (seat 3) deals
    z4 = 2.0 * 0.1 - 2.0 * 0.1 + 0.5 * 1 + 0.1  # lane 4: seat 0 deals
    assert got == pytest.approx([1.0, 0.0, 0.5, 1 / (1 + np.exp(-z)), 1 / (1 + np.exp(-z4))])
    with pytest.raises(ValueError, match="layer 0"):
        WinProbability({}, {"hidden_sizes": []}, 10)


def test_the_game_aware_search_values_are_chances(model_file: Path) -> None:
    """With the model as the objective every legal action's value is a mean chance in [0, 1]; the spec
    option builds the same search, and a bad model path is named."""
    rules = SmearRules()
    vg = VectorGame(6, rules, seed=4)
    obs, mask = vg.observe(), vg.legal_mask()
    views = decode_batch(obs, mask)
    team, opp = rollout_players("heuristic", "heuristic", rules)
    q = rollout_values(rules, views, mask, team, opp, 4, [np.random.default_rng(i) for i in range(6)],
                       value=load_winprob(model_file, rules))
    assert ((q[mask] >= 0) & (q[mask] <= 1)).all() and np.isneginf(q[~mask]).all()
    agent = rollout_from_spec(f"rollout:base=heuristic,samples=2,winprob={model_file},margin=0.01", rules)
    assert agent.objective is not None and agent.margin == 0.01
    agent.close()
    with pytest.raises(ValueError, match="winprob"):
        rollout_from_spec("rollout:base=heuristic,winprob=/nonexistent.safetensors", rules)


def test_shards_split_the_games_and_the_rows_do_not_depend_on_the_workers() -> None:
    """One share is collect() on the seed itself; several shares play their own derived seeds, and one process
    or two give the same rows in the same order."""
    rules = SmearRules()
    assert even_shares(7, 3) == [3, 2, 2] and sum(even_shares(20000, 2)) == 20000
    assert train_wp.shard_seeds(5, 1) == [5]
    seeds = train_wp.shard_seeds(5, 3)
    assert len(set(seeds)) == 3 and 6 not in seeds  # not seed + i: a neighbouring run's games
    assert set(train_wp.shard_seeds(6, 2)).isdisjoint(train_wp.shard_seeds(5, 2))
    one = train_wp.collect("heuristic", "heuristic", 12, 5, rules)
    x1, y1 = train_wp.collect_shards("heuristic", "heuristic", 12, 5, rules)
    assert np.array_equal(x1, one[0]) and np.array_equal(y1, one[1])
    xa, ya = train_wp.collect_shards("heuristic", "heuristic", 12, 5, rules, shards=2, workers=1)
    xb, yb = train_wp.collect_shards("heuristic", "heuristic", 12, 5, rules, shards=2, workers=2)
    assert np.array_equal(xa, xb) and np.array_equal(ya, yb)
    assert not (xa.shape == x1.shape and np.array_equal(xa, x1))  # other deals
    assert int(((xa[:, 0] == 0) & (xa[:, 1] == 0)).sum()) >= 12
    with pytest.raises(ValueError, match="shards and workers"):
        train_wp.collect_shards("heuristic", "heuristic", 12, 5, rules, shards=0)


def test_the_stage_refuses_bad_shard_and_worker_counts() -> None:
    for key in ("shards", "workers"):
        with pytest.raises(ConfigError, match=f"'stages.winprob.{key}': expected an integer from 1 to"):
            validated(stage.Config, {"games": 4, key: 0}, "stages.winprob.")


def test_the_grouped_fit_is_the_mean_logistic_loss_over_the_rows() -> None:
    """grouped() gives each distinct row its count and wins; the count-weighted loss on the share won equals
    the mean loss over the rows at any parameters, and fit() on the grouped rows follows the same path as Adam
    on every row (the same model up to float rounding; the held-out figure is on the rows held out)."""
    import torch

    rng = np.random.default_rng(3)
    x = rng.integers(-3, 4, size=(400, 3)).astype(np.float32)
    x[:, 2] = rng.integers(0, 2, size=400)
    y = (rng.random(400) < 0.4 + 0.05 * x[:, 0]).astype(np.float32)
    cells, won, count = train_wp.grouped(x, y)
    assert len(cells) == len(np.unique(x, axis=0)) < 400 and count.sum() == 400 and won.sum() == y.sum()
    i = np.flatnonzero((cells == x[7]).all(axis=1))[0]
    assert count[i] == (x == x[7]).all(axis=1).sum() and won[i] == y[(x == x[7]).all(axis=1)].sum()
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    z = lambda a: torch.from_numpy(a @ np.array([0.3, -0.2, 0.5], dtype=np.float32) + 0.1)  # noqa: E731
    rows = bce(z(x), torch.from_numpy(y))
    grp = bce(z(cells), torch.from_numpy(won / count), weight=torch.from_numpy(count / 400), reduction="sum")
    assert float(grp) == pytest.approx(float(rows), rel=1e-6)

    tensors, rec = train_wp.fit(x, y, [4], 5, 300, seed=1)
    assert rec["distinct_training_rows"] <= len(cells) and rec["rows"] == 400
    # Adam on every row, the same split, initialisation and steps
    torch.manual_seed(1)
    perm = np.random.default_rng(1).permutation(400)
    train = perm[40:]
    xt = torch.from_numpy(x[train] / np.array([5, 5, 1], dtype=np.float32))
    layers = [torch.nn.Linear(3, 4), torch.nn.Linear(4, 1)]
    opt = torch.optim.Adam([p for m in layers for p in m.parameters()], lr=3e-3)
    for _ in range(300):
        loss = bce(layers[1](torch.tanh(layers[0](xt)))[:, 0], torch.from_numpy(y[train]))
        opt.zero_grad()
        loss.backward()
        opt.step()
    for k, layer in enumerate(layers):
        assert torch.allclose(tensors[f"winprob.{k}.weight"], layer.weight.detach(), atol=1e-4)
