"""`python -m stages.clean.compile_kernels`: compile the clean stage's numba kernels into numba's cache.

The kernels compile on first use in each environment (15-20 s on one slow core) and are then
loaded from the cache (NUMBA_CACHE_DIR, else __pycache__ beside the code) in under a second.
`make venv` and the clean image's build run this, so that no stage run pays for it; it says how
many kernels it had to compile (a kernel calling others compiles them too) and how many it loaded.
"""

from __future__ import annotations

import os
import time

from numba.core.registry import CPUDispatcher

from common.config import load_config
from stages.clean import batch_text, char_counts, lines, navigation, pii, repetition, spam
from stages.clean.signals import compute_signals

KERNEL_MODULES = (batch_text, char_counts, lines, navigation, pii, repetition, spam)
# Enough lines for the navigation rule, repeated tokens for the repetition kernel, a spam literal, a price.
SAMPLE = "\n".join(["Kiln compiles its clean kernels once.", "扫一扫 加微信 free money — now ¥99", "Index, 12"] * 4)


def kernels() -> list[CPUDispatcher]:
    """Every numba kernel of the clean stage."""
    return [value for module in KERNEL_MODULES for value in vars(module).values() if isinstance(value, CPUDispatcher)]


def main() -> None:
    start = time.perf_counter()
    clean = load_config().clean
    matcher = spam.spam_matcher(tuple(clean.spam_patterns))
    compute_signals([SAMPLE, "中文的文本。"], matcher)
    lines.filter_lines([SAMPLE], matcher, clean.line_filters)
    pii.find_pii([SAMPLE], clean.pii.kinds)
    seconds = time.perf_counter() - start
    found = kernels()
    loaded = sum(sum(kernel.stats.cache_hits.values()) for kernel in found)
    compiled = sum(sum(kernel.stats.cache_misses.values()) for kernel in found)
    where = os.environ.get("NUMBA_CACHE_DIR") or "__pycache__ beside the code"
    if compiled:
        print(f"clean kernels: {compiled} compiled, {loaded} loaded from numba's cache ({where}), in {seconds:.1f} s")
    else:
        print(f"clean kernels: all {loaded} loaded from numba's cache ({where}) in {seconds:.1f} s")


if __name__ == "__main__":
    main()
