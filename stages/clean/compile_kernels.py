"""`python -m stages.clean.compile_kernels`: compile the clean stage's numba kernels into numba's cache.

The kernels compile on first use in each environment (15-20 s on one slow core) and are then
loaded from the cache (NUMBA_CACHE_DIR, else __pycache__ beside the code) in under a second.
`make venv` and the clean image's build run this, so that no stage run pays for it.
"""

from __future__ import annotations

import time

from common.config import load_config
from stages.clean.signals import compute_signals
from stages.clean.spam import spam_matcher

# Enough lines for the navigation rule, repeated tokens for the repetition kernel, a spam literal.
SAMPLE = "\n".join(["Kiln compiles its clean kernels once.", "扫一扫 加微信 free money — now", "Index, 12"] * 4)


def main() -> None:
    start = time.perf_counter()
    compute_signals([SAMPLE, "中文的文本。"], spam_matcher(tuple(load_config().clean.spam_patterns)))
    print(f"clean kernels compiled or loaded from numba's cache in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
