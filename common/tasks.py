"""Running functions as Ray tasks (on the local Ray or a cluster): ``run_tasks`` with its progress bar,
failure and lost-worker handling, and the watch that fails a run whose tasks no node could ever schedule."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable

from common.config import KilnConfig
from common.errors import KilnError
from common.faults import fault_point
from common.files import is_disk_full
from common.log import progress
from common.ray_cluster import ensure_ray, unschedulable

TaskRunner = Callable[..., list]
"""``run_tasks``'s shape: (fn, calls, cfg, desc, log, point) -> the results, for steps that accept another runner."""


def _cancel(refs: list) -> None:
    """Cancel the tasks of ``refs`` and wait until they have ended (so none still writes), fetching each
    outcome so that Ray does not report their errors as unhandled."""
    import ray

    for ref in refs:
        ray.cancel(ref, force=True)
    ended, _ = ray.wait(refs, num_returns=len(refs), timeout=60) if refs else ([], [])
    for ref in ended:
        with contextlib.suppress(ray.exceptions.RayError):
            ray.get(ref)


SCHEDULING_CHECK_S = 2.0
"""How often ``run_tasks`` looks whether the cluster could run its waiting tasks at all."""


class _SchedulingWatch:
    """Tells when tasks of ``shape`` have had no node of the cluster that could ever run them for ``timeout_s``."""

    def __init__(self, shape: dict[str, float], timeout_s: float, desc: str):
        self.shape, self.timeout_s, self.desc = shape, timeout_s, desc
        self.since: float | None = None

    def problem(self) -> str | None:
        """None while some node could run the tasks (or for less than ``timeout_s`` none could), else why not."""
        missing = unschedulable(self.shape)
        if missing is None:
            self.since = None
            return None
        self.since = self.since or time.monotonic()
        if time.monotonic() - self.since < self.timeout_s:
            return None
        custom = [name for name in missing if name != "CPU"]
        if custom:
            how = (f"declare it on the nodes meant for {self.desc} (`ray start --resources='{{\"{custom[0]}\": "
                   f"<CPUs>}}'`, a KubeRay worker group's `resources: {{{custom[0]}: \"<CPUs>\"}}`), or set "
                   f"ray.scale_on_demand=false so that {self.desc} runs on any node")
        elif missing:
            how = "add a node with CPUs (`ray start --address=<head> --num-cpus=<n>`)"
        else:
            how = "add a node that declares all of them"
        return (f"{self.desc}: no node of the Ray cluster could run its tasks, which each ask for {self.shape}, for "
                f"{self.timeout_s:g} s (ray.unschedulable_timeout_s): no live node declares "
                f"{' or '.join(map(repr, missing)) or 'all of them at once'}; {how}")


def run_tasks(fn: Callable, calls: list[tuple], cfg: KilnConfig, desc: str, log: logging.Logger, point: str,
              on_result: Callable[[object], str | None] | None = None, resource: str | None = None) -> list:
    """Run ``fn(*args)`` for every args tuple in ``calls`` as Ray tasks (one CPU each), with a
    progress bar; results come back in completion order. A failure cancels the rest and is
    raised as a KilnError naming the call; a task whose worker died is rerun up to
    ``ray.task_retries`` times. ``on_result`` may return a progress note. Each
    result passes the fault point ``<point>.done`` (see common/faults.py). With ``resource``
    each task also asks for one unit of that custom Ray resource. Tasks that no node of the cluster
    could run for ``ray.unschedulable_timeout_s`` fail the call with a KilnError saying what is missing."""
    import ray

    ensure_ray(cfg.ray)
    remote = ray.remote(num_cpus=1, max_retries=cfg.ray.task_retries,
                        resources={resource: 1} if resource else None)(fn)
    refs = {remote.remote(*args): args for args in calls}
    watch = _SchedulingWatch({"CPU": 1, **({resource: 1} if resource else {})}, cfg.ray.unschedulable_timeout_s,
                             desc)
    results = []
    with progress(len(refs), desc, unit="task") as bar:
        waiting = list(refs)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1, timeout=SCHEDULING_CHECK_S)
            if not done:
                if problem := watch.problem():
                    _cancel(waiting)
                    raise KilnError(problem)
                continue
            try:
                result = ray.get(done[0])
            except ray.exceptions.RayTaskError as err:
                _cancel(waiting)
                cause = err.cause if isinstance(err.cause, Exception) else err
                if isinstance(cause, KilnError) or is_disk_full(cause):
                    raise cause from None
                log.debug("task failed", exc_info=err)
                raise KilnError(f"{desc}: task {refs[done[0]][-1]} failed: {cause!r}") from None
            except ray.exceptions.RayError as err:  # its worker or node died on every try
                _cancel(waiting)
                raise KilnError(f"{desc}: task {refs[done[0]][-1]} was lost {cfg.ray.task_retries + 1} times "
                                f"(ray.task_retries={cfg.ray.task_retries}): {type(err).__name__}: "
                                f"{str(err).splitlines()[0] if str(err) else ''}; finished units are kept, "
                                "rerun to go on") from None
            results.append(result)
            fault_point(f"{point}.done")
            note = on_result(result) if on_result else None
            if note:
                bar.set_postfix_str(note)
            bar.update(1)
    return results
