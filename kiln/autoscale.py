"""`kiln autoscale-demo`: the clean stage on a one-machine autoscaling Ray cluster, 0 -> N -> 0 clean workers.

Ray's fake multi-node provider plays the cloud: the head (no CPUs, like KubeRay's ``num-cpus: "0"``)
runs the autoscaler (v2), which starts a ``clean`` worker node, ``{CPU: 1, <resource>: 1}``, for each
clean task that waits, up to ``--max-workers``, and removes idle ones after ``--idle-timeout-s``.
Clean's tasks ask for the resource named by ``ray.stage_resources.clean``, the one the Kubernetes
RayJob's ``clean`` worker group declares; nothing else declares it, so exactly that group scales.
The command prints the worker count whenever it changes and a timeline at the end, and writes the
samples to ``DATA_DIR/_autoscale/timeline.json``.
"""

from __future__ import annotations

import argparse
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

from common.errors import KilnError
from common.files import atomic_write_json
from kiln.ray_nodes import RayNodes

HELP = "the clean stage on a one-machine autoscaling Ray cluster: 0 -> N -> 0 clean workers, printed over time"
DESCRIPTION = __doc__.split("\n\n", 1)[1]
HEAD_NODE_ID = "f" * 51 + "00000"
"""The fake provider's id of the head node (the recipe of Ray's fake multi-node tests)."""
SPARKS = " ▁▂▃▄▅▆▇█"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `kiln autoscale-demo`."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="a run whose ingest stage has finished (default: config data_dir); its clean/ is redone")
    parser.add_argument("--config", action="append", type=Path, default=[], metavar="FILE",
                        help="YAML file layered over configs/default.yaml (repeatable), also given to the clean stage")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                        help="override one config key (repeatable), also given to the clean stage")
    parser.add_argument("--max-workers", type=int, default=3, help="most clean worker nodes (maxReplicas; default 3)")
    parser.add_argument("--idle-timeout-s", type=float, default=6.0,
                        help="seconds an idle clean worker lives (idleTimeoutSeconds; default 6)")
    parser.add_argument("--settle-s", type=float, default=120.0,
                        help="how long to wait for the workers to return to 0 after clean (default 120)")


def autoscaler_config(port: int, resource: str, max_workers: int, idle_timeout_s: float) -> dict:
    """The fake provider's cluster config: a CPU-less head and one ``clean_worker`` node type, 0..max_workers."""
    return {
        "cluster_name": "kiln-autoscale-demo",
        "max_workers": max_workers,
        "provider": {
            # "external" with the module path: the wheel lacks the fake_multinode type's defaults file
            "type": "external",
            "module": "ray.autoscaler._private.fake_multi_node.node_provider.FakeMultiNodeProvider",
            "use_node_id_as_ip": True, "disable_node_updaters": True, "disable_launch_config_check": True,
            "launch_multiple": True, "head_node_id": HEAD_NODE_ID, "gcs_address": f"127.0.0.1:{port}",
        },
        "available_node_types": {
            "ray.head.default": {"resources": {"CPU": 0}, "node_config": {}, "max_workers": 0},
            "clean_worker": {"resources": {"CPU": 1, resource: 1}, "node_config": {},
                             "min_workers": 0, "max_workers": max_workers},
        },
        "head_node_type": "ray.head.default",
        "idle_timeout_minutes": idle_timeout_s / 60,
        "upscaling_speed": 1.0,
        # the keys the "external" provider type requires and has no defaults for
        "auth": {}, "docker": {}, "initialization_commands": [], "setup_commands": [], "head_setup_commands": [],
        "worker_setup_commands": [], "head_start_ray_commands": [], "worker_start_ray_commands": [],
        "file_mounts": {}, "cluster_synced_files": [], "file_mounts_sync_continuously": False,
        "rsync_exclude": [], "rsync_filter": [],
    }


def clean_workers(resource: str) -> int:
    """Alive nodes that declare ``resource``."""
    import ray

    return sum(1 for node in ray.nodes() if node["Alive"] and node["Resources"].get(resource))


def timeline(samples: list[dict], peak: int) -> str:
    """One character per sample, its height the worker count."""
    scale = max(peak, 1)
    return "".join(SPARKS[round(s["workers"] / scale * (len(SPARKS) - 1))] for s in samples)


