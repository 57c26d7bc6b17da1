#!/usr/bin/env bash
# Build the images that stand in for the public Python base where no registry can be reached:
# local/debian:bookworm from Debian's mirror with debootstrap, then local/python:3.11-bookworm
# (python3 + venv + CA certificates, like python:3.11-slim-bookworm). Each is built only when
# `docker image inspect` does not find it. Usage: stages/base/local-base.sh [docker]
set -euo pipefail
docker=${1:-docker}
debian=local/debian:bookworm
python=local/python:3.11-bookworm

if ! "$docker" image inspect "$debian" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { echo "local-base.sh: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  echo "building $debian with debootstrap (about 90 s)" >&2
  debootstrap --variant=minbase bookworm "$root" >/dev/null
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | "$docker" import - "$debian" >/dev/null
fi

if ! "$docker" image inspect "$python" >/dev/null 2>&1; then
  echo "building $python" >&2
  "$docker" build --network host -t "$python" - >/dev/null <<DOCKERFILE
FROM $debian
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/* && ln -s /usr/bin/python3 /usr/local/bin/python
DOCKERFILE
fi
echo "$python"
