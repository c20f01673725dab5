"""Generated parts of the documentation site, from the same code the env docstring describes.

The site's pages (``docs/*.md``) hold markers ``<!-- smear:NAME -->``; the MkDocs hook at the end of this
file (``hooks:`` in ``mkdocs.yml``) replaces each with ``GENERATORS[NAME]()``, so the tables are computed
from the code at build time and cannot drift from it:

* the env page's summary, agents, action ids, observation index table, options and version history come from
  ``smear_env.core.actions``, ``smear_env.engine.observation`` (``TERMS``/``SLICES`` and the term table of its
  docstring), ``SmearRules`` and ``smear_env.envs.aec`` (its constants and its module docstring's sections:
  rewards, episodes, state, seeding), and ``smear_env.versioning.ENV_HISTORY``;
* the training config reference is ``smear-train --help-config``; the evaluation page's CLI reference is
  ``smear-eval --help``; the agents page reads the shipped-agent table and the model cards.

Links from a page to repository files outside ``docs/`` (``../smear_env/...``), which the site does not
hold, become the file's path. An unknown marker, or an observation term missing from the observation
docstring's table, fails the build. ``tests/test_release_docs.py`` checks these generators against the env
docstring.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
from collections.abc import Callable
from typing import Any

MARKER = re.compile(r"<!-- smear:([a-z_]+) -->")
OUTSIDE_LINK = re.compile(r"\[([^\]]+)\]\(\.\./([^)\s]+)\)")
# a relative link inside a model card (relative to checkpoints/, e.g. a training curve next to the card)
CARD_LINK = re.compile(r"\]\((?![a-z]+:|#|/|\.\./)([^)\s]+)\)")


def _outside_link(m: re.Match[str]) -> str:
    """A link from docs/ to a repository file outside it (which the site does not hold) -> its path."""
    text, path = m.group(1), m.group(2)
    return f"`{path}`" if text.strip("`") == path else f"{text} (`{path}`)"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _code(text: str, lang: str = "text") -> str:
    return f"```{lang}\n{text.rstrip()}\n```"


def _rst_inline(text: str) -> str:
    """RST inline markup of the docstrings -> Markdown (double backticks, roles)."""
    text = re.sub(r":(?:class|func|mod|meth|data|attr):`~?([^`]+)`", r"`\1`", text)
    return text.replace("``", "`")


# ------------------------------------------------------------------------------------------ env docstring
def env_doc_sections() -> dict[str, str]:
    """The env module docstring split into its sections (``Agents``, ``Actions``, ..., ``Version history``):
    an unindented line is a heading, the indented lines below it its body (dedented)."""
    import smear_env.envs.aec as env_mod

    lines = (env_mod.__doc__ or "").splitlines()
    heads: dict[str, str] = {"intro": lines[0]}
    bodies: dict[str, list[str]] = {"intro": []}
    current = "intro"
    for line in lines[1:]:
        if line and not line[0].isspace():
            current, _, note = line.partition(" (")
            heads[current] = note.removesuffix(")")
            bodies[current] = []
        else:
            bodies[current].append(line)
    out = {}
    for name, body in bodies.items():
        text = textwrap.dedent("\n".join(body)).strip()
        note = heads[name]
        out[name] = f"{note[:1].upper()}{note[1:]}.\n\n{text}" if note and name != "intro" else text
    return out


def _section(*prefixes: str) -> str:
    """The env docstring's sections whose heading starts with one of ``prefixes`` (``"Rewards"`` matches
    ``Rewards and episodes``), in docstring order; none is a ``ValueError`` (the docstring was reorganised:
    update the page)."""
    found = [body for head, body in env_doc_sections().items() if head.startswith(prefixes)]
    if not found:
        raise ValueError(
            f"smear_env.envs.aec's docstring has no section starting with {' or '.join(prefixes)}")
    return _rst_inline("\n\n".join(found))


def env_summary() -> str:
    from smear_env.core.actions import NUM_ACTIONS
    from smear_env.engine.observation import OBS_HIGH, OBS_LOW, OBS_SIZE, SLICES, TERMS
    from smear_env.envs.aec import AGENTS, STATE_SIZE
    from smear_env.versioning import ENV_VERSION

    rows = [
        ["Import", f"`from smear_env import {ENV_VERSION}`"],
        ["Registry id", f"`pettingzoo.make(\"aec\", \"smear/{ENV_VERSION}\")`"],
        ["API", "AEC (turn-based); `action_mask` in every observation"],
        ["Agents", f"`{list(AGENTS)}`"],
        ["Number of agents", len(AGENTS)],
        ["Action space", f"`Discrete({NUM_ACTIONS})`"],
        ["Observation shape", f"`({OBS_SIZE},)` float32, plus `action_mask` `({NUM_ACTIONS},)` int8"],
        ["Observation values", "0 / 1, except " + ", ".join(
            f"`{name}` [{OBS_LOW[SLICES[name]].min():.0f}, {OBS_HIGH[SLICES[name]].max():.0f}]"
            for name, _, kind in TERMS if kind == "raw")],
        ["State shape", f"`({STATE_SIZE},)` float32 (`state()`, perfect information)"],
    ]
    return _table(["", ""], rows)


def env_agents() -> str:
    from smear_env.envs.aec import AGENTS

    rows = [[f"`{a}`", i, i % 2, f"`{AGENTS[(i + 2) % 4]}`"] for i, a in enumerate(AGENTS)]
    return _table(["agent", "seat", "team", "partner"], rows) + "\n\n" + _section("Agents")


def env_actions() -> str:
    from smear_env.core import actions as A
    from smear_env.core.cards import SUIT_CHARS

    def ids(lo: int, hi: int) -> str:
        return f"{lo}" if lo == hi else f"{lo} .. {hi}"

    bids = range(A.MIN_BID, A.MAX_BID + 1)
    rows = [
        [ids(A.PASS_ACTION, A.PASS_ACTION), "bidding", "pass", A.action_name(A.PASS_ACTION)],
        [ids(A.bid_action(A.MIN_BID), A.bid_action(A.MAX_BID)), "bidding",
         "bid " + ", ".join(map(str, bids)), ", ".join(A.action_name(A.bid_action(b)) for b in bids)],
        [ids(A.TRUMP_ACTION_BASE, A.DISCARD_ACTION_BASE - 1), "trump",
         "name trump " + " ".join(SUIT_CHARS), f"{A.action_name(A.TRUMP_ACTION_BASE)} .. "
         f"{A.action_name(A.DISCARD_ACTION_BASE - 1)}"],
        [ids(A.DISCARD_ACTION_BASE, A.PLAY_ACTION_BASE - 1), "discard", "discard card id 0..31",
         f"{A.action_name(A.DISCARD_ACTION_BASE)} .. {A.action_name(A.PLAY_ACTION_BASE - 1)}"],
        [ids(A.PLAY_ACTION_BASE, A.NUM_ACTIONS - 1), "play", "play card id 0..31",
         f"{A.action_name(A.PLAY_ACTION_BASE)} .. {A.action_name(A.NUM_ACTIONS - 1)}"],
    ]
    return _table(["ids", "decision", "meaning", "names (`action_name`)"], rows)


def observation_term_meanings() -> dict[str, tuple[str, str]]:
    """term -> (size as written, meaning) from the table in ``smear_env.engine.observation``'s docstring."""
    import smear_env.engine.observation as O

    found = {}
    for line in (O.__doc__ or "").splitlines():
        m = re.match(r"``(\w+)``\s+(\S+)\s+(.*)$", line.strip())
        if m:
            found[m.group(1)] = (m.group(2), m.group(3).strip())
    return found


