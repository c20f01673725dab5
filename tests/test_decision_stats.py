"""Per-decision-type diagnostics (training.algorithms.decision_stats) and train.log's ``train`` records."""

from __future__ import annotations

import json

import numpy as np
import pytest

from smear_env.core.actions import (
    DISCARD_ACTION_BASE,
    PASS_ACTION,
    PLAY_ACTION_BASE,
    TRUMP_ACTION_BASE,
    bid_action,
)
from training.algorithms.decision_stats import (
    TrainLogAverager,
    TypeMeans,
    batch_stats,
    contract_scalars,
    decision_type,
    tally_contracts,
)


def test_decision_type_follows_the_action_id_ranges():
    act = np.array([PASS_ACTION, bid_action(4), TRUMP_ACTION_BASE, TRUMP_ACTION_BASE + 3, DISCARD_ACTION_BASE,
                    PLAY_ACTION_BASE - 1, PLAY_ACTION_BASE, PLAY_ACTION_BASE + 31])
    assert decision_type(act).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]


def test_batch_stats_split_share_legal_return_advantage_and_bids():
    act = np.array([PASS_ACTION, PASS_ACTION, bid_action(3), bid_action(4), TRUMP_ACTION_BASE,
                    PLAY_ACTION_BASE, PLAY_ACTION_BASE + 1, PLAY_ACTION_BASE + 2])
    mask = np.zeros((8, 72), dtype=bool)
    for i, k in enumerate([4, 4, 3, 2, 2, 6, 5, 1]):
        mask[i, :k] = True
    ret = np.array([0.0, -1.0, 2.0, 3.0, 1.0, 0.5, 0.5, -0.5])
    adv = np.array([1.0, -1.0, 0.0, 0.0, 5.0, 2.0, -2.0, 0.0])
    s = batch_stats(act, mask, ret, adv)
    assert s["decisions/bid/share"] == 0.5 and s["decisions/trump/share"] == 0.125
    assert s["decisions/discard/share"] == 0.0 and "decisions/discard/legal" not in s
    assert s["decisions/bid/legal"] == pytest.approx(13 / 4) and s["decisions/play/legal"] == 4.0
    assert s["decisions/bid/return"] == 1.0 and s["decisions/play/return"] == pytest.approx(0.5 / 3)
    assert s["decisions/bid/adv_scale"] == pytest.approx(np.std([1.0, -1.0, 0.0, 0.0]))
    bids = tuple(s[f"decisions/bid/p_{b}"] for b in ("pass", "2", "3", "4"))
    assert bids == (0.5, 0.0, 0.25, 0.25)


def test_type_means_accumulate_over_minibatches():
    m = TypeMeans()
    m.add("entropy", np.array([0, 0, 3]), np.array([1.0, 3.0, 0.5]))
    m.add("entropy", np.array([3, 1]), np.array([1.5, 2.0]))
    assert m.result() == {"decisions/bid/entropy": 2.0, "decisions/trump/entropy": 2.0,
                          "decisions/play/entropy": 1.0}


def test_train_log_averager_means_since_the_last_flush():
    a = TrainLogAverager()
    a.add({"x": 1.0, "y": float("nan")})
    a.add({"x": 3.0, "z": 2})
    assert a.flush() == {"x": 2.0, "z": 2.0}
    assert a.flush() == {}


def test_contracts_are_tallied_per_level_for_the_learner_bidders_only():
    class VG:  # the fields tally_contracts reads, 6 lanes; the bidder of every hand is seat 1
        hand_contract = np.array([2, 3, 3, 4, 2, 3])
        hand_made = np.array([True, True, False, False, False, True])
        hand_bidder = np.ones(6, dtype=np.int64)

    class Table:  # table player of each seat; player 0 is the learner
        vg = VG
        is_learner = np.array([True, False])
        seating = np.zeros((6, 4), dtype=np.int64)
        seating[4, 1] = 1  # lane 4: the bidder is not a learner's seat

    st: dict = {}
    scored = np.array([0, 1, 2, 3, 4])  # lane 5's hand was not scored in this step
    tally_contracts(st, Table, scored)
    tally_contracts(st, Table, scored[:0])  # nothing scored: nothing added
    assert st == {"contracts": 4, "made": 2, "contract_sum": 12, "contracts_2": 1, "made_2": 1,
                  "contracts_3": 2, "made_3": 1, "contracts_4": 1, "made_4": 0}
    assert contract_scalars(st) == {"bids/contract_success": 0.5, "bids/avg_contract": 3.0,
                                    "bids/made_at_2": 1.0, "bids/made_at_3": 0.5, "bids/made_at_4": 0.0}
    assert contract_scalars({}) == {}


@pytest.mark.parametrize("config", ["configs/dmc.yaml", "configs/vector_ppo.yaml"])
def test_smear_train_writes_per_decision_type_diagnostics_to_train_log(tmp_path, config):
    pytest.importorskip("torch")
    from training.train import main

    run = tmp_path / "run"
    sets = ["n_envs=16", "algorithm.n_steps=8", "algorithm.batch_size=64", "network.hidden_sizes=[16]",
            "total_timesteps=400", "time_limit=null", "eval.interval=0", "output.checkpoint_interval=200",
            "output.tensorboard=false", "output.progress=false", "imitation.teacher=null"]
    args = ["--config", config, "--run-dir", str(run)]
    for s in sets:
        args += ["--set", s]
    assert main(args) in (0, None)
    records = [json.loads(line) for line in (run / "train.log").read_text().splitlines()]
    train = [r for r in records if "train" in r]
    assert len(train) >= 2  # at the checkpoints and at the end
    last = train[-1]["train"]
    for key in ("decisions/bid/share", "decisions/play/share", "decisions/play/value_error",
                "decisions/play/adv_scale", "decisions/bid/p_pass"):
        assert key in last, key
    contracts = [r["train"] for r in train if "bids/contract_success" in r["train"]]
    assert contracts, "no train record has the learner's contract success"
    assert 0.0 <= contracts[-1]["bids/contract_success"] <= 1.0
    assert 2.0 <= contracts[-1]["bids/avg_contract"] <= 4.0
    shares = sum(last[f"decisions/{t}/share"] for t in ("bid", "trump", "discard", "play"))
    assert shares == pytest.approx(1.0, abs=1e-5)
    if "scratch" in config:  # PPO: the policy's entropy per type, at most log(legal actions)
        assert 0 <= last["decisions/play/entropy"] <= np.log(last["decisions/play/legal"]) + 1e-6
