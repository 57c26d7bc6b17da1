"""The ablation's configuration section (`kiln ablate`)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from common.config_loader import Section

BUILT_IN_ARMS = {"raw": "ingest", "clean": "clean", "dedup": "dedup", "full": "mix"}


class ExtraArmConfig(Section):
    """An ablation arm of one's own: the pipeline rerun with ``set`` overrides, trained on ``stage``'s output."""

    stage: Literal["ingest", "clean", "dedup", "mix"] = "mix"
    """The stage whose output the arm trains on."""
    set: list[str] = Field(default_factory=list)
    """``--set KEY=VALUE`` overrides of the arm's pipeline run."""


class AblationConfig(Section):
    """`make ablation` / `kiln ablate`: the same small model trained on the output of successive stages."""

    arms: list[str] = Field(default_factory=lambda: list(BUILT_IN_ARMS))
    """`make ablation` / `kiln ablate`: the same model trained on the output of successive stages. Built-in arms and
    the stage output each trains on: raw (ingest: no repair, no filter, no dedup), clean, dedup, full (mix:
    category-balanced). raw is required (deltas are against it)."""
    extra_arms: dict[str, ExtraArmConfig] = Field(default_factory=dict)
    """Arms of your own: the pipeline rerun under DATA_DIR/ablation/pipelines/<name> with these overrides, trained
    on `stage`'s output, e.g. no_line_filters: {stage: mix, set: ["clean.line_filters.enabled=false"]}"""
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2])
    """Every arm is trained once per seed (model initialization and data order); at least 3."""
    tokens_per_run: int = Field(default=655_360, ge=1)
    """Training tokens of every run, rounded up to whole steps of global_batch x seq_len; each arm's documents are
    sampled (seeded) up to this many tokens, so no run sees a window twice."""
    train_config: str = "configs/ablation-train.yaml"
    """Trainer YAML of every run (model, optim, train sections: configs/ablation-train.yaml); train.steps is set
    from tokens_per_run and train.seed from seeds."""
    vocab_size: int = Field(default=8192, ge=258, le=65536)
    """The one tokenizer of every arm: a byte-level BPE of this many ids ..."""
    tokenizer_sample_bytes: int = Field(default=8 << 20, ge=1)
    """... trained on this many bytes of the dedup stage's output, every evaluation document removed."""
    heldout_documents: int = Field(default=200, ge=1)
    """The clean held-out set: this many documents the pipeline keeps (dedup's output, seeded), or the documents of
    heldout_path (JSONL with a text field, or a .txt file: one document per blank-line-separated block). Removed
    from every arm, with their near-duplicates."""
    heldout_path: str | None = None
    """A file of held-out documents of your own, used instead of the sample above (null: the sample)."""
    mc_path: str | None = None
    """A CMMLU- or C-Eval-layout CSV file, or a folder of them, scored on every run's last checkpoint."""
    eval_points: int = Field(default=5, ge=1)
    """Evaluations of the held-out set per run (the points of the curves)."""
    jobs: int = Field(default=2, ge=1)
    """Training runs at once, each with train.threads / jobs CPU operator threads (on 2 cores, two runs of one
    thread finish a run every 24 s where one run of two threads takes 30 s)."""
    seed: int = 1234
    """Seed of the held-out sample and of each arm's document sample."""

    @model_validator(mode="after")
    def _arms_known(self) -> AblationConfig:
        unknown = [a for a in self.arms if a not in BUILT_IN_ARMS]
        if unknown:
            raise ValueError(f"arms {unknown} are not built in ({list(BUILT_IN_ARMS)}); declare your own under "
                             "extra_arms")
        clash = sorted(set(self.extra_arms) & set(BUILT_IN_ARMS))
        if clash:
            raise ValueError(f"extra_arms {clash} reuse the name of a built-in arm")
        if "raw" not in self.arms:
            raise ValueError("arms must include raw: every other arm is compared with it")
        if len(set(self.arms)) != len(self.arms):
            raise ValueError(f"arms {self.arms} name an arm twice")
        badly_named = [name for name in self.extra_arms if not re.fullmatch(r"[A-Za-z0-9_]+", name)]
        if badly_named:
            raise ValueError(f"extra_arms {badly_named}: a name is letters, digits and _ (it names folders)")
        if len(self.seeds) < 3 or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds {self.seeds}: at least 3 different seeds, each once, give each arm its interval")
        return self
