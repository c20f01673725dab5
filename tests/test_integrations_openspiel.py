"""smear_env.envs.integrations.openspiel: python_smear passes OpenSpiel's own checks and plays smear_v0's
games. Skipped unless open_spiel is installed (``make test-openspiel``)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="open_spiel is not installed (make test-openspiel)")

import pyspiel  # noqa: E402
from open_spiel.python import rl_environment  # noqa: E402
from open_spiel.python.observation import make_observation  # noqa: E402

from smear_env.core.config import SmearRules  # noqa: E402
from smear_env.engine.game import BIDDING, PLAY  # noqa: E402
from smear_env.engine.observation import OBS_SIZE, encode_game  # noqa: E402
from smear_env.engine.record import validate_record  # noqa: E402
from smear_env.envs.aec import env as smear_env  # noqa: E402
from smear_env.envs.integrations import openspiel as sm  # noqa: E402

INFO = pyspiel.IIGObservationType(perfect_recall=True)
OBS = pyspiel.IIGObservationType(perfect_recall=False)
PUBLIC = pyspiel.IIGObservationType(perfect_recall=False, public_info=True,
                                    private_info=pyspiel.PrivateInfoType.NONE)
PRIVATE = pyspiel.IIGObservationType(perfect_recall=False, public_info=False,
                                     private_info=pyspiel.PrivateInfoType.SINGLE_PLAYER)


def _chance(state, rng):
    outcomes, probs = zip(*state.chance_outcomes(), strict=True)
    assert abs(sum(probs) - 1.0) < 1e-9
    state.apply_action(int(outcomes[rng.integers(len(outcomes))]))


def _to_decision(state, rng):
    while state.is_chance_node():
        _chance(state, rng)
    return state


def random_rules(rng: np.random.Generator) -> dict:
    """A random rule set with a low target so that random play ends games."""
    return {"kitty_size": int(rng.integers(4)), "target_score": int(rng.integers(1, 6)),
            "high_low": str(rng.choice(["ace_seven", "in_play"])),
            "game_point_tie": str(rng.choice(["nobody", "bidder"])),
            "all_pass": str(rng.choice(["redeal", "dealer_must_bid"])),
            "win_requires_bid": bool(rng.integers(2)), "cap_defenders": bool(rng.integers(2)),
            "max_cycles": int(rng.integers(150, 400))}


# ---------------------------------------------------------------------------- loading and parameters
def test_load_game_takes_every_rule_option_with_the_projects_defaults():
    game = pyspiel.load_game("python_smear")
    params = game.get_parameters()
    assert {k: params[k] for k in SmearRules.option_names()} == SmearRules().to_dict()
    assert params["max_cycles"] == 10_000 and params["max_hands"] == 0
    game = pyspiel.load_game("python_smear(target_score=11,kitty_size=1,high_low=in_play,"
                             "cap_defenders=true)")
    assert game.rules == SmearRules(target_score=11, kitty_size=1, high_low="in_play", cap_defenders=True)
    assert game.num_distinct_actions() == 72 and game.num_players() == 4
    assert game.max_game_length() == 10_000 and game.max_chance_outcomes() == 32
    assert game.observation_tensor_shape() == [OBS_SIZE]
    assert game.information_state_tensor_shape() == [OBS_SIZE + 24 * 32]
    assert sm.load(kitty_size=0).rules.kitty_size == 0


@pytest.mark.parametrize("text,message", [
    ("python_smear(kitty_size=5)", "rule option kitty_size=5 is not allowed; allowed values: 0, 1, 2, 3"),
    ("python_smear(high_low=aces)", "rule option high_low='aces' is not allowed; allowed values:"),
    ("python_smear(target_score=0)", "rule option target_score=0 is not allowed"),
    ("python_smear(max_cycles=0)", "option max_cycles=0 is not allowed; allowed values: an integer >= 1"),
    ("python_smear(max_hands=-2)", "option max_hands=-2 is not allowed; allowed values: 0 (no limit) or an"),
])
def test_bad_parameters_get_the_projects_one_line_message(text, message):
    with pytest.raises(ValueError) as err:
        pyspiel.load_game(text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_an_unknown_parameter_is_refused_by_openspiel_naming_the_valid_ones():
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'kitty'.*kitty_size"):
        pyspiel.load_game("python_smear(kitty=1)")


# ---------------------------------------------------------------------------- OpenSpiel's own checks
def test_random_sim_test_on_the_default_rules():
    game = pyspiel.load_game("python_smear(max_cycles=300)")  # R21 bound: random play's games are long
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_random_sim_test_on_random_rule_sets():
    rng = np.random.default_rng(5401)
    for _ in range(10):
        game = pyspiel.load_game("python_smear", random_rules(rng))
        pyspiel.random_sim_test(game, num_sims=1, serialize=bool(rng.integers(2)), verbose=False)


def test_chance_nodes_deal_the_first_dealer_then_31_cards_with_their_probabilities():
    state = pyspiel.load_game("python_smear").new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes() == [(s, 0.25) for s in range(4)]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 2) == "Dealer:2"
    state.apply_action(2)
    for i in range(31):
        assert state.is_chance_node()
        outcomes = state.chance_outcomes()
        assert len(outcomes) == 32 - i and all(p == pytest.approx(1 / (32 - i)) for _, p in outcomes)
        state.apply_action(outcomes[0][0])
    assert not state.is_chance_node() and state.current_player() == 3  # left of the dealer bids first
    assert state.smear_game.deal[0] == [0, 1, 2, 3, 4, 5] and state.smear_game.stock == list(range(24, 32))
    assert state.action_to_string(3, 0) == "pass"
    with pytest.raises(ValueError, match="is not legal for player 3"):
        state.apply_action(20)  # a play in the bidding
    assert state.legal_actions() == sorted(state.legal_actions())


def test_max_cycles_ends_the_game_as_the_env_truncates_it():
    game = pyspiel.load_game("python_smear(max_cycles=7)")
    state = _to_decision(game.new_initial_state(), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    n = 0
    while not state.is_terminal():
        if state.is_chance_node():
            _chance(state, rng)
            continue
        state.apply_action(state.legal_actions()[-1 if n < 3 else 0])
        n += 1
    assert n == 7 and state.truncated and state.returns() == [0.0] * 4
    assert state.to_record()["truncated"] is True


def test_max_hands_ends_the_game_at_the_deal_it_would_make():
    game = pyspiel.load_game("python_smear(max_hands=2,all_pass=redeal)")
    state = _to_decision(game.new_initial_state(), np.random.default_rng(0))
    for _ in range(4):
        state.apply_action(0)  # everyone passes: thrown in, redealt (hand 2)
    _to_decision(state, np.random.default_rng(1))
    for _ in range(4):
        state.apply_action(0)
    assert state.is_terminal() and state.truncated and state.returns() == [0.0] * 4


# ---------------------------------------------------------------------------- the same game as smear_v0
@pytest.mark.parametrize("seed", [3, 17, 5402])
def test_same_seed_and_actions_give_smear_v0s_game(seed):
    """Lockstep: smear_v0 from a seed, random legal actions; python_smear gets the env's deals as chance
    outcomes and the same actions: every observation tensor, the returns and the record are the env's."""
    opts = {"target_score": 4, "kitty_size": int(seed % 4)}
    env = smear_env(**opts)
    env.reset(seed=seed)
    game = pyspiel.load_game("python_smear", opts)
    state = game.new_initial_state()
    obs_os = make_observation(game)
    rng = np.random.default_rng(seed)
    deals = 0
    # the env's first deal is Game(rules, seed): dealer = rng.integers(4), deck = rng.permutation(32)
    g0 = np.random.default_rng(seed)
    dealer, deck = int(g0.integers(4)), g0.permutation(32).tolist()
    state.apply_action(dealer)
    for c in deck[:31]:
        state.apply_action(c)
    total = 0.0
    while True:
        eg = env.unwrapped.game
        if state.is_chance_node():  # the env dealt its next hand already: the same cards in deal order
            assert eg.hand_number > state.smear_game.hand_number
            for c in [c for h in eg.deal for c in h] + eg.stock[:7]:
                state.apply_action(c)
            deals += 1
        agent = env.agent_selection
        seat = int(agent[-1])
        if env.terminations[agent] or env.truncations[agent]:
            break
        assert state.current_player() == seat
        obs = env.observe(agent)
        obs_os.set_from(state, seat)
        assert np.array_equal(obs_os.tensor, obs["observation"])
        assert np.array_equal(state.observation_tensor(seat), obs["observation"])
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        assert state.legal_actions() == legal
        a = legal[rng.integers(len(legal))]
        env.step(a)
        total += env.rewards["player_0"]
        state.apply_action(a)
    assert state.is_terminal() and deals >= 1
    assert total == state.returns()[0]
    rec_env, rec_os = env.unwrapped.record(), state.to_record()
    validate_record(rec_env)
    validate_record(rec_os)
    for key in ("hands", "final_scores", "winner", "truncated", "rules"):
        assert rec_os[key] == rec_env[key], key
    w = rec_env["winner"]
    assert state.returns() == [1.0 if s % 2 == w else -1.0 for s in range(4)]