def watch(clean: subprocess.Popen, resource: str, settle_s: float) -> list[dict]:
    """Sample the worker count each second while clean runs, then until it is back to 0 (or ``settle_s`` passed)."""
    start, samples, last, finished = time.monotonic(), [], None, None
    while True:
        running = clean.poll() is None
        if not running and finished is None:
            finished = time.monotonic()
        now = time.monotonic() - start
        workers = clean_workers(resource)
        samples.append({"t": round(now, 1), "workers": workers, "clean_running": running})
        if workers != last:
            print(f"  t={now:6.1f} s  clean workers {workers}  ({'clean running' if running else 'clean done'})",
                  flush=True)
            last = workers
        if not running and (workers == 0 or time.monotonic() - finished > settle_s):
            return samples
        time.sleep(1.0)


def run(args: argparse.Namespace) -> int:
    """Start the autoscaling cluster, run clean on it, print the worker count over time, stop the cluster."""
    from common.config import load_config
    from common.manifest import require_manifest

    cfg = load_config(args.config, args.overrides)
    data_dir = Path(args.data_dir or cfg.data_dir)

    try:
        require_manifest(data_dir / "ingest")
    except KilnError as err:
        raise KilnError(f"{err}; run the ingest stage first (e.g. `make data` or `kiln run --demo --data-dir "
                        f"{data_dir}`)") from None
    resource = cfg.ray.stage_resources.get("clean")
    if not resource:
        raise KilnError("ray.stage_resources has no entry for clean: its tasks would not ask for a resource that "
                        "only the clean worker group declares (set e.g. ray.stage_resources={clean: clean})")
    work = data_dir / "_autoscale"
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}  # nodes on 127.0.0.1 only
    env.pop("RAY_ADDRESS", None)
    head_env = {"RAY_FAKE_CLUSTER": "1", "AUTOSCALER_UPDATE_INTERVAL_S": "1", "RAY_enable_autoscaler_v2": "1",
                "RAY_CLOUD_INSTANCE_ID": HEAD_NODE_ID, "RAY_OVERRIDE_NODE_ID_FOR_TESTING": HEAD_NODE_ID}
    with RayNodes(env) as nodes:
        config_path = work / "autoscaler.json"  # JSON is YAML: `ray start --autoscaling-config` reads it
        atomic_write_json(config_path, autoscaler_config(nodes.port, resource, args.max_workers, args.idle_timeout_s))
        print(f"starting an autoscaling Ray head at {nodes.address} (fake multi-node provider, 0..{args.max_workers} "
              f"clean workers with {{CPU: 1, {resource}: 1}}, idle timeout {args.idle_timeout_s:g} s; config "
              f"{config_path})", flush=True)
        nodes.start_head(0, 90, f"--autoscaling-config={config_path}", env=head_env)
        import ray

        ray.init(address=nodes.address, logging_level=logging.WARNING, log_to_driver=False)
        command = [sys.executable, "-m", "stages.clean", "--data-dir", str(data_dir), "--force",
                   *(f"--config={c}" for c in args.config), "--set=ray.scale_on_demand=true",
                   *(f"--set={o}" for o in args.overrides)]
        print(f"running {' '.join(command[1:])} with RAY_ADDRESS={nodes.address}", flush=True)
        with open(work / "clean.log", "w", encoding="utf-8") as log:
            clean = subprocess.Popen(command, env={**env, "RAY_ADDRESS": nodes.address}, stdout=log, stderr=log)
            samples = watch(clean, resource, args.settle_s)
        ray.shutdown()
    peak = max(s["workers"] for s in samples)
    end = next((s["t"] for s in samples if not s["clean_running"]), samples[-1]["t"])
    atomic_write_json(work / "timeline.json", {"resource": resource, "max_workers": args.max_workers,
                                               "samples": samples})
    print(f"clean workers over {samples[-1]['t']:.0f} s (one mark per second, clean ended at {end:.0f} s): "
          f"[{timeline(samples, peak)}] peak {peak}, at the end {samples[-1]['workers']}")
    if clean.returncode != 0:
        print(f"error: the clean stage failed (exit {clean.returncode}); its log: {work / 'clean.log'}",
              file=sys.stderr)
        return clean.returncode
    if samples[-1]["workers"] != 0:
        print(f"error: {samples[-1]['workers']} clean workers still up {args.settle_s:g} s after clean",
              file=sys.stderr)
        return 1
    return 0
