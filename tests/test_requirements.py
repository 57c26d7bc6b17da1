"""The lock files: every pin carries the hashes installs check, and each image's lock is data.lock's pins."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

REQUIREMENTS = REPO / "requirements"
LOCKS = sorted([*REQUIREMENTS.glob("*.lock"), *REQUIREMENTS.glob("images/*.lock")])
DOCKERFILES = sorted([*REPO.glob("stages/*/Dockerfile"), REPO / "Dockerfile.ascend"])
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")


def _pins(lock: Path) -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) for every requirement of ``lock``."""
    pins: dict[str, tuple[str, int]] = {}
    name = None
    for line in lock.read_text().splitlines():
        if match := PIN.match(line):
            name = re.sub(r"[-_.]+", "-", match[1]).lower()
            pins[name] = (match[2], 0)
        elif name and line.strip().startswith("--hash=sha256:"):
            pins[name] = (pins[name][0], pins[name][1] + 1)
    return pins


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_pin_of_every_lock_carries_its_hashes(lock: Path):
    pins = _pins(lock)
    assert pins, f"{lock}: no pins"
    assert [name for name, (_, hashes) in pins.items() if hashes == 0] == []


@pytest.mark.parametrize("image", ["base", "clean", "dedup", "tokenize"])
def test_each_image_lock_holds_its_inputs_at_data_locks_versions(image: str):
    data = {name: version for name, (version, _) in _pins(REQUIREMENTS / "data.lock").items()}
    pins = _pins(REQUIREMENTS / "images" / f"{image}.lock")
    assert {name: version for name, (version, _) in pins.items() if data.get(name) != version} == {}
    inputs = {"base", image}
    wanted = {re.split(r"[\[=<>]", line.strip())[0].lower() for name in inputs
              for line in (REQUIREMENTS / "images" / f"{name}.in").read_text().splitlines()
              if line.strip() and not line.startswith("#")}
    assert wanted <= set(pins)


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: str(p.relative_to(REPO)))
def test_images_install_only_hash_checked_files(dockerfile: Path):
    """Every pip install in an image checks hashes, but a wheel the image builds itself: from hash-checked source,
    or Kiln's own from the build context, with nothing downloaded (no dependencies, no isolated build)."""
    text = dockerfile.read_text().replace("\\\n", " ")
    installs = [i.strip() for i in re.findall(r"pip (?:install|wheel) [^&;\n]*", text)]
    own = [i for i in installs if i.startswith("pip wheel") and i.endswith(" .")
           and "--no-deps" in i and "--no-build-isolation" in i]
    unchecked = [i for i in installs if "--require-hashes" not in i and "/wheels/" not in i and i not in own]
    assert unchecked == []
    for built in (i for i in installs if "/wheels/" in i and "install" in i):
        if "/wheels/kiln-" in built:
            assert own, built
        else:
            assert "pip wheel --no-cache-dir --no-deps --require-hashes" in text, built