# ---------------------------------------------------------------------------- observer and privacy
def _random_decisions(game, rng, n_games=3):
    """Decision states of a few random games (a clone of each)."""
    out = []
    for _ in range(n_games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                _chance(state, rng)
                continue
            out.append(state.clone())
            la = state.legal_actions()
            state.apply_action(la[rng.integers(len(la))])
    return out


def test_observer_types_and_their_pieces():
    game = pyspiel.load_game("python_smear(target_score=3,max_cycles=200)")
    full = make_observation(game, OBS)
    info = make_observation(game, INFO)
    pub = make_observation(game, PUBLIC)
    priv = make_observation(game, PRIVATE)
    assert full.tensor.shape == (OBS_SIZE,) and full.dict["bids"].shape == (4, 5)
    assert info.dict["play_order"].shape == (24, 32)
    assert set(priv.dict) == {"hand", "kitty", "discards"}
    assert not {"hand", "kitty", "discards"} & set(pub.dict)
    with pytest.raises(ValueError, match="ALL_PLAYERS is not supported"):
        make_observation(game, pyspiel.IIGObservationType(
            perfect_recall=False, private_info=pyspiel.PrivateInfoType.ALL_PLAYERS))
    with pytest.raises(ValueError, match="take no parameters"):
        make_observation(game, OBS, {"x": 1})
    rng = np.random.default_rng(7)
    for state in _random_decisions(game, rng, 2)[::7]:
        p = state.current_player()
        for o in (full, info, pub, priv):
            o.set_from(state, p)
        assert np.array_equal(full.tensor, encode_game(state.smear_game, p))
        assert np.array_equal(info.tensor[:OBS_SIZE], full.tensor)
        assert info.dict["play_order"].sum() == sum(x.bit_count() for x in state.smear_game.played_by)
        assert np.array_equal(priv.dict["hand"], full.dict["hand"])
        g = state.smear_game
        if not g.trump_public:
            assert not pub.dict["trump"].any()
        assert state.information_state_string(p) == info.string_from(state, p)
        assert state.observation_string(p) == full.string_from(state, p)


def _swap_hidden(state, observer, rng):
    """A clone of ``state`` where two cards ``observer`` cannot see trade places (between two other
    seats' hands, or another seat's hand and the unseen stock); None when there is no such pair."""
    g = state.smear_game
    others = [s for s in range(4) if s != observer and g.hands[s]]
    seen_stock = set(g.kitty) if g.bidder == observer and g.phase != BIDDING else set()
    unseen_stock = [c for c in g.stock if c not in seen_stock and c not in g.kitty]
    if g.phase == BIDDING:
        unseen_stock = list(g.stock)
    pairs = [(a, b) for a in others for b in others if a < b]
    rng.shuffle(pairs)
    clone = state.clone()
    cg = clone.smear_game
    if pairs:
        a, b = pairs[0]
        ca = [c for c in range(32) if g.hands[a] >> c & 1]
        cb = [c for c in range(32) if g.hands[b] >> c & 1]
        x, y = ca[rng.integers(len(ca))], cb[rng.integers(len(cb))]
        cg.hands[a] ^= (1 << x) | (1 << y)
        cg.hands[b] ^= (1 << x) | (1 << y)
        return clone, (a, b)
    if others and unseen_stock:
        a = others[0]
        ca = [c for c in range(32) if g.hands[a] >> c & 1]
        x, y = ca[0], unseen_stock[0]
        cg.hands[a] ^= (1 << x) | (1 << y)
        cg.stock[cg.stock.index(y)] = x
        return clone, (a,)
    return None, ()


def test_privacy_another_seats_hidden_cards_never_reach_a_seats_observations():
    game = pyspiel.load_game("python_smear(target_score=3,max_cycles=300,kitty_size=2)")
    rng = np.random.default_rng(5403)
    observers = [make_observation(game, t) for t in (OBS, INFO, PUBLIC, PRIVATE)]
    checked = changed = 0
    for state in _random_decisions(game, rng, 3)[::3]:
        for p in range(4):
            clone, moved = _swap_hidden(state, p, rng)
            if clone is None:
                continue
            for o in observers:
                o.set_from(state, p)
                before = o.tensor.copy()
                o.set_from(clone, p)
                assert np.array_equal(before, o.tensor)
                assert o.string_from(state, p) == o.string_from(clone, p)
            assert state.information_state_string(p) == clone.information_state_string(p)
            assert np.array_equal(state.observation_tensor(p), clone.observation_tensor(p))
            checked += 1
            # the test can fail: the seat whose cards moved sees the change
            q = moved[0]
            changed += state.observation_string(q) != clone.observation_string(q)
            assert not np.array_equal(state.information_state_tensor(q), clone.information_state_tensor(q))
    assert checked > 50 and changed > 0


def test_the_bidders_kitty_and_discards_are_its_own():
    game = pyspiel.load_game("python_smear(kitty_size=3)")
    rng = np.random.default_rng(11)
    for _ in range(20):
        state = _to_decision(game.new_initial_state(), rng)
        while state.smear_game.phase < PLAY:
            la = state.legal_actions()
            state.apply_action(la[-1])  # bid 4 at once
        g = state.smear_game
        b = g.bidder
        assert g.kitty and g.discards
        assert "kitty" in state.information_state_string(b)
        for p in range(4):
            if p != b:
                text = state.information_state_string(p)
                assert "kitty" not in text and "discards" not in text
                o = make_observation(game, INFO)
                o.set_from(state, p)
                assert not o.dict["kitty"].any() and not o.dict["discards"].any()


# ---------------------------------------------------------------------------- resampling
def test_resample_from_infostate_keeps_the_information_state_and_draws_the_hidden_cards():
    game = pyspiel.load_game("python_smear(target_score=3,max_cycles=300)")
    rng = np.random.default_rng(5404)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    differ = 0
    for state in _random_decisions(game, rng, 2)[::5]:
        p = state.current_player()
        for _ in range(3):
            r = state.resample_from_infostate(p, sampler)
            assert r.information_state_string(p) == state.information_state_string(p)
            assert r.observation_string(p) == state.observation_string(p)
            assert np.array_equal(r.information_state_tensor(p), state.information_state_tensor(p))
            assert r.legal_actions() == state.legal_actions() and r.current_player() == p
            differ += r.smear_game.hands != state.smear_game.hands
            # the world plays on to the end
            while not r.is_terminal():
                if r.is_chance_node():
                    _chance(r, rng)
                else:
                    la = r.legal_actions()
                    r.apply_action(la[rng.integers(len(la))])
    assert differ > 0


# ---------------------------------------------------------------------------- OpenSpiel's tools
def test_rl_environment_drives_a_game_to_its_end():
    env = rl_environment.Environment(pyspiel.load_game("python_smear(target_score=3,max_cycles=400)"))
    env.seed(3)
    assert env.observation_spec()["info_state"] == (OBS_SIZE + 24 * 32,)
    assert env.action_spec()["num_actions"] == 72
    rng = np.random.default_rng(3)
    ts = env.reset()
    steps = 0
    while not ts.last():
        p = ts.observations["current_player"]
        legal = ts.observations["legal_actions"][p]
        ts = env.step([legal[rng.integers(len(legal))]])
        steps += 1
    assert steps > 4 and sum(ts.rewards) == 0 and set(ts.rewards) <= {-1.0, 0.0, 1.0}


def test_clone_is_independent():
    game = pyspiel.load_game("python_smear")
    state = _to_decision(game.new_initial_state(), np.random.default_rng(0))
    clone = state.clone()
    clone.apply_action(clone.legal_actions()[1])
    assert state.history() != clone.history() and state.smear_game.bids == []
    assert len(clone.smear_game.bids) == 1


def test_serialize_and_deserialize_round_trip():
    game = pyspiel.load_game("python_smear(target_score=3,kitty_size=2)")
    rng = np.random.default_rng(9)
    state = _random_decisions(game, rng, 1)[20]
    text = pyspiel.serialize_game_and_state(game, state)
    game2, state2 = pyspiel.deserialize_game_and_state(text)
    assert str(state2) == str(state) and state2.history() == state.history()
    p = state.current_player()
    assert state2.information_state_string(p) == state.information_state_string(p)
    assert state2.legal_actions() == state.legal_actions()


# ---------------------------------------------------------------------------- OpenSpiel's bots
def test_ismcts_and_mcts_bots_play_through_evaluate_bots():
    from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts
    from open_spiel.python.bots.uniform_random import UniformRandomBot

    class ISMCTSBot(ismcts.ISMCTSBot):
        """OpenSpiel's Python ISMCTSBot has no restart_at (evaluate_bots calls it): each search starts
        afresh anyway."""

        def restart_at(self, state):
            self.reset()

    game = pyspiel.load_game("python_smear(target_score=1,max_cycles=120)")
    rs = np.random.RandomState(5405)
    rollout = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    bots = [ISMCTSBot(game, rollout, 2.0, 8, random_state=rs),
            mcts.MCTSBot(game, 2.0, 8, rollout, random_state=rs),
            UniformRandomBot(2, rs), UniformRandomBot(3, rs)]
    for _ in range(2):
        returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rs)
        assert len(returns) == 4 and sum(returns) == 0 and returns[0] == returns[2]


