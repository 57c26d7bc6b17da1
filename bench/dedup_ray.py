"""Bench worker: Ray start-up as the dedup stage pays it, on one core, with no dedup work.

Usage (started by bench/dedup.py under taskset): dedup_ray.py RESULT.json --core N

Starts a local Ray exactly as the stage does (``ensure_ray`` with ``ray.num_cpus=1``), runs one
no-op task (so a worker process is started), and exits, which shuts Ray down. The driver times
the whole command; the parts are recorded here.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from measure import worker_args, write_result


def noop() -> int:
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("result", type=Path)
    args = worker_args(parser)
    seconds = {}
    start = time.perf_counter()
    import ray

    from common.config import load_config
    from common.ray_cluster import ensure_ray

    seconds["import"] = time.perf_counter() - start
    start = time.perf_counter()
    ensure_ray(load_config(overrides=["ray.num_cpus=1"]).ray)
    seconds["init"] = time.perf_counter() - start
    start = time.perf_counter()
    ray.get(ray.remote(num_cpus=1)(noop).remote())
    seconds["first_task"] = time.perf_counter() - start
    write_result(args.result, {"parts_s": seconds})


if __name__ == "__main__":
    main()
