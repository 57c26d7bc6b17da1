#!/bin/bash
# Entrypoint of the Ascend trainer image: source the CANN environment (as the CANN base image's
# own entrypoint does), then run the command. Without it MindSpore cannot find libge_runner.so.
set -e
for env in /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh; do
  if [ -f "$env" ]; then
    # shellcheck disable=SC1090
    source "$env"
    break
  fi
done
exec "$@"