def test_openspiel_agent_spec_plays_legal_moves_from_the_seats_view():
    from smear_env.agents.registry import make_agent
    from smear_env.engine.game import Game
    from smear_env.engine.observation import observe

    agent = make_agent("openspiel:ismcts,simulations=12")
    assert agent.name == "openspiel:ismcts,simulations=12"
    rules = SmearRules(kitty_size=2)
    for seed in (1, 2):
        g = Game(rules, seed=seed)
        agent.start_game(0, rules, np.random.default_rng(seed))
        while g.phase < 4:  # one hand, every seat played by the agent
            obs = observe(g, g.to_act)
            a = agent.act(obs)
            assert obs["action_mask"][a] == 1
            g.apply(a)


@pytest.mark.parametrize("spec,message", [
    ("openspiel:mcts", "unknown OpenSpiel bot 'mcts'; allowed values: ismcts"),
    ("openspiel:ismcts,simulations=0", "simulations=0 is not allowed; allowed values: an integer >= 1"),
    ("openspiel:ismcts,sims=3", "unknown option 'sims'"),
    ("openspiel:ismcts,final=best", "final='best' is not allowed"),
])
def test_openspiel_agent_spec_errors_name_the_allowed_values(spec, message):
    from smear_env.agents.registry import make_agent

    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_agent(spec)


