"""Deep Monte-Carlo (training.algorithms.dmc): Monte-Carlo returns, the Q-head checkpoint, config checks."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from smear_env.agents.registry import make_batched_agent  # noqa: E402
from training.config import ConfigError, load_config  # noqa: E402


def _trainer(*overrides: str):
    from training.algorithms.dmc import DMCTrainer

    cfg = load_config("configs/dmc.yaml", ["n_envs=8", "algorithm.n_steps=4", "algorithm.batch_size=64",
                                           "network.hidden_sizes=[32]", *overrides])
    return DMCTrainer(cfg, np.random.default_rng(5))


def test_dmc_returns_are_each_hands_margin_for_the_seats_team():
    """episode=hand, reward=score: every decision's return is its hand's point difference for its team x
    0.25 -- the same for every decision of a team in one episode, the opposite for the other team (zero-sum),
    and over all episodes the margins the engine scored."""
    tr = _trainer("selfplay.opponents={self: 1.0}")
    margins: dict[int, float] = {}  # episode id -> team 0's hand margin

    def on_step(table, st):
        for lane in np.flatnonzero(st.result.hand_over).tolist():
            d = st.result.score_delta[lane]
            margins[int(tr.ep_of[lane])] = float(d[0] - d[1])

    tr.table.on_step = on_step
    batch = tr.collect(400)
    assert len(batch["act"]) >= 400
    team = batch["seat"] & 1
    seen = 0
    for ep in np.unique(batch["ep"]).tolist():
        rows = batch["ep"] == ep
        assert ep in margins, ep
        want = np.where(team[rows] == 0, margins[ep], -margins[ep]) * 0.25
        np.testing.assert_array_equal(batch["ret"][rows], want)
        seen += 1
    assert seen >= 8


def test_dmc_iterate_trains_on_finished_decisions_and_counts_them():
    tr = _trainer()
    m = tr.iterate()
    assert tr.step >= 4 * 8 and tr.updates == 1
    assert np.isfinite(m["loss/q_mse"]) and m["loss/q_mse"] >= 0
    assert abs(sum(m[f"train/bid_share_{k}"] for k in ("pass", "2", "3", "4")) - 1.0) < 1e-9


def test_bid_epsilon_explores_the_bids_only():
    """epsilon 0 and bid_epsilon 1: every card play is the greedy one, the bids are drawn at random (all four
    seen), and the actors of ``collect`` use that pair."""
    from smear_env.core.actions import TRUMP_ACTION_BASE
    from smear_env.engine.vector import VectorGame

    tr = _trainer("algorithm.epsilon=0.0", "algorithm.bid_epsilon=1.0")
    vg = VectorGame(256, tr.rules, seed=2)
    obs, mask = vg.observe(), vg.legal_mask()
    assert mask[:, :TRUMP_ACTION_BASE].all(axis=1).any()  # the first seat may pass or bid 2, 3, 4
    bids = np.concatenate([tr.act(obs, mask, 0.0, 1.0) for _ in range(8)])
    assert set(np.unique(bids).tolist()) == {0, 1, 2, 3}
    np.testing.assert_array_equal(tr.act(obs, mask, 0.0, None), np.argmax(tr.q_values(obs, mask), axis=1))
    for _ in range(6):  # past the auction in most lanes
        vg.step(tr.act(obs, mask, 0.0, None))
        obs, mask = vg.observe(), vg.legal_mask()
    cards = ~mask[:, :TRUMP_ACTION_BASE].any(axis=1)
    assert cards.sum() >= 100
    greedy = np.argmax(tr.q_values(obs, mask), axis=1)
    for _ in range(4):
        np.testing.assert_array_equal(tr.act(obs, mask, 0.0, 1.0)[cards], greedy[cards])
    seen = []
    act = tr.act
    tr.act = lambda o, m, e, b=None: seen.append((e, b)) or act(o, m, e, b)
    tr.iterate()
    assert seen and set(seen) == {(0.0, 1.0)}  # the actors explore with the configured pair


def test_dmc_checkpoint_plays_argmax_q(tmp_path):
    """The saved Q-head is an ordinary checkpoint: its greedy player picks the legal action of highest Q."""
    from smear_env.engine.vector import VectorGame
    from training.checkpoint import base_metadata, save_policy

    tr = _trainer()
    tr.iterate()
    cfg = tr.cfg
    net = {"hidden_sizes": cfg.network.hidden_sizes, "activation": cfg.network.activation,
           "suit_canonical": True}
    path = tmp_path / "dmc.safetensors"
    save_policy(path, tr.policy_state(), base_metadata(cfg.rules, net, "dmc", tr.step))
    agent = make_batched_agent(str(path), cfg.rules)
    vg = VectorGame(64, cfg.rules, seed=11)
    rng = np.random.default_rng(0)
    for slot in range(64):
        agent.start_game(slot, 0, cfg.rules, rng)
    for _ in range(30):
        obs, mask = vg.observe(), vg.legal_mask()
        a = agent.act_batch(obs, mask, np.arange(64))
        np.testing.assert_array_equal(a, np.argmax(tr.q_values(obs, mask), axis=1))
        vg.step(a)


def test_dmc_seats_any_agent_spec_as_the_opposing_team(tmp_path):
    """A checkpoint and the passer as opponents: one table player each, in both seats of the other team, never
    the learner's partner; their games are the only ones (no self-play lanes) and each gets its win rate."""
    import torch

    from training.algorithms.dmc import DMCTrainer

    torch.manual_seed(0)  # (the network's initial weights; smear-train seeds torch the same way)
    # (--set merges into the file's opponents: the file's three at probability 0, never drawn nor seated)
    tr = _trainer("selfplay.opponents={self: 0, heuristic: 0, random: 0, default: 0.5, passer: 0.5}")
    assert tr.opponent_specs == ["default", "passer"]
    assert [getattr(p, "name", p) for p in tr.table.players[1:]] == ["default", "passer"]
    m = tr.iterate()
    assert set(np.unique(tr.lane_kind).tolist()) <= {1, 2}
    seating = tr.table.seating
    team = tr.learner_team
    ar = np.arange(len(team))
    assert (seating[ar, team] == 0).all() and (seating[ar, team + 2] == 0).all()  # the learner's team
    assert (seating[ar, 1 - team] == tr.lane_kind).all() and (seating[ar, 3 - team] == tr.lane_kind).all()
    assert {k for k in m if k.startswith("train/win_rate_vs_")} <= {"train/win_rate_vs_default",
                                                                   "train/win_rate_vs_passer"}
    cfg = tr.cfg
    torch.manual_seed(0)
    again = DMCTrainer(cfg, np.random.default_rng(5))  # the same seed: the same games and updates
    again.iterate()
    for (k, v), (k2, v2) in zip(tr.policy_state().items(), again.policy_state().items(), strict=True):
        assert k == k2 and np.array_equal(np.asarray(v), np.asarray(v2)), k


def test_dmc_rejects_opponents_and_warm_starts_it_cannot_use():
    with pytest.raises(ConfigError, match="'selfplay.opponents.snapshot': algorithm 'dmc' does not support"):
        _trainer("selfplay.opponents={self: 0.5, snapshot: 0.5}")
    with pytest.raises(ConfigError, match="unknown agent spec 'nosuchagent'"):
        _trainer("selfplay.opponents={self: 0.5, nosuchagent: 0.5}")
    with pytest.raises(ConfigError, match="imitation.teacher"):
        _trainer("imitation.teacher=heuristic")
    with pytest.raises(ConfigError, match="algorithm.epsilon"):
        load_config("configs/dmc.yaml", ["algorithm.epsilon=1.5"])
