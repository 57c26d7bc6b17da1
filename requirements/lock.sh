#!/usr/bin/env bash
# Re-resolve requirements/*.in into the exact, complete pins of requirements/*.lock, each pin with the
# sha256 of every file PyPI has for it (installs run in hash-checking mode).
#   data:  data.lock, dev.lock, nodeps.lock, and each data-stage image's lock (requirements/images/*.lock)
#          derived from data.lock (make lock)
#   train: train.lock, the trainer's environment (make train-lock)
# Usage: requirements/lock.sh data|train [python]   (run from the repository root; needs PyPI)
set -euo pipefail
what=${1:?usage: requirements/lock.sh data|train [python]}
command="make lock"
[ "$what" = train ] && command="make train-lock"
python=${2:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python" -m venv "$tmp/venv"
pip="$tmp/venv/bin/pip"
"$pip" install -q --upgrade pip
"$pip" install -q --no-deps --require-hashes -r requirements/bootstrap.lock

# The environment's exact pins, sorted, without the installers themselves.
freeze() { "$pip" freeze --all --exclude pip --exclude uv "$@" | LC_ALL=C sort; }

# hashed OUT IN...: IN's exact pins (no resolution) with every file's hash
hashed() {
  local out=$1; shift
  "$tmp/venv/bin/uv" pip compile --quiet --no-deps --generate-hashes --no-annotate \
    --custom-compile-command "$command" --python-version 3.11 -o "$out" "$@"
}

case "$what" in
  train)
    "$pip" install -q -r requirements/train.in
    freeze --exclude setuptools > "$tmp/train.pins"
    hashed requirements/train.lock "$tmp/train.pins"
    echo "wrote requirements/train.lock ($(grep -c '^[^ #]' requirements/train.lock) pins), with hashes"
    ;;
  data)
    "$pip" install -q -r requirements/data.in
    "$pip" install -q --no-deps -r requirements/nodeps.in
    freeze > "$tmp/data.pins"
    "$pip" install -q -r requirements/dev.in
    freeze | comm -23 - "$tmp/data.pins" > "$tmp/dev.pins"
    hashed requirements/data.lock "$tmp/data.pins"
    hashed requirements/dev.lock "$tmp/dev.pins"
    hashed requirements/nodeps.lock requirements/nodeps.in
    # Each image installs exactly its lock (resolved from base.in and its own .in within data.lock's pins).
    for image in base clean dedup tokenize; do
      inputs=(requirements/images/base.in)
      [ "$image" = base ] || inputs+=("requirements/images/$image.in")
      "$tmp/venv/bin/uv" pip compile --quiet --generate-hashes --no-annotate --custom-compile-command "$command" \
        --python-version 3.11 -c requirements/data.lock -o "requirements/images/$image.lock" "${inputs[@]}"
    done
    echo "wrote requirements/data.lock ($(grep -c '^[^ #]' requirements/data.lock) pins), dev.lock" \
         "($(grep -c '^[^ #]' requirements/dev.lock) pins), nodeps.lock and requirements/images/*.lock, with hashes"
    ;;
  *) echo "requirements/lock.sh: unknown lock set '$what' (data or train)" >&2; exit 2 ;;
esac
