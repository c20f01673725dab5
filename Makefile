# smear-rl set-up and everyday commands (GNU make). Needs only Python >= 3.11 on the machine.
#
#   make run    train the quickstart agent, then evaluate it against the heuristic and random baselines
#   make test   set up .venv (if needed) and run the fast tier of the test suite (-m "not slow")
#   make test-all  the whole test suite, the slow tests too (training runs, large statistical checks)
#   make test-slow the slow tier alone (CI runs make test, then make test-slow)
#   make fuzz   the fuzz tier alone, longer (SMEAR_FUZZ_EXAMPLES=500; the fast tier runs it small)
#   make lint   ruff check, then the import contract (.importlinter: layers, no cycles)
#   make bench  run every benchmarks/*.py
#   make dist   build the sdist and the wheel into dist/ (python -m build)
#   make test-wheel  install the wheel into a fresh venv and smoke-test it outside the source tree
#   make default-90  a default-style agent in about 57 minutes on 2 idle cores (the model card's "90-minute recipe")
#   make ladder  round robin of every agent, rated: docs/ladder.md (LADDER_ARGS="--scale 0.05": quick)
#   make docs   build the documentation site into site/ (mkdocs --strict: warnings are errors)
#   make test-rllib     RLlib venv (.venv-rllib, constraints/rllib.txt): the test suite + examples/rllib_ppo.py
#   make test-tianshou  Tianshou venv (.venv-tianshou): the test suite + examples/tianshou_dqn.py
#   make test-clients   TorchRL + PufferLib + skrl venv (.venv-clients, constraints/clients.txt): their client tests
#   make test-agilerl   AgileRL venv (.venv-agilerl, constraints/agilerl.txt): its client tests
#   make test-openspiel OpenSpiel venv (.venv-openspiel): python_smear's tests + examples/openspiel_nfsp.py
#   make test-frameworks  every framework venv: their integration tests, then every example (CI runs this)
#   make examples       every examples/*.py with a tiny budget, each in its framework's venv
#   make clean  remove caches and build output (make distclean also removes .venv)
#
# Everything is installed into .venv through constraints.txt (exact versions; the pin on torch keeps pip
# on the local CPU build instead of a multi-GB CUDA one).

SHELL := bash
.DEFAULT_GOAL := help

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)
VENV ?= .venv
BIN := $(VENV)/bin
RUN_DIR ?= runs/quickstart
EVAL_GAMES ?= 400
PYTEST_WORKERS ?= 2

# Reinstalled when the dependencies change, or when a package first appears (an editable install
# only maps the packages that existed when it was made).
STAMP := $(VENV)/.installed
STAMP_DEPS := pyproject.toml constraints.txt $(wildcard smear_env/__init__.py training/__init__.py)

.PHONY: default-90 help venv install run test test-all test-slow lint bench clean distclean browser dist test-wheel docs docs-serve \
	test-rllib test-tianshou test-clients test-agilerl test-openspiel test-frameworks examples

