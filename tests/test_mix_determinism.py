"""The mix plan's floats do not depend on the interpreter's hash seed (mix_summary.json is in the manifest)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO, child_env

PROBE = """
from stages.mix.plan import capped_allocation
shares = {f"s{i}": [0.1, 0.2, 0.3, 0.7, 0.11, 0.13][i % 6] / 7.3 for i in range(60)}
available = {name: [1.1, 0.3, 2.7, 0.05, 9.9][i % 5] for i, name in enumerate(shares)}
allocation, left = capped_allocation(100.0, shares, available, max_epochs=4.0)  # several capping rounds
print(repr(sorted(allocation.items())), repr(left))
"""


def test_capped_allocation_is_the_same_under_every_hash_seed():
    outputs = {
        subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env=child_env(PYTHONHASHSEED=str(seed)),
                       capture_output=True, text=True, check=True).stdout
        for seed in range(8)
    }
    assert len(outputs) == 1, outputs
