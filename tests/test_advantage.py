"""Advantage rounds (training.advantage) and checkpoints with corrections (smear_env.agents.checkpoint):
exact action values in the true deal, the correction's fit, the corrected checkpoint's choices in the one-row
and the batched player, its checks, and the round (the pipeline's advantage stage)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from smear_env.agents.batched import BatchedCheckpointAgent
from smear_env.agents.checkpoint import CheckpointError, load_agent
from smear_env.agents.registry import rollout_players
from smear_env.agents.rollout import team_actions
from smear_env.agents.shipped import checkpoint_file
from smear_env.core.config import SmearRules
from smear_env.engine.vector import VectorGame
from training import advantage
from training.checkpoint import save_tensors
from training.config import ConfigError
from training.config_files import validated
from training.stages import advantage as stage

RULES = SmearRules()


def advantage_round(run: Path, init: str = "default", more: tuple[Path, ...] = (), **options: object) -> int:
    """The pipeline's advantage stage with ``options`` (its config's fields) in ``run``; ``more``: the folders
    of the rounds whose values it also fits on."""
    inputs = {"init": init, "more_values": [str(d / "round.json") for d in more]}
    return stage.run(stage.Config(**options), inputs, run, resume=False)


@pytest.fixture(scope="module")
def values() -> dict[str, np.ndarray]:
    return advantage.collect_values("default", "heuristic", 600, 7, advantage.DEFAULT_SHARE, None, RULES,
                                    lanes=128)


def test_values_are_exact_in_the_true_deal_and_the_policys_value_is_what_the_game_then_scores() -> None:
    """For positions of a real game: the value of the policy's own action in the true deal equals the hand
    score difference the same deterministic players then make in that game; every legal action has a value,
    no illegal one has."""
    team, opp = rollout_players("default", "heuristic", RULES)
    vg = VectorGame(64, RULES, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(23):  # into the play of the first hand in most lanes
        vg.step(team_actions(team, opp, vg.observe(), vg.legal_mask(), vg.to_act))
    from smear_env.agents.rollout import true_deal, values_in_deals
    from smear_env.engine.decoding import decode_batch

    lanes = np.flatnonzero((vg.phase == 3) & ((vg.to_act & 1) == 0))
    assert lanes.size > 10
    obs, mask = vg.observe()[lanes], vg.legal_mask()[lanes]
    deals = [true_deal(vg, int(lane)) for lane in lanes]
    v = values_in_deals(RULES, decode_batch(obs, mask), mask, deals, team, opp, rng)
    assert np.isfinite(v[mask]).all() and np.isnan(v[~mask]).all()
    policy = team.act_batch(obs, mask, np.zeros(lanes.size, dtype=np.int64))
    # the real game played on from these lanes (absolute seats, no loading): the policy's action first
    real = VectorGame(lanes.size, RULES)
    real.copy_lanes(np.arange(lanes.size), vg, lanes)
    seat = vg.to_act[lanes].copy()
    want = np.full(lanes.size, np.nan)
    acts = policy
    live = np.arange(lanes.size)
    for _ in range(40):
        res = real.step(acts, lanes=live)
        fin = live[res.hand_over[live]]
        want[fin] = res.reward_score[fin, seat[fin]]
        live = np.flatnonzero(np.isnan(want))
        if not live.size:
            break
        obs_r, mask_r, to_act = real.observe(), real.legal_mask(), real.to_act
        own = (to_act[live] & 1) == 0
        acts = np.empty(live.size, dtype=np.int64)
        acts[own] = team.act_batch(obs_r[live[own]], mask_r[live[own]], to_act[live[own]])
        acts[~own] = opp.act_batch(obs_r[live[~own]], mask_r[live[~own]], to_act[live[~own]])
    assert not live.size
    np.testing.assert_array_equal(v[np.arange(lanes.size), policy], want)


def test_collect_values_rows(values: dict[str, np.ndarray]) -> None:
    obs, mask, value, policy = values["obs"], values["mask"], values["value"], values["policy"]
    n = 600
    assert obs.shape == (n, 493) and obs.dtype == np.float16 and mask.shape == (n, 72)
    assert (mask.sum(axis=1) > 1).all() and mask[np.arange(n), policy].all()
    assert np.isfinite(value[mask]).all() and np.isnan(value[~mask]).all()
    # hand score differences: integers within the 4-point hand's range; not all actions alike
    assert np.allclose(value[mask], np.round(value[mask])) and np.abs(value[mask]).max() <= 8
    assert (np.nanmax(value, axis=1) > np.nanmin(value, axis=1)).mean() > 0.2
    again = advantage.collect_values("default", "heuristic", 600, 7, advantage.DEFAULT_SHARE, None, RULES,
                                     lanes=128)
    assert all(np.array_equal(values[k], again[k], equal_nan=True) for k in values)


def test_one_step_gains_counts_the_true_gain_of_the_corrected_choice() -> None:
    value = np.array([[0.0, 1.0, np.nan], [0.5, 0.0, 0.2]])
    mask = ~np.isnan(value)
    policy = np.array([0, 0])
    adv = np.array([[0.0, 0.3, 9.0], [0.0, 0.05, 0.01]])  # the illegal 9.0 is never taken
    phase = np.array([3, 0])
    t = {row["margin"]: row for row in advantage.one_step_gains(adv, value, mask, policy, phase, (0.0, 0.1))}
    assert t[0.0]["changed"] == 1.0 and t[0.0]["gain"] == pytest.approx((1.0 - 0.5) / 2)
    assert t[0.1]["changed"] == 0.5 and t[0.1]["gain"] == pytest.approx(0.5)
    assert t[0.1]["play"]["gain"] == 1.0 and t[0.1]["bid"]["changed"] == 0.0


def _corrected(tmp_path: Path, values: dict[str, np.ndarray], epochs: int, margin: float = 0.1,
               init: str = "default", name: str = "corrected.safetensors", gap: float = float("inf"),
               score_range: dict[str, list[float]] | None = None) -> Path:
    tensors, network, record = advantage.fit_correction(checkpoint_file(init), values, epochs, 1e-3, 64, 0,
                                                        holdout=0.1, log=lambda _m: None)
    path = tmp_path / name
    advantage.add_correction(checkpoint_file(init), tensors, network, margin, record, path, gap, score_range)
    return path


def _both_players(path: Path, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the batched player's actions, the one-row player's) of checkpoint ``path``."""
    batched = BatchedCheckpointAgent.from_checkpoint(str(path), RULES)
    batched.start_game(0, 0, RULES, np.random.default_rng(0))
    got = batched.act_batch(obs, mask, np.zeros(len(obs), dtype=np.int64))
    one = load_agent(path, RULES)
    rows = np.array([one.act({"observation": obs[i], "action_mask": mask[i].astype(np.int8)})
                     for i in range(len(obs))])
    return got, rows


