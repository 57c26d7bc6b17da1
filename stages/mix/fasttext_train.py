"""Reproducible supervised fastText training.

fastText 0.9.3 initializes its input matrix in ten blocks, one per thread, so with ``thread=1`` only
the first tenth is drawn from the seeded generator and the rest keeps whatever the allocation held.
Memory fresh from the operating system is zero-filled, memory the process freed before is not, so a
model trained in a long-lived process differs from run to run (and can end in "Encountered NaN").
Training therefore runs in a fresh Python process whose large allocations are always fresh mappings
(glibc's ``MALLOC_MMAP_THRESHOLD_``): with one thread and a fixed seed it gives the same model byte
for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from common.errors import KilnError

# Allocations from this size up are served by fresh mappings, never by memory freed before.
MMAP_FROM_BYTES = 128 * 1024
_TRAIN = ("import json, sys; import fasttext; args = json.loads(sys.argv[1]); "
          "fasttext.train_supervised(input=args['input'], **args['params']).save_model(args['output'])")


def train_supervised(train_file: Path, model_file: Path, **params) -> None:
    """``fasttext.train_supervised(input=train_file, **params)`` in a fresh process, saved to ``model_file``."""
    args = json.dumps({"input": str(train_file), "output": str(model_file), "params": params})
    env = os.environ | {"MALLOC_MMAP_THRESHOLD_": str(MMAP_FROM_BYTES)}
    result = subprocess.run([sys.executable, "-c", _TRAIN, args], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise KilnError(f"mix.classifier: fastText training failed (exit status {result.returncode}): "
                        f"{result.stderr.strip()[-2000:]}")
