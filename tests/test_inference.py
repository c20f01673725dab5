"""Card-location inference (smear_env.agents.inference, training.inference) and the search using it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from smear_env.agents.checkpoint import CheckpointError, load_agent
from smear_env.agents.inference import (
    KNOWN,
    NUM_LOCATIONS,
    load_inference,
    places_of_deal,
    sample_inferred,
    true_locations,
)
from smear_env.agents.rollout import rollout_from_spec
from smear_env.agents.shipped import shipped_path
from smear_env.cards import FULL_DECK, NUM_CARDS
from smear_env.config import SmearRules
from smear_env.infoset import HiddenDeal, sample_hidden
from smear_env.observation import decode_batch
from smear_env.vector import VectorGame
from tests.search_helpers import hidden_twins
from training import inference as train_inf

N = 48


def _true_deal(vg: VectorGame, lane: int, seat: int) -> HiddenDeal:
    k = vg.rules.kitty_size
    ids = vg.stock[lane].tolist()
    stock = ids if vg.phase[lane] == 0 else ids[k:]
    return HiddenDeal(hands=tuple(int(vg.hands[lane, (seat + r) & 3]) for r in range(4)),
                      discards=int(vg.discards[lane]), stock=sum(1 << c for c in stock))


def _positions(rules: SmearRules, steps: int, seed: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                      list[HiddenDeal]]]:
    """Every ``steps`` decisions of N random games: (obs, mask, labels, true relative deals)."""
    vg = VectorGame(N, rules, seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for step in range(steps):
        if step % 5 == 0:
            seat = vg.to_act.copy()
            labels = true_locations(vg.hands, vg.played_by, vg.discards, vg.bidder, vg.phase, seat)
            out.append((vg.observe(), vg.legal_mask(), labels,
                        [_true_deal(vg, i, int(seat[i])) for i in range(N)]))
        vg.step(vg.random_actions(rng))
    return out


@pytest.mark.parametrize("options", [{}, {"kitty_size": 0}, {"kitty_size": 3}])
def test_true_locations_are_the_places_of_the_true_deal_in_the_observers_view(options: dict) -> None:
    """The labels (computed from the engine's arrays) equal the places of the true deal read through the
    observer's decoded view, and the cards labelled known are exactly the cards the observer knows."""
    rules = SmearRules(**options)
    checked = 0
    for obs, mask, labels, deals in _positions(rules, 60, 3):
        views = decode_batch(obs, mask)
        for i, v in enumerate(views):
            want = places_of_deal(v, deals[i])
            assert (labels[i] == want).all(), f"lane {i}, phase {v.phase.name}"
            played = v.played_by[0] | v.played_by[1] | v.played_by[2] | v.played_by[3]
            known = v.hand | played | (v.discards if v.bidder == 0 else 0)
            hidden = sum(1 << c for c in range(NUM_CARDS) if labels[i, c] != KNOWN)
            assert hidden == FULL_DECK & ~known
            checked += 1
    assert checked == 12 * N


def test_sampled_deals_keep_every_constraint_and_alpha_zero_is_the_uniform_sampler() -> None:
    """Under a strongly opinionated (random) model every sampled deal still has the view's hand sizes, no
    card of a suit a seat has shown void in, no known card, no trump among another bidder's discards; with
    alpha 0 the deals are sample_hidden's."""
    rules = SmearRules()
    rng = np.random.default_rng(0)
    for obs, mask, _, _ in _positions(rules, 120, 5)[4::4]:
        views = decode_batch(obs, mask)
        lp = np.log(rng.dirichlet(np.full(NUM_LOCATIONS, 0.3), size=(N, NUM_CARDS)))
        deals = sample_inferred(views, lp, [np.random.default_rng(i) for i in range(N)], 6, alpha=1.0)
        for v, per_view in zip(views, deals, strict=True):
            played = v.played_by[0] | v.played_by[1] | v.played_by[2] | v.played_by[3]
            known = v.hand | played | (v.discards if v.bidder == 0 else 0)
            for d in per_view:
                parts = [d.hands[1], d.hands[2], d.hands[3], d.stock, 0 if v.bidder == 0 else d.discards]
                assert sum(p.bit_count() for p in parts) == (FULL_DECK & ~known).bit_count()
                assert np.bitwise_or.reduce(parts) == FULL_DECK & ~known
                for r in (1, 2, 3):
                    assert d.hands[r].bit_count() == v.hand_sizes[r]
                    for s in range(4):
                        if v.voids[r] >> s & 1:
                            assert not d.hands[r] >> (8 * s) & 0xFF
                if v.trump is not None and v.bidder not in (None, 0):
                    assert not d.discards >> (8 * v.trump) & 0xFF
            world = VectorGame(len(per_view), rules)  # loadable: consistent with the view
            lanes = np.arange(len(per_view))
            world.load_worlds(lanes, [v] * len(per_view), per_view, np.random.default_rng(0))
        uniform = sample_inferred(views, lp, [np.random.default_rng(i) for i in range(N)], 3, alpha=0.0)
        for i, v in enumerate(views):
            r = np.random.default_rng(i)
            assert uniform[i] == [sample_hidden(v, r) for _ in range(3)]


def test_the_sampler_follows_the_model() -> None:
    """A model sure that a card is in the left hand puts it there in nearly every deal; uniform sampling
    puts it there about in proportion to the hand's share of the hidden cards."""
    rules = SmearRules()
    vg = VectorGame(8, rules, seed=2)
    views = decode_batch(vg.observe(), vg.legal_mask())  # first bidders: 26 hidden cards, 6 of them left
    card = [next(c for c in range(NUM_CARDS) if not v.hand >> c & 1) for v in views]
    lp = np.full((8, NUM_CARDS, NUM_LOCATIONS), np.log(1 / NUM_LOCATIONS))
    for i, c in enumerate(card):
        lp[i, c] = np.log([0.96, 0.01, 0.01, 0.01, 0.01])

    def share(alpha: float) -> float:
        deals = sample_inferred(views, lp, [np.random.default_rng(i) for i in range(8)], 200, alpha=alpha)
        return float(np.mean([d.hands[1] >> card[i] & 1 for i in range(8) for d in deals[i]]))

    assert share(1.0) > 0.85
    assert 0.15 < share(0.0) < 0.32


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("inference") / "inf.safetensors"
    assert train_inf.main(["--team", "heuristic", "--hands", "300", "--epochs", "1", "--hidden", "32",
                           "--seed", "1", "--out", str(path)]) == 0
    return path


def test_the_model_file_loads_and_matches_the_trained_network(model_file: Path) -> None:
    model = load_inference(model_file, SmearRules())
    meta = model.network
    assert meta["hidden_sizes"] == [32]
    rules = SmearRules()
    data = train_inf.generate("heuristic", "heuristic", 50, 9, rules, [3])
    net = train_inf.InferenceNet([32])
    from safetensors.numpy import load_file

    tensors = load_file(str(model_file))
    net.load_state_dict({f"layers.{k.split('.')[1]}.{k.split('.')[2]}": torch.from_numpy(v)
                         for k, v in tensors.items()}, strict=False)
    with torch.no_grad():
        want = torch.log_softmax(net(torch.from_numpy(data["obs"][:64].astype(np.float32))), dim=2).numpy()
    got = model.log_probs(data["obs"][:64])
    assert np.allclose(got, want, atol=1e-4)
    assert train_inf.prior_log_loss(data["obs"].astype(np.float32), data["labels"]) > 0


def test_files_of_the_wrong_kind_are_refused_with_a_reason(model_file: Path) -> None:
    with pytest.raises(CheckpointError, match="not a card-location inference model"):
        load_inference(shipped_path("default"))
    with pytest.raises(CheckpointError):
        load_agent(model_file)
    with pytest.raises(CheckpointError, match="kitty_size"):
        load_inference(model_file, SmearRules(kitty_size=2))
    for bad, key in (("alpha=-1", "alpha"), ("moves=1.5", "moves")):
        with pytest.raises(ValueError, match=key):
            rollout_from_spec(f"rollout:base=heuristic,samples=2,inference={model_file},{bad}", SmearRules())
    with pytest.raises(ValueError, match="does not exist"):
        rollout_from_spec("rollout:base=heuristic,inference=/nonexistent.safetensors", SmearRules())


def test_the_inferred_search_sees_no_hidden_card(model_file: Path) -> None:
    """Two tables that differ only in cards the player to act cannot see give the search with inference the
    same choices: the model and the sampler read the observation only."""
    rules = SmearRules()
    src = VectorGame(16, rules, seed=8)
    rng = np.random.default_rng(0)
    for _ in range(14):  # into the play of the first hand
        src.step(src.random_actions(rng))
    tables = hidden_twins(decode_batch(src.observe(), src.legal_mask()), rules, rng)
    picks = []
    for vg in tables:
        agent = rollout_from_spec(f"rollout:base=heuristic,samples=3,phases=trump+discard+play,"
                                  f"inference={model_file},moves=50", rules)
        for lane in range(16):
            agent.start_game(lane, 0, rules, np.random.default_rng(lane))
        picks.append(agent.act_batch(vg.observe(), vg.legal_mask(), np.arange(16)))
        assert agent.searched > 0
        agent.close()
    assert (picks[0] == picks[1]).all()