def test_an_untrained_correction_never_changes_the_policy(tmp_path: Path, values: dict[str, np.ndarray]
                                                          ) -> None:
    """Zero epochs: the output layer is zeros, so no action is ever more than the margin (0) better."""
    path = _corrected(tmp_path, values, epochs=0, margin=0.0)
    base = BatchedCheckpointAgent.from_checkpoint(checkpoint_file("default"), RULES)
    obs, mask = values["obs"].astype(np.float32), values["mask"]
    base.start_game(0, 0, RULES, np.random.default_rng(0))
    want = base.act_batch(obs, mask, np.zeros(len(obs), dtype=np.int64))
    got, rows = _both_players(path, obs, mask)
    assert (got == want).all() and (rows == want).all()


def _planted(values: dict[str, np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Values where the highest legal action other than the policy's is worth 1 and every other 0."""
    mask, policy = values["mask"], values["policy"]
    n = policy.size
    planted = np.array([max(np.flatnonzero(mask[i] & (np.arange(72) != policy[i]))) for i in range(n)])
    value = np.where(mask, 0.0, np.nan).astype(np.float32)
    value[np.arange(n), planted] = 1.0
    return planted, dict(values, value=value)


def test_a_fitted_correction_learns_a_planted_better_action_in_both_players(
        tmp_path: Path, values: dict[str, np.ndarray]) -> None:
    """The corrected checkpoint takes the planted action on most rows, only legal ones, the batched and the
    one-row player alike; the logits are the base's with two entries exchanged (the distribution keeps its
    shape); the held-out table saw the gain."""
    planted, data = _planted(values)
    path = _corrected(tmp_path, data, epochs=25, margin=0.3)
    obs, mask = values["obs"].astype(np.float32), values["mask"]
    got, rows = _both_players(path, obs, mask)
    assert mask[np.arange(len(got)), got].all()
    assert (got == planted).mean() > 0.8
    assert (got == rows).all()
    base = load_agent(checkpoint_file("default"), RULES).policy.logits(obs, mask)
    corrected = load_agent(path, RULES).policy.logits(obs, mask)
    for i in range(len(obs)):
        np.testing.assert_array_equal(np.sort(base[i]), np.sort(corrected[i]))
    # corrections=False: the network alone, the one the round started from (what a trainer fine-tunes)
    network = load_agent(path, RULES, corrections=False)
    with pytest.raises(TypeError, match="corrections must be True or False, not 'no'"):
        load_agent(path, RULES, corrections="no")  # type: ignore[arg-type]
    assert network.policy.corrections == [] and len(load_agent(path, RULES).policy.corrections) >= 1
    np.testing.assert_array_equal(network.policy.logits(obs, mask),
                                  load_agent(checkpoint_file("default"), RULES, corrections=False)
                                  .policy.logits(obs, mask))
    record = load_agent(path, RULES).meta["advantage_rounds"][-1]
    gains = {row["margin"]: row["gain"] for row in record["held_out_one_step_gains"]}
    assert gains[0.0] > 0.5


def test_a_correction_changes_nothing_outside_its_score_range(tmp_path: Path, values: dict[str, np.ndarray]
                                                              ) -> None:
    """A correction with a score range takes its planted action only at positions whose two raw scores lie
    within it (both players alike); elsewhere every choice is the base policy's."""
    from smear_env.engine.observation import SCORES

    planted, data = _planted(values)
    obs, mask = values["obs"].astype(np.float32), values["mask"]
    own = obs[:, SCORES]
    cut = float(np.median(own))
    inside = own <= cut
    assert 0.2 < inside.mean() < 0.9  # the range splits the rows
    box = {"own": [float(own.min()), cut], "other": [float(obs[:, SCORES + 1].min()),
                                                     float(obs[:, SCORES + 1].max())]}
    path = _corrected(tmp_path, data, epochs=25, margin=0.3, score_range=box)
    assert load_agent(path, RULES).meta["corrections"][-1]["score_range"] == box
    got, rows = _both_players(path, obs, mask)
    assert (got == rows).all()
    base = BatchedCheckpointAgent.from_checkpoint(checkpoint_file("default"), RULES)
    base.start_game(0, 0, RULES, np.random.default_rng(0))
    want = base.act_batch(obs, mask, np.zeros(len(obs), dtype=np.int64))
    assert (got[~inside] == want[~inside]).all()
    assert (got[inside] == planted[inside]).mean() > 0.8
    # the same rows, one of the scores moved out of the range: the base policy's choice
    moved = obs.copy()
    moved[:, SCORES + 1] = box["other"][0] - 1
    assert (_both_players(path, moved, mask)[0] == base.act_batch(moved, mask, np.zeros(len(obs),
                                                                                           dtype=np.int64))).all()


def test_a_second_correction_sees_the_first_ones_choices(tmp_path: Path, values: dict[str, np.ndarray]
                                                         ) -> None:
    """A round from a corrected checkpoint adds correction 1 after correction 0; an untrained second one
    changes nothing of what the first one chose."""
    planted, data = _planted(values)
    first = _corrected(tmp_path, data, epochs=25, margin=0.3)
    second = _corrected(tmp_path, values, epochs=0, margin=0.0, init=str(first), name="second.safetensors")
    agent, before = load_agent(second, RULES), load_agent(first, RULES)
    assert len(agent.meta["corrections"]) == len(before.meta["corrections"]) + 1
    assert len(agent.meta["advantage_rounds"]) == len(before.meta["advantage_rounds"]) + 1
    obs, mask = values["obs"].astype(np.float32), values["mask"]
    assert (_both_players(second, obs, mask)[0] == _both_players(first, obs, mask)[0]).all()


def test_corrections_are_checked(tmp_path: Path, values: dict[str, np.ndarray]) -> None:
    from smear_env.agents.checkpoint import read_checkpoint

    path = _corrected(tmp_path, values, epochs=0)
    tensors, meta = read_checkpoint(path)

    def write(t: dict, m: dict) -> Path:
        out = tmp_path / "bad.safetensors"
        save_tensors(out, t, m)
        return out

    def ranged(box: object) -> dict:
        return {**meta, "corrections": [{**meta["corrections"][0], "score_range": box}]}

    bad = [
        ({**meta, "corrections": [{**meta["corrections"][0], "margin": -1}]}, tensors,
         r"corrections\[0\]\.margin must be a number >= 0"),
        ({**meta, "corrections": {"margin": 0}}, tensors, "'corrections' must be a list"),
        ({**meta, "corrections": [{**meta["corrections"][0], "max_logit_gap": "x"}]}, tensors,
         r"max_logit_gap must be a number >= 0"),
        ({**meta, "corrections": []}, tensors, r"tensors of correction\(s\) \['0'"),
        (ranged({"own": [3, 1], "other": [0, 1]}), tensors, r"\[0\]\.score_range\.own must be \[lo, hi\]"),
        (ranged([0, 1]), tensors, r"corrections\[0\]\.score_range must be an object \{\"own\""),
        (ranged({"own": [0, 1], "other": [0, "x"]}), tensors, r"score_range\.other must be \[lo, hi\]"),
        (meta, {k: v for k, v in tensors.items() if k != "correction.0.pi_head.weight"},
         "missing tensor 'pi_head.weight'"),
    ]
    for m, t, message in bad:
        with pytest.raises(CheckpointError, match=message):
            load_agent(write(t, m), RULES)


def test_a_round_writes_a_corrected_checkpoint_and_its_record(tmp_path: Path) -> None:
    run = tmp_path / "round"
    assert advantage_round(run, positions=300, workers=1, epochs=1, seed=4, margin=0.5) == 0
    record = json.loads((run / "round.json").read_text())
    assert set(record) >= {"values", "fit"} and record["values"]["positions"] == 300
    final = load_agent(run / "final.safetensors", RULES)
    base = load_agent(checkpoint_file("default"), RULES)
    assert final.meta["corrections"][-1]["margin"] == 0.5
    assert len(final.policy.corrections) == len(base.policy.corrections) + 1
    assert final.meta["corrections"][-1]["max_logit_gap"] == 3.0
    assert final.meta["advantage_rounds"][-1]["rows"] == 300


@pytest.mark.parametrize("section, message", [
    ({"share": {"bids": 0.5}},
     "'stages.advantage.share.bids': 'bids' is not one of 'bid', 'trump', 'discard' or 'play'"),
    ({"steps": []}, "'stages.advantage.steps': expected at least 1 item, got 0 items"),
    ({"share": {"play": 2}}, "'stages.advantage.share.play': expected a number from 0 to 1, got 2.0"),
    ({"steps": ["values", "train"]}, "'stages.advantage.steps[1]': 'train' is not one of 'values' or 'fit'"),
    ({"positions": 0}, "'stages.advantage.positions': expected an integer from 1 to"),
    ({"margin": -0.1}, "'stages.advantage.margin': expected a number >= 0, got -0.1"),
    ({"max_logit_gap": -1}, "'stages.advantage.max_logit_gap': expected a number >= 0 or null, got -1.0"),
])
def test_a_bad_setting_names_the_key(section: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match="^config key ") as e:
        validated(stage.Config, section, "stages.advantage.")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_training_from_a_corrected_checkpoint_says_the_corrections_are_left_behind(
        tmp_path: Path, values: dict[str, np.ndarray]) -> None:
    from training.distill import policy_from_checkpoint

    path = _corrected(tmp_path, values, epochs=0)
    with pytest.warns(UserWarning, match="advantage correction"):
        policy_from_checkpoint(str(path))
    from smear_env.agents.checkpoint import read_checkpoint

    tensors, meta = read_checkpoint(path)
    plain = tmp_path / "plain.safetensors"
    save_tensors(plain, {k: v for k, v in tensors.items() if k.startswith("policy.")},
                 {k: v for k, v in meta.items() if k != "corrections"})
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        policy_from_checkpoint(str(plain))


def test_a_correction_exchanges_two_logits_only_beyond_its_margin() -> None:
    from smear_env.agents.checkpoint import Correction
    from smear_env.engine.observation import OBS_SIZE, SCORES

    c = Correction(net=None, margin=0.05)  # type: ignore[arg-type]
    inf = -np.inf
    logits = np.array([[2.0, 1.0, 0.0, inf], [2.0, 1.0, 0.0, inf], [2.0, 1.0, inf, inf],
                       [3.0, inf, inf, inf]])
    adv = np.array([[0.0, 0.2, 0.1, inf], [0.0, 0.04, 0.01, inf], [0.0, 0.05 + 5e-5, inf, inf],
                    [0.0, inf, inf, inf]])
    zero = np.zeros((4, OBS_SIZE), dtype=np.float32)  # scores 0-0: within any range below
    out, near = c.apply(logits, adv, zero)
    np.testing.assert_array_equal(out[0], [1.0, 2.0, 0.0, inf])  # greedy 0 and best 1 exchanged
    np.testing.assert_array_equal(out[1], logits[1])  # 0.04 is within the margin
    assert out[2, 1] == 2.0 and near.tolist() == [False, False, True, False]  # just over, within tolerance
    np.testing.assert_array_equal(out[3], logits[3])  # one legal action
    tight = Correction(net=None, margin=0.05, max_logit_gap=0.5)  # type: ignore[arg-type]
    np.testing.assert_array_equal(tight.apply(logits, adv, zero)[0][0], logits[0])  # action 1: 1 logit below
    boxed = Correction(net=None, margin=0.05, score_range={"own": (-5, 14), "other": (-5, 14)})  # type: ignore
    obs = zero.copy()
    obs[0, SCORES] = -6  # row 0: the deciding team's score is below the range
    out_b, near_b = boxed.apply(logits, adv, obs)
    np.testing.assert_array_equal(out_b[0], logits[0])  # outside: unchanged
    np.testing.assert_array_equal(out_b[1:], out[1:])
    assert near_b.tolist() == [False, False, True, False]
    obs[0, SCORES], obs[0, SCORES + 1] = 14, 14  # both ends inclusive
    np.testing.assert_array_equal(boxed.apply(logits, adv, obs)[0][0], out[0])
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'obs'"):
        boxed.apply(logits, adv)  # type: ignore[call-arg]


def test_values_against_a_drawing_opponent_are_seeded_and_another_rounds_values_join_the_fit(
        tmp_path: Path) -> None:
    """The values step may face an opponent that draws (random): the same seed gives the same rows. A fit
    may add another folder's values of the same policy and objective (more_values); one of another policy,
    or a folder without a values step, is refused naming it."""
    first, again = (advantage.collect_values("default", "random", 200, 3, advantage.DEFAULT_SHARE, None,
                                             RULES, lanes=64) for _ in range(2))
    assert all(np.array_equal(first[k], again[k], equal_nan=True) for k in first)
    legal = first["mask"]
    assert np.isfinite(first["value"][legal]).all() and np.isnan(first["value"][~legal]).all()
    with pytest.raises(ValueError, match="must not draw"):
        rollout_players("default", "random", RULES)  # the search's players still may not draw
    rand, heur = tmp_path / "rand", tmp_path / "heur"
    common = {"workers": 1, "epochs": 1, "seed": 4}
    assert advantage_round(rand, opponent="random", positions=150, steps=["values"], **common) == 0
    assert advantage_round(heur, more=(rand,), positions=100, max_logit_gap=None, **common) == 0
    agent = load_agent(heur / "final.safetensors", RULES)
    fit = agent.meta["advantage_rounds"][-1]
    assert fit["rows"] == 250 and fit["more_values"][0]["opponent"] == "random"
    assert "max_logit_gap" not in agent.meta["corrections"][-1]  # no trust region: no entry
    # the scores of the positions of both folders: where the correction applies
    from smear_env.engine.observation import SCORES

    fitted = np.concatenate([np.load(d / f"values_{0}.npz")["obs"] for d in (heur, rand)])
    assert agent.meta["corrections"][-1]["score_range"] == {
        "own": [float(fitted[:, SCORES].min()), float(fitted[:, SCORES].max())],
        "other": [float(fitted[:, SCORES + 1].min()), float(fitted[:, SCORES + 1].max())]}
    assert advantage_round(heur, more=(rand,), steps=["fit"], score_range="everywhere", **common) == 0
    assert "score_range" not in load_agent(heur / "final.safetensors", RULES).meta["corrections"][-1]
    with pytest.raises(ValueError, match="no values step recorded"):
        advantage_round(tmp_path / "x", more=(tmp_path / "empty",), steps=["fit"], **common)
    other = tmp_path / "other"
    other.mkdir()
    record = json.loads((rand / "round.json").read_text())
    assert record["values"]["policy_sha256"] == advantage.file_sha256(checkpoint_file("default"))
    record["values"]["policy_sha256"] = advantage.file_sha256(checkpoint_file("scratch"))
    (other / "round.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"its values step had policy file \(sha256\) '[0-9a-f]{64}', this"):
        advantage_round(heur, more=(other,), steps=["fit"], **common)
    del record["values"]["policy_sha256"]  # a record from before the hash: the path is compared
    record["values"]["policy"] = "scratch.safetensors"
    (other / "round.json").write_text(json.dumps(record))
    with pytest.raises(ValueError, match="its values step had policy 'scratch.safetensors'"):
        advantage_round(heur, more=(other,), steps=["fit"], **common)
