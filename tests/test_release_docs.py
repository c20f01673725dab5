"""The documentation site's generated tables (tools/docgen.py) agree with the env docstring and the code,
and every page is in the nav and linked from the README."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import smear_env.engine.observation as O
import smear_env.envs.aec as env_mod
from smear_env.core import actions as A

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import docgen  # noqa: E402

PAGES = sorted(p.name for p in (ROOT / "docs").glob("*.md"))


def test_every_marker_of_every_page_renders():
    seen = set()
    for page in PAGES:
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        seen |= set(docgen.MARKER.findall(text))
        out = docgen.render(text)
        assert "<!-- smear:" not in out, page
    wanted = {"env_actions", "env_observation", "env_options", "env_version_history", "config_reference"}
    assert wanted <= seen
    with pytest.raises(KeyError, match="unknown docs marker 'nope'"):
        docgen.render("<!-- smear:nope -->")


def test_action_table_matches_the_env_docstring():
    """The docstring's RST action table and the generated one give the same id ranges per decision."""
    row = r"^\s{4}(\d+(?: \.\. \d+)?)\s+(bidding|trump|discard|play)\s"
    doc_rows = re.findall(row, env_mod.__doc__, re.M)
    gen_rows = re.findall(r"^\| (\d+(?: \.\. \d+)?) \| (\w+) \|", docgen.env_actions(), re.M)
    assert doc_rows == gen_rows
    assert gen_rows[-1] == (f"{A.PLAY_ACTION_BASE} .. {A.NUM_ACTIONS - 1}", "play")


def test_observation_table_matches_describe_and_the_docstring_table():
    gen = re.findall(r"^\| `(\w+)` \| (\d+) \.\. (\d+) \|", docgen.env_observation(), re.M)
    described = [line.split() for line in O.describe().splitlines()[1:]]
    assert [(n, int(a), int(b)) for n, a, b in gen] == [(d[0], int(d[1]), int(d[3])) for d in described]
    assert [n for n, _, _ in gen] == [t[0] for t in O.TERMS]


def test_a_term_missing_from_the_observation_docstring_fails_the_build(monkeypatch):
    original = O.__doc__
    monkeypatch.setattr(O, "__doc__", original.replace("``stuck``", "``stuk``"))
    with pytest.raises(ValueError, match="'stuck' is missing"):
        docgen.env_observation()
    monkeypatch.setattr(O, "__doc__", re.sub(r"(``hand_sizes``\s+)4", r"\g<1>5", original))
    with pytest.raises(ValueError, match="'hand_sizes': the docstring says size 5, the code 4"):
        docgen.env_observation()


def test_env_sections_come_from_the_docstring():
    sections = docgen.env_doc_sections()
    for name in ("Agents", "Actions", "Observations", "State", "Options", "Seeding", "Version history"):
        assert name in sections, name
    rewards = docgen.env_rewards()
    assert '`reward="win"` (default)' in rewards and '`episode="hand"`' in rewards and "``" not in rewards
    with pytest.raises(ValueError, match="no section starting with Nope"):
        docgen._section("Nope")
    options = docgen.env_options()
    for name in ("kitty_size", "cap_defenders", "max_cycles", "episode", "reward", "render_mode"):
        assert f"| `{name}` |" in options, name
    assert "`10000`" in options and "`'win'`" in options


def test_links_out_of_docs_become_repository_paths():
    out = docgen.render("see [`x/y.py`](../x/y.py) and [the bot](../examples/b.py), [rules](RULES.md)")
    assert out == "see `x/y.py` and the bot (`examples/b.py`), [rules](RULES.md)"


def test_config_reference_is_help_config():
    from training.config import help_text
    from training.stages import stage_configs

    assert help_text(stage_configs()) in docgen.config_reference()


def test_every_page_is_in_the_nav_and_linked_from_the_readme():
    nav = (ROOT / "mkdocs.yml").read_text()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert re.search(rf":\s+{re.escape(page)}$", nav, re.M), f"docs/{page} is not in mkdocs.yml's nav"
        assert f"(docs/{page})" in readme, f"README.md does not link docs/{page}"
    assert "\nsite/\n" in (ROOT / ".gitignore").read_text()


def test_model_card_relative_links_become_paths_under_checkpoints():
    """A model card's relative link (e.g. a training curve next to it) is not a link the site could follow:
    the agents page shows it as a path under checkpoints/ (mkdocs --strict fails on a dangling link)."""
    page = docgen.render("<!-- smear:model_cards -->")
    for target in re.findall(r"\]\(([^)\s]+)\)", page):
        assert re.match(r"[a-z]+:|#", target), f"relative link {target!r} left in the agents page"
    if "scratch_20min_win_rate.png" in page:
        assert "`checkpoints/scratch_20min_win_rate.png`" in page
