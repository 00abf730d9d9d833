#!/usr/bin/env bash
# The environment the verifiers adapter's tests run in (tests/training/test_verifiers_env.py runs them there).
# verifiers 0.4 pins mcp==2.0.0 and OpenEnv 0.10, in the serve extra, needs mcp<2, so no one environment holds
# both. This one sees the main environment's packages and adds verifiers and its mcp on top.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m venv --system-site-packages .venvs/verifiers
.venvs/verifiers/bin/python -m pip install --quiet -e ".[verifiers]"