help:
	@sed -n 's/^#   make /  make /p' Makefile

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "error: no python3.11 or python3 on PATH (set PYTHON=...)" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
		|| { echo "error: $(PYTHON) is older than Python 3.11 (set PYTHON=...)" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

venv: $(BIN)/python

$(STAMP): $(STAMP_DEPS) | $(BIN)/python
	$(BIN)/python -m pip install -c constraints.txt -e '.[dev,bench]'
	@touch $@

install: $(STAMP)

# The quickstart's budget is learner decisions (configs/quickstart.yaml), not seconds: every machine trains the
# same agent, and these evaluations print the same figures everywhere (smear-eval --json: the same JSON but for
# its "seconds"). The evaluations go to results/quickstart.*.json, the files README.md quotes
# (tests/test_figures.py), or into RUN_DIR for another run folder.
RESULTS ?= $(if $(filter runs/quickstart,$(RUN_DIR)),results,$(RUN_DIR))
run: $(STAMP)
	$(BIN)/smear-train --config configs/quickstart.yaml --run-dir $(RUN_DIR) --overwrite
	@mkdir -p $(RESULTS)
	$(BIN)/smear-eval $(RUN_DIR)/checkpoints/latest.safetensors heuristic --games $(EVAL_GAMES) --json \
		> $(RESULTS)/quickstart.heuristic.json
	$(BIN)/smear-eval $(RUN_DIR)/checkpoints/latest.safetensors random --games $(EVAL_GAMES) --json \
		> $(RESULTS)/quickstart.random.json
	$(BIN)/python tools/figures.py show $(RESULTS)/quickstart.heuristic.json $(RESULTS)/quickstart.random.json

# The 90-minute recipe (checkpoints/README.md, "A 90-minute recipe"; configs/default.yaml, variant r90): the
# training cut to 24M decisions, four rounds of expert iteration, a win model, an advantage correction fitted
# against the heuristic and random, then 2,000 games against the heuristic. About 57 minutes on 2 idle cores;
# deterministic given its seeds. Run again after an interruption, it continues (the stages done are kept). The
# agent is $(R90)/stages/05-advantage/final.safetensors.
R90 ?= runs/default-90
default-90: $(STAMP)
	$(BIN)/smear-train --config configs/default.yaml --variant r90 --run-dir $(R90)

# smear-serve's browser tests drive Debian's chromium with chromedriver: installed here when missing (as
# root with apt-get; otherwise those tests skip and say why, unless SMEAR_REQUIRE_BROWSER is set).
browser:
	@if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing chromium and chromium-driver (apt-get) for the browser tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; \
		else echo "note: no chromium/chromedriver (apt-get install chromium chromium-driver): browser tests skip"; fi; \
	fi

# pytest exits 5 when it collects no tests; that is not a failure here. `make test` deselects the tests
# marked slow (tests/conftest.py: SLOW_TESTS and @pytest.mark.slow); SMEAR_SLOW_SCALE sizes them.
PYTEST_RUN = rc=0; $(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(1) $(PYTEST_ARGS) || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests (exit 5): treated as success"; rc=0; fi; \
	exit $$rc

test: $(STAMP) browser
	@$(call PYTEST_RUN,-m "not slow")

test-all: $(STAMP) browser
	@$(call PYTEST_RUN,)

# the slow tier alone (CI runs `make test`, then this)
test-slow: $(STAMP) browser
	@$(call PYTEST_RUN,-m slow)

# the property-based fuzz tier (tests/test_fuzz_*.py) on demand, with more examples than `make test` draws;
# SMEAR_FUZZ_SEED=N explores other examples than CI's fixed ones
.PHONY: fuzz
fuzz: $(STAMP)
	@export SMEAR_FUZZ_EXAMPLES=$${SMEAR_FUZZ_EXAMPLES:-500}; $(call PYTEST_RUN,$(wildcard tests/test_fuzz_*.py))

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

BENCHMARKS := $(sort $(filter-out benchmarks/_%,$(wildcard benchmarks/*.py)))
bench: $(STAMP)
	@set -e; for f in $(BENCHMARKS); do echo "== $$f"; $(BIN)/python $$f; done

# The build backend (hatchling) is installed into build's isolated environment through constraints.txt too.
dist: $(STAMP)
	rm -rf dist
	PIP_CONSTRAINT=$(CURDIR)/constraints.txt $(BIN)/python -m build --outdir dist .
	@ls -l dist

test-wheel: dist
	tools/wheel_smoke.sh $(PYTHON)

# The ladder (smear_env/evaluation/ladder.py): finished matches are kept in runs/ladder/matches.jsonl, so an
# interrupted ladder continues where it stopped.
LADDER_ARGS ?=
.PHONY: ladder
ladder: $(STAMP)
	$(BIN)/python -m smear_env.evaluation.ladder --cache runs/ladder/matches.jsonl --workers 2 \
		--references results/ladder-references.json $(LADDER_ARGS)

DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -c constraints.txt -e '.[dev,bench,docs]'
	@touch $@

# NO_MKDOCS_2_WARNING: silences mkdocs-material's banner about its successor (not a build warning).
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve
# Other RL frameworks: one venv each, installed through its own lock constraints/<name>.txt (ray[rllib] pins
# gymnasium 1.2.2, the main lock 1.4.0). Not part of `make test`.
.venv-%/.installed: pyproject.toml constraints/%.txt $(wildcard smear_env/__init__.py training/__init__.py)
	@test -n "$(PYTHON)" || { echo "error: no python3.11 or python3 on PATH (set PYTHON=...)" >&2; exit 1; }
	$(PYTHON) -m venv .venv-$*
	.venv-$*/bin/python -m pip install -c constraints/$*.txt -e '.[dev,$*]'
	@touch $@

# The Ray pool, dmc-on-Ray, two-node cluster and node-failure tests run in a pytest process of their own, one
# after another: in a process that ran the RLlib tests before them, their actors were found dead on creation
# ("all references to the actor were removed"); in their own process they pass.
RAY_POOL_TESTS := tests/test_distributed_pool.py tests/test_dmc_ray.py tests/test_ray_faults.py tests/test_ray_cluster.py

test-rllib: .venv-rllib/.installed
	.venv-rllib/bin/python -m pytest -n $(PYTEST_WORKERS) $(addprefix --ignore=,$(RAY_POOL_TESTS)) $(PYTEST_ARGS)
	.venv-rllib/bin/python -m pytest -n 0 $(RAY_POOL_TESTS)
	.venv-rllib/bin/python examples/rllib_ppo.py --iterations 1 --games 10

test-tianshou: .venv-tianshou/.installed
	.venv-tianshou/bin/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)
	.venv-tianshou/bin/python examples/tianshou_dqn.py --steps 1000

CLIENT_TESTS := tests/test_integrations_torchrl.py tests/test_integrations_pufferlib.py tests/test_integrations_skrl.py
test-clients: .venv-clients/.installed
	.venv-clients/bin/python -m pytest -n 0 $(CLIENT_TESTS)

test-agilerl: .venv-agilerl/.installed
	.venv-agilerl/bin/python -m pytest -n 0 tests/test_integrations_agilerl.py

test-openspiel: .venv-openspiel/.installed
	.venv-openspiel/bin/python -m pytest -n $(PYTEST_WORKERS) tests/test_integrations_openspiel.py $(PYTEST_ARGS)
	.venv-openspiel/bin/python examples/openspiel_nfsp.py --seconds 10 --eval-games 10

# CI: each framework's integration tests in its own venv (the whole suite there: test-rllib / test-tianshou),
# then every example.
test-frameworks: $(STAMP) .venv-rllib/.installed .venv-tianshou/.installed .venv-clients/.installed \
		.venv-agilerl/.installed .venv-openspiel/.installed
	.venv-rllib/bin/python -m pytest -n $(PYTEST_WORKERS) tests/test_integrations.py \
		tests/test_integrations_rllib.py tests/test_integrations_ray.py
	.venv-rllib/bin/python -m pytest -n 0 $(RAY_POOL_TESTS)
	.venv-tianshou/bin/python -m pytest -n $(PYTEST_WORKERS) tests/test_integrations.py \
		tests/test_integrations_tianshou.py
	.venv-clients/bin/python -m pytest -n 0 $(CLIENT_TESTS)
	.venv-agilerl/bin/python -m pytest -n 0 tests/test_integrations_agilerl.py
	.venv-openspiel/bin/python -m pytest -n $(PYTEST_WORKERS) tests/test_integrations_openspiel.py
	$(MAKE) examples

examples: $(STAMP) .venv-rllib/.installed .venv-tianshou/.installed .venv-openspiel/.installed
	$(BIN)/python examples/sb3_maskable_ppo.py --steps 2048
	$(BIN)/python examples/sb3_vector.py --steps 20000
	$(BIN)/python examples/cleanrl_ppo_vector.py --steps 20000
	.venv-tianshou/bin/python examples/tianshou_dqn.py --steps 1000
	.venv-rllib/bin/python examples/rllib_ppo.py --iterations 1 --games 10
	.venv-openspiel/bin/python examples/openspiel_nfsp.py --seconds 10 --eval-games 10

clean:
	rm -rf build dist site *.egg-info .pytest_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .venv-rllib .venv-tianshou .venv-clients .venv-agilerl .venv-openspiel
