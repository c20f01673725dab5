#!/usr/bin/env bash
# Smoke test of the built wheel, as a new user gets it: install dist/smear_rl-*.whl (plus the locked torch,
# through constraints.txt) into a fresh virtual environment and run it from a folder outside the source
# tree: `smear-eval default heuristic --games 20` (the shipped agent by name), the README's PettingZoo
# snippet, and `smear-train` on a tiny config. Fails when the wheel is larger than its size budget.
#
#   tools/wheel_smoke.sh [PYTHON]     (make test-wheel; run `make dist` first)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${1:-python3}"
WHEEL_BUDGET_KB="${WHEEL_BUDGET_KB:-4096}"   # the size budget: CHANGELOG.md, "Wheel size"

shopt -s nullglob
wheels=("$ROOT"/dist/smear_rl-*.whl)
if [ "${#wheels[@]}" -ne 1 ]; then
    echo "error: expected exactly one dist/smear_rl-*.whl, found ${#wheels[@]} (run make dist)" >&2
    exit 1
fi
wheel="${wheels[0]}"
size_kb=$(( $(stat -c %s "$wheel") / 1024 ))
echo "wheel: $(basename "$wheel"), ${size_kb} KiB (budget ${WHEEL_BUDGET_KB} KiB)"
if [ "$size_kb" -gt "$WHEEL_BUDGET_KB" ]; then
    echo "error: the wheel is ${size_kb} KiB, over its budget of ${WHEEL_BUDGET_KB} KiB" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PYTHON" -m venv "$work/venv"
# --no-compile: byte-compiling all of torch at install costs ~40% of the install time, and the smoke test
# imports little of it. (pip's notes about this machine's local package folders are noise here.)
"$work/venv/bin/python" -m pip install --quiet --no-compile -c "$ROOT/constraints.txt" "$wheel" 2>&1 \
    | { grep -v '^WARNING: Location ' || true; }

cd "$work"   # outside the source tree: nothing below may import from the clone
py="$work/venv/bin/python"
"$py" - <<'PY'
import smear_env, training
from smear_env.agents.shipped import shipped_dir
for mod in (smear_env, training):
    assert "site-packages" in mod.__file__, f"{mod.__name__} imported from {mod.__file__}, not the wheel"
assert "site-packages" in str(shipped_dir()), shipped_dir()
from smear_env.play.cli import shipped_agent_path  # smear-play's default partner and opponents
assert "site-packages" in (shipped_agent_path() or ""), shipped_agent_path()
print("installed:", smear_env.__version__, "shipped agents in", shipped_dir())
PY

echo "== smear-eval default heuristic --games 20"
"$work/venv/bin/smear-eval" default heuristic --games 20 --seed 0

echo "== the README's PettingZoo snippet"
# the first python block after the heading "## The PettingZoo environment"
awk '/^## The PettingZoo environment/{s=1} s&&/^```python/{f=1;next} f&&/^```/{exit} f' "$ROOT/README.md" \
    > "$work/snippet.py"
test -s "$work/snippet.py" || { echo "error: no python block under '## The PettingZoo environment'" >&2; exit 1; }
"$py" "$work/snippet.py"
echo "snippet ok ($(wc -l < "$work/snippet.py") lines)"

echo "== smear-train on a tiny config"
cat > "$work/tiny.yaml" <<'YAML'
default:
  total_timesteps: 600
  n_envs: 8
  seed: 0
  rules: {target_score: 5}
  algorithm: {name: ppo, n_steps: 32, batch_size: 128, n_epochs: 1}
  network: {hidden_sizes: [32]}
  imitation: {teacher: null}
  eval: {interval: 0, games: 4, opponents: [random]}
  output: {checkpoint_interval: 1_000, progress: false, tensorboard: false}
YAML
"$work/venv/bin/smear-train" --config "$work/tiny.yaml" --run-dir "$work/run"
test -f "$work/run/checkpoints/latest.safetensors"
"$work/venv/bin/smear-eval" "$work/run/checkpoints/latest.safetensors" random --games 4 --target-score 5
echo "wheel smoke test: ok"
