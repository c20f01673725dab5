"""Fuzz tier (issue 50): every command's arguments, and the config files given to smear-train.

Each case runs the command's ``main(argv)`` in this process, with the long-running part past argument and
input checking replaced by a stub that stops the case (the match, the game loop, the training, the learner,
the web server): what is fuzzed is everything a command does with its arguments before it starts working.
Every case must end within :data:`tests.fuzz_helpers.CASE_SECONDS` with status 0 (or reach the stub), or
with status 1 or 2 and exactly one ``PROG: error: ...`` line on stderr; never a traceback. Files go to a
temporary working folder. Size: ``SMEAR_FUZZ_EXAMPLES`` (tests/fuzz_helpers.py).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st

from tests.fuzz_helpers import AGENTS, NUMBERS, PATHS, TEXT, fuzz_settings, time_bound

ROOT = Path(__file__).resolve().parents[1]


GOOD_AGENTS = st.sampled_from(["random", "heuristic", "passer", "pimc:samples=2"])
SOME_AGENT = st.one_of(GOOD_AGENTS, GOOD_AGENTS, AGENTS)


class Reached(Exception):
    """The command got past its checks to the work it was asked for (a stub raised this)."""


def _stop(*args: Any, **kwargs: Any) -> Any:
    raise Reached


def _value(action: argparse.Action) -> st.SearchStrategy[str]:
    """What a user might give an option: half the time a plausible value (one of its choices, its default,
    a small number), else numbers, agent specs, paths or any text."""
    plausible = [str(c) for c in action.choices] if action.choices else ["1", "2", "4"]
    if action.default not in (None, argparse.SUPPRESS) and not isinstance(action.default, list | bool):
        plausible.append(str(action.default))
    good = st.sampled_from(plausible)
    return st.one_of(good, good, good, good, NUMBERS, AGENTS, PATHS, TEXT)


def argv_for(parser: argparse.ArgumentParser, positional: st.SearchStrategy[list[str]],
             skip: tuple[str, ...] = ()) -> st.SearchStrategy[list[str]]:
    """Command lines for ``parser``: the positionals, then up to 4 of its options (every option the parser
    has, with a value where it takes one; ``--opt=value`` or ``--opt value``), sometimes a stray word."""
    options: list[st.SearchStrategy[list[str]]] = []
    for action in parser._actions:  # noqa: SLF001 - argparse offers no public list of a parser's options
        names = [o for o in action.option_strings if o.startswith("--") and o not in skip]
        if not names or action.help == argparse.SUPPRESS:
            continue
        name = st.sampled_from(names)
        if action.nargs == 0:
            options.append(name.map(lambda n: [n]))
        else:
            options.append(st.tuples(name, _value(action), st.booleans()).map(
                lambda t: [f"{t[0]}={t[1]}"] if t[2] else [t[0], t[1]]))
    stray = st.one_of(st.just([]), st.just([]), st.just([]), TEXT.map(lambda w: [w]))  # mostly none
    return joined(positional, st.lists(st.one_of(*options), max_size=4).map(concat), stray)


def concat(parts: list[list[str]]) -> list[str]:
    """The words of ``parts``, in order."""
    return [w for words in parts for w in words]


def joined(*parts: st.SearchStrategy[list[str]]) -> st.SearchStrategy[list[str]]:
    """One command line from strategies of word lists, drawn and joined in order (every argv here is
    built this way)."""
    return st.tuples(*parts).map(lambda t: concat(list(t)))


def check_run(prog: str, run: Callable[[], Any], capsys: pytest.CaptureFixture) -> None:
    """Run one case: status 0 / the stub reached, or 1 / 2 with one ``prog: error:`` line; no traceback,
    no other exception, within the time bound."""
    capsys.readouterr()
    code: Any
    try:
        with time_bound():
            code = run()
    except SystemExit as e:
        code = e.code
    except Reached:
        code = "reached"
    out, err = capsys.readouterr()
    event(f"status {code}")  # pytest --hypothesis-show-statistics shows how many cases got how far
    assert "Traceback" not in err and "Traceback" not in out, err[-3000:]
    if code in (0, None, "reached"):
        return
    assert code in (1, 2), (code, err[-2000:])
    lines = [ln for ln in err.splitlines() if ln.startswith(f"{prog}: error:")]
    assert len(lines) == 1, err[-2000:]
    if os.environ.get("SMEAR_FUZZ_SHOW"):
        event(lines[0][:60])


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ------------------------------------------------------------------------------------------- smear-eval
@given(data=st.data())
@fuzz_settings()
def test_fuzz_smear_eval_arguments(data: st.DataObject, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture) -> None:
    from smear_env.evaluation import cli

    monkeypatch.setattr(cli, "run_match", _stop)
    monkeypatch.setattr(cli, "run_tournament", _stop)
    agents = st.lists(SOME_AGENT, min_size=1, max_size=4, unique=True)
    argv = data.draw(argv_for(cli.build_parser(), agents), label="argv")
    check_run("smear-eval", lambda: cli.main(argv), capsys)


# ------------------------------------------------------------------------------------------- smear-play
@given(data=st.data())
@fuzz_settings()
def test_fuzz_smear_play_arguments(data: st.DataObject, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture) -> None:
    from smear_env.play import cli

    monkeypatch.setattr(cli, "play", _stop)

    def no_input(prompt: str) -> str:  # pragma: no cover - the game loop is stubbed
        raise EOFError

    argv = data.draw(argv_for(cli.build_parser(), st.just([])), label="argv")
    check_run("smear-play", lambda: cli.main(argv, read_line=no_input), capsys)


# ------------------------------------------------------------------------------------------- smear-train
@given(data=st.data())
@fuzz_settings()
def test_fuzz_smear_train_arguments(data: st.DataObject, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture) -> None:
    from training import train

    monkeypatch.setattr(train, "train", _stop)
    config = st.sampled_from([str(ROOT / "configs" / "quickstart.yaml"),
                              str(ROOT / "configs" / "default.yaml"), "missing.yaml", "/dev/null", "."])
    keys = st.sampled_from(["total_timesteps", "seed", "n_envs", "algorithm.name", "algorithm.n_steps",
                            "selfplay.opponents", "eval.opponents", "imitation.teacher",
                            "network.hidden_sizes", "rules.kitty_size", "output.checkpoint_interval",
                            "init_from", "nosuch.key", ""])
    values = st.one_of(NUMBERS, AGENTS, TEXT)
    sets = st.lists(st.tuples(keys, values).map(lambda t: ["--set", f"{t[0]}={t[1]}"]), max_size=3)
    head = joined(st.lists(config.map(lambda c: ["--config", c]), max_size=1).map(concat), sets.map(concat))
    argv = data.draw(argv_for(train.build_parser(), head, skip=("--help-config", "--set")), label="argv")
    check_run("smear-train", lambda: train.main(argv), capsys)


# ------------------------------------------------------------------------------------------- smear-exploit
@pytest.fixture
def torch_threads() -> Any:
    import torch

    n = torch.get_num_threads()
    yield
    torch.set_num_threads(n)


@given(data=st.data())
@fuzz_settings()
def test_fuzz_smear_exploit_arguments(data: st.DataObject, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture, torch_threads: Any) -> None:
    from training import exploit

    monkeypatch.setattr(exploit, "make_trainer", _stop)
    budget = st.sampled_from([["--decisions", "10"], ["--minutes", "0.1"], []])
    head = joined(SOME_AGENT.map(lambda a: [a]), budget)
    argv = data.draw(argv_for(exploit.build_parser(), head), label="argv")
    check_run("smear-exploit", lambda: exploit.main(argv), capsys)


# ------------------------------------------------------------------------------------------- smear-serve
@given(data=st.data())
@fuzz_settings()
def test_fuzz_smear_serve_arguments(data: st.DataObject, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture) -> None:
    import uvicorn

    from smear_env.play import web

    monkeypatch.setattr(uvicorn, "run", _stop)
    argv = data.draw(argv_for(web.build_parser(), st.just([])), label="argv")
    check_run("smear-serve", lambda: web.main(argv), capsys)


# ------------------------------------------------------------------------------------------- config files
def _tiny_config() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    return {"default": {**doc["default"], **doc["tiny"]}}


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), TEXT, AGENTS, NUMBERS)
TREES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(TEXT, inner, max_size=4)),
                     max_leaves=12)


def _paths(tree: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(tree, dict):
        for k, v in tree.items():
            out += _paths(v, (*prefix, k))
    return out


def _mutated(data: st.DataObject) -> str:
    """The tiny quickstart config with up to 3 values (or whole blocks) replaced or removed, or a key
    added, as YAML text."""
    doc = _tiny_config()
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        paths = _paths(doc)[1:]
        if not paths:
            break
        path = data.draw(st.sampled_from(paths), label="path")
        node = doc
        for k in path[:-1]:
            node = node[k]
        what = data.draw(st.sampled_from(["replace", "remove", "add"]), label="edit")
        if what == "replace":
            node[path[-1]] = data.draw(TREES, label="value")
        elif what == "remove":
            del node[path[-1]]
        elif isinstance(node.get(path[-1]), dict):
            node[path[-1]][data.draw(TEXT, label="key")] = data.draw(TREES, label="value")
    return yaml.safe_dump(doc, allow_unicode=True)


RAW_YAML = st.sampled_from([
    "", "default:", "default: 1", "- a\n- b", "default: {seed: 99999999999999999999999999999}",
    "default: &a [*a]", "default: !!python/object:os.system {}", "default:\n  seed: .nan",
    "default: {total_timesteps: 1e400}", "a: &x [1]\nb: *x\ndefault: {}", "default: {default: {}}",
    "\t", "default: {selfplay: {opponents: {'cmd:touch pwned': 1.0}}}", "\ufeffdefault: {}",
    "%YAML 9.9\n---\n", "default: {seed: " + "9" * 4000 + "}",
])


@given(data=st.data())
@fuzz_settings()
def test_fuzz_smear_train_config_files(data: st.DataObject, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture) -> None:
    """Config files, through smear-train's command line: the tiny config with values replaced by anything
    YAML holds, raw YAML attacks, random text. Nothing past the checks runs (no program from the file)."""
    from training import train

    monkeypatch.setattr(train, "train", _stop)
    kind = data.draw(st.sampled_from(["mutated", "raw", "text"]), label="kind")
    if kind == "mutated":
        text = _mutated(data)
    elif kind == "raw":
        text = data.draw(RAW_YAML, label="yaml")
    else:
        text = data.draw(st.text(max_size=200), label="text")
    cfg = workdir / "fuzz.yaml"
    cfg.write_bytes(text.encode("utf-8", "surrogatepass"))
    check_run("smear-train", lambda: train.main(["--config", str(cfg), "--run-dir", str(workdir / "run")]),
              capsys)
    assert not (workdir / "pwned").exists()