def env_observation() -> str:
    from smear_env.engine.observation import SLICES, TERMS, observation_bounds
    from smear_env.tables.table import DEFAULT_MAX_CYCLES

    meanings = observation_term_meanings()
    low, high = observation_bounds(None, DEFAULT_MAX_CYCLES)
    rows = []
    for name, size, kind in TERMS:
        if name not in meanings:
            raise ValueError(
                f"observation term {name!r} is missing from smear_env.engine.observation's docstring")
        written, meaning = meanings[name]
        if eval_size(written) != size:
            raise ValueError(f"observation term {name!r}: the docstring says size {written}, the code {size}")
        sl = SLICES[name]
        bounds = f"{low[sl].min():g} .. {high[sl].max():g}"
        rows.append([f"`{name}`", f"{sl.start} .. {sl.stop - 1}", written, kind, bounds,
                     _rst_inline(meaning)])
    return _table(["term", "indices", "size", "kind", "bounds", "meaning"], rows)


def eval_size(written: str) -> int:
    """``"4x32"`` -> 128, ``"6"`` -> 6."""
    n = 1
    for part in written.split("x"):
        n *= int(part)
    return n


def _field_docs(cls: type) -> dict[str, str]:
    """Attribute docstrings (a string literal right after a field) of a dataclass."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs = {}
    for node, nxt in zip(body, body[1:], strict=False):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
                docs[node.target.id] = " ".join(str(nxt.value.value).split())
    return docs


def env_options() -> str:
    from smear_env.core.config import SmearRules
    from smear_env.envs.aec import ENV_OPTIONS, EPISODE_VALUES, RENDER_MODES, REWARD_VALUES, parse_env_options

    docs = _field_docs(SmearRules)
    defaults = SmearRules()
    rows = [
        [f"`{f.name}`", f"`{getattr(defaults, f.name)!r}`", _rst_inline(docs.get(f.name, ""))]
        for f in dataclasses.fields(SmearRules)
    ]
    rules = _table(["rule option", "default", "meaning"], rows)
    _, env_defaults = parse_env_options({})
    allowed = {
        "render_mode": ", ".join(f"`{m!r}`" for m in (None, *RENDER_MODES)),
        "episode": ", ".join(f"`{v!r}`" for v in EPISODE_VALUES),
        "reward": ", ".join(f"`{v!r}`" for v in REWARD_VALUES),
        "max_cycles": "integer >= 1",
        "rules": "a `SmearRules` (instead of the rule options one by one)",
    }
    env_rows = [
        [f"`{k}`", allowed.get(k, ""), f"`{env_defaults[k]!r}`" if k in env_defaults else "`None`"]
        for k in ENV_OPTIONS
    ]
    env_table = _table(["env option", "values", "default"], env_rows)
    return f"{rules}\n\n{env_table}\n\n{_section('Options')}"


def env_rewards() -> str:
    """Rewards and episode ends (one section of the env docstring, or two)."""
    return _section("Rewards", "Episodes")


def env_state() -> str:
    return _section("State")


def env_seeding() -> str:
    return _section("Seeding")


def env_version_history() -> str:
    from smear_env.versioning import ENV_HISTORY

    rows = [
        [f"`{v.env}`", v.package, v.obs_size, f"`{v.obs_layout_hash}`", v.actions[-1], v.changes]
        for v in ENV_HISTORY
    ]
    return _table(["env", "since package", "obs size", "obs layout hash", "actions", "changes"], rows)


# ------------------------------------------------------------------------------------------ other pages
def shipped_agents() -> str:
    from smear_env.agents.shipped import SHIPPED_AGENTS

    rows = [[f"`{a.name}`", f"`checkpoints/{a.file}`", f"`checkpoints/{a.card}`", a.summary]
            for a in SHIPPED_AGENTS.values()]
    return _table(["spec", "checkpoint", "model card", "summary"], rows)


def model_cards() -> str:
    """Every shipped agent's model card, headings moved two levels down; its relative links point into
    ``checkpoints/`` (then shown as paths, like every link to a file outside ``docs/``)."""
    from smear_env.agents.shipped import SHIPPED_AGENTS, model_card

    parts = []
    for name in SHIPPED_AGENTS:
        card = re.sub(r"^(#+) ", lambda m: "#" * (len(m.group(1)) + 2) + " ", model_card(name), flags=re.M)
        parts.append(CARD_LINK.sub(r"](../checkpoints/\1)", card).strip())
    return "\n\n".join(parts)


def config_reference() -> str:
    from training.config import help_text
    from training.stages import stage_configs

    return _code(help_text(stage_configs()))


def eval_cli() -> str:
    from smear_env.evaluation.cli import build_parser

    parser = build_parser()
    parser.prog = "smear-eval"
    return _code(parser.format_help())


GENERATORS: dict[str, Callable[[], str]] = {
    "env_summary": env_summary,
    "env_agents": env_agents,
    "env_actions": env_actions,
    "env_observation": env_observation,
    "env_options": env_options,
    "env_rewards": env_rewards,
    "env_state": env_state,
    "env_seeding": env_seeding,
    "env_version_history": env_version_history,
    "shipped_agents": shipped_agents,
    "model_cards": model_cards,
    "config_reference": config_reference,
    "eval_cli": eval_cli,
}


def render(markdown: str) -> str:
    """Replace every ``<!-- smear:NAME -->`` marker; an unknown NAME is a ``KeyError`` naming the valid
    ones."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in GENERATORS:
            raise KeyError(f"unknown docs marker {name!r}; valid: {', '.join(GENERATORS)}")
        return GENERATORS[name]()

    return OUTSIDE_LINK.sub(_outside_link, MARKER.sub(sub, markdown))


# ------------------------------------------------------------------------------------------ MkDocs hook
def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    try:
        return render(markdown)
    except (KeyError, ValueError) as e:
        from mkdocs.exceptions import PluginError

        raise PluginError(f"{page.file.src_path}: {e}") from e
