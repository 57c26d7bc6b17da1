#!/usr/bin/env bash
# Re-resolve requirements/*.in into the exact, complete pins of requirements/*.lock, each pin with the
# sha256 of every file PyPI has for it (installs run in hash-checking mode), and derive each data-stage
# image's lock (requirements/images/*.lock) from data.lock.
# Usage: requirements/lock.sh [python]   (run from the repository root; needs PyPI)
set -euo pipefail
python=${1:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
pip="$tmp/venv/bin/pip"
"$pip" install -q --upgrade pip
"$pip" install -q --no-deps --require-hashes -r requirements/bootstrap.lock
"$pip" install -q -r requirements/data.in
"$pip" install -q --no-deps -r requirements/nodeps.in
"$pip" freeze --all --exclude pip --exclude uv | LC_ALL=C sort > "$tmp/data.pins"
"$pip" install -q -r requirements/dev.in
"$pip" freeze --all --exclude pip --exclude uv | LC_ALL=C sort | comm -23 - "$tmp/data.pins" > "$tmp/dev.pins"

# hashed OUT IN...: IN's exact pins (no resolution) with every file's hash
hashed() {
  local out=$1; shift
  "$tmp/venv/bin/uv" pip compile --quiet --no-deps --generate-hashes --no-annotate \
    --custom-compile-command "make lock" --python-version 3.11 -o "$out" "$@"
}
hashed requirements/data.lock "$tmp/data.pins"
hashed requirements/dev.lock "$tmp/dev.pins"
hashed requirements/nodeps.lock requirements/nodeps.in

# Each image installs exactly its lock (resolved from base.in and its own .in within data.lock's pins).
for image in base clean dedup tokenize; do
  inputs=(requirements/images/base.in)
  [ "$image" = base ] || inputs+=("requirements/images/$image.in")
  "$tmp/venv/bin/uv" pip compile --quiet --generate-hashes --no-annotate --custom-compile-command "make lock" \
    --python-version 3.11 -c requirements/data.lock -o "requirements/images/$image.lock" "${inputs[@]}"
done
echo "wrote requirements/data.lock ($(grep -c '^[^ #]' requirements/data.lock) pins), dev.lock" \
     "($(grep -c '^[^ #]' requirements/dev.lock) pins), nodeps.lock and requirements/images/*.lock, with hashes"
