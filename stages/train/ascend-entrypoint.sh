#!/bin/bash
# Entrypoint of the Ascend trainer image: source the CANN environment (as the CANN base image's
# own entrypoint does), set what HCCL needs from the pod, then run the command. Without CANN's
# environment MindSpore cannot find libge_runner.so.
set -e
for env in /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh; do
  if [ -f "$env" ]; then
    # shellcheck disable=SC1090
    source "$env"
    break
  fi
done
# HCCL's and Gloo's host-side sockets use the pod's own interface, the one of its default route
# (eth0 on most CNIs, net1 or another under Multus), unless the pod sets HCCL_SOCKET_IFNAME.
if [ -z "${HCCL_SOCKET_IFNAME:-}" ]; then
  iface=$(awk '$2 == "00000000" { print $1; exit }' /proc/net/route 2>/dev/null || true)
  if [ -n "$iface" ]; then
    export HCCL_SOCKET_IFNAME="$iface"
  fi
fi
if [ -z "${GLOO_SOCKET_IFNAME:-}" ] && [ -n "${HCCL_SOCKET_IFNAME:-}" ]; then
  export GLOO_SOCKET_IFNAME="$HCCL_SOCKET_IFNAME"
fi
# HCCL registers its buffers with the NIC: locked memory as high as the pod's hard limit allows
# (Kubernetes has no ulimit field; the container runtime sets the hard limit).
ulimit -S -l "$(ulimit -H -l)" 2>/dev/null || true
exec "$@"
