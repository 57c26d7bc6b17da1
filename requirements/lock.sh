#!/usr/bin/env bash
# Re-resolve requirements/*.in into the exact, complete pins of requirements/*.lock.
# Usage: requirements/lock.sh [python]   (run from the repository root; needs PyPI)
set -euo pipefail
python=${1:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
pip="$tmp/venv/bin/pip"
"$pip" install -q --upgrade pip
"$pip" install -q -r requirements/data.in
"$pip" install -q --no-deps -r requirements/nodeps.in
"$pip" freeze --all --exclude pip --exclude setuptools | LC_ALL=C sort > requirements/data.lock
"$pip" install -q -r requirements/dev.in
"$pip" freeze --all --exclude pip --exclude setuptools | LC_ALL=C sort | comm -23 - requirements/data.lock > requirements/dev.lock
echo "wrote requirements/data.lock ($(wc -l < requirements/data.lock) pins) and requirements/dev.lock ($(wc -l < requirements/dev.lock) pins)"