def test_the_agent_answers_from_the_view_alone():
    """Two games that differ only in cards the seat cannot see give the same answer from the same
    generator state."""
    from smear_env.agents.registry import make_agent
    from smear_env.engine.game import Game
    from smear_env.engine.observation import observe

    agent = make_agent("openspiel:ismcts,simulations=16")
    rules = SmearRules()
    g = Game.from_deal([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16, 17],
                        [18, 19, 20, 21, 22, 23]], list(range(24, 32)), dealer=3, rules=rules)
    h = Game.from_deal([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 24], [12, 13, 14, 15, 16, 17],
                        [18, 19, 20, 21, 22, 23]], [11, *range(25, 32)], dealer=3, rules=rules)
    assert np.array_equal(observe(g, 0)["observation"], observe(h, 0)["observation"])
    answers = []
    for game in (g, h):
        agent.start_game(0, rules, np.random.default_rng(5408))
        answers.append(agent.act(observe(game, 0)))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("kitty_size", [0, 1, 3])
def test_worlds_from_a_seats_view_alone_show_that_seat_its_own_observation(kitty_size):
    """The agent's worlds: from the relative view decoded from an observation, a world whose seat 0 sees
    exactly that observation and has the same legal actions, at every decision of random games."""
    from smear_env.engine.decoding import decode
    from smear_env.engine.game import Game
    from smear_env.engine.infoset import sample_hidden
    from smear_env.engine.observation import observe

    rules = SmearRules(kitty_size=kitty_size, target_score=4)
    rng = np.random.default_rng(5409 + kitty_size)
    checked = 0
    for seed in range(3):
        g = Game(rules, seed=seed)
        while not g.is_over and checked < 400:
            if g.phase == 4:
                g.start_next_hand()
                continue
            obs = observe(g, g.to_act)
            view = decode(obs["observation"], obs["action_mask"])
            world = sm.world_from_view(view, sample_hidden(view, rng), rules, rng)
            assert np.array_equal(encode_game(world, 0), obs["observation"])
            assert world.legal_actions() == view.legal_actions
            state = sm.state_at(pyspiel.load_game("python_smear", rules.to_dict()), world)
            assert state.current_player() == 0 and state.legal_actions() == list(view.legal_actions)
            checked += 1
            la = g.legal_actions()
            g.apply(la[rng.integers(len(la))])
    assert checked > 100
