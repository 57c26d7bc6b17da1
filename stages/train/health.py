"""Training health: skipped-step accounting, loss-spike detection and grad-norm band warnings.

Pure Python and numpy, so it can be tested and checkpointed without MindSpore; the thresholds are
:class:`stages.train.config.HealthConfig`.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from common.errors import KilnError
from stages.train.config import HealthConfig


class TrainingHealthError(KilnError):
    """Training cannot usefully continue (repeated non-finite steps or a persisting loss spike)."""


class HealthMonitor:
    """Watches each step's loss, grad norm (before clipping) and whether the update was applied."""

    def __init__(self, config: HealthConfig | None = None) -> None:
        self.config = config or HealthConfig()
        self.skipped_total = 0
        self.consecutive_skips = 0
        self.spike_streak = 0
        self.last_band_warning_step: int | None = None
        self._losses: deque[float] = deque(maxlen=self.config.spike_window)
        self._grad_norms: deque[float] = deque(maxlen=self.config.band_window)

    def observe(self, step: int, loss: float, grad_norm: float, applied: bool) -> list[str]:
        """Record one step and return its warnings; raise :class:`TrainingHealthError` to stop."""
        finite = math.isfinite(loss) and math.isfinite(grad_norm)
        if not applied or not finite:
            return self._observe_skip(step, loss, grad_norm)
        self.consecutive_skips = 0
        warnings = self._observe_loss(step, loss)
        warnings += self._observe_grad_norm(step, grad_norm)
        return warnings

    def _observe_skip(self, step: int, loss: float, grad_norm: float) -> list[str]:
        self.skipped_total += 1
        self.consecutive_skips += 1
        limit = self.config.max_consecutive_skips
        if self.consecutive_skips >= limit:
            raise TrainingHealthError(
                f"training stopped at step {step}: {self.consecutive_skips} consecutive steps were skipped "
                f"because the loss or gradient norm was not finite (last loss={loss}, grad norm={grad_norm}; "
                f"{self.skipped_total} skipped in total). Check the data, or lower optim.lr and rerun with "
                f"--restart (a resume keeps the optimizer settings of its checkpoint).")
        return [f"step {step}: update skipped, non-finite loss={loss} or grad norm={grad_norm} "
                f"({self.consecutive_skips}/{limit} consecutive, {self.skipped_total} in total)"]

    def _observe_loss(self, step: int, loss: float) -> list[str]:
        cfg = self.config
        if len(self._losses) < cfg.spike_min_history:
            self._losses.append(loss)
            return []
        history = np.asarray(self._losses, dtype=np.float64)
        mean = float(history.mean())
        scale = max(float(history.std()), 1e-3 * abs(mean), 1e-12)
        zscore = (loss - mean) / scale
        if zscore <= cfg.spike_zscore:
            self.spike_streak = 0
            self._losses.append(loss)
            return []
        self.spike_streak += 1
        if self.spike_streak >= cfg.spike_patience:
            raise TrainingHealthError(
                f"training stopped at step {step}: the loss has spiked for {self.spike_streak} consecutive "
                f"steps (loss={loss:.4g}, z-score {zscore:.1f} > {cfg.spike_zscore} against a mean of "
                f"{mean:.4g} over the last {len(history)} steps). Check the data, or lower optim.lr and rerun "
                f"with --restart (a resume keeps the optimizer settings of its checkpoint).")
        return [f"step {step}: loss spike {loss:.4g} (z-score {zscore:.1f} against a mean of {mean:.4g} over "
                f"{len(history)} steps); {self.spike_streak}/{cfg.spike_patience} before stopping"]

    def _observe_grad_norm(self, step: int, grad_norm: float) -> list[str]:
        cfg = self.config
        self._grad_norms.append(grad_norm)
        if len(self._grad_norms) < cfg.band_window:
            return []
        last = self.last_band_warning_step
        if last is not None and step - last < cfg.band_window:
            return []
        median = float(np.median(np.asarray(self._grad_norms, dtype=np.float64)))
        if median < cfg.warn_low:
            advice = "the learning rate may be too small"
        elif median > cfg.warn_high:
            advice = "consider more clipping (a lower clip norm) or a lower learning rate"
        else:
            return []
        self.last_band_warning_step = step
        return [f"step {step}: median grad norm {median:.3g} over the last {cfg.band_window} steps is outside "
                f"the healthy band {cfg.healthy_low:g}-{cfg.healthy_high:g}; {advice}"]

    def state_dict(self) -> dict[str, Any]:
        """The monitor's counters and windows, under ``health`` in the trainer state."""
        return {"health": {
            "skipped_total": self.skipped_total,
            "consecutive_skips": self.consecutive_skips,
            "spike_streak": self.spike_streak,
            "last_band_warning_step": self.last_band_warning_step,
            "losses": list(self._losses),
            "grad_norms": list(self._grad_norms),
        }}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`state_dict`."""
        health = state["health"]
        self.skipped_total = int(health["skipped_total"])
        self.consecutive_skips = int(health["consecutive_skips"])
        self.spike_streak = int(health["spike_streak"])
        last = health["last_band_warning_step"]
        self.last_band_warning_step = None if last is None else int(last)
        self._losses.clear()
        self._losses.extend(float(x) for x in health["losses"])
        self._grad_norms.clear()
        self._grad_norms.extend(float(x) for x in health["grad_norms"])
