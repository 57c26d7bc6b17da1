"""Refuse a MindSpore install whose native libraries are not built for the image's platform.

The aarch64 MindSpore wheel is tagged ``none-any``, so a resolver can install it on x86_64 (and
the reverse); this reads the ELF machine field of MindSpore's shared libraries.
Usage: python3 -m stages.train.check_wheel_arch amd64|arm64
"""

from __future__ import annotations

import struct
import sys
from importlib.util import find_spec
from pathlib import Path

ELF_MACHINES = {"amd64": 62, "arm64": 183}  # EM_X86_64, EM_AARCH64


def elf_machine(path: Path) -> int:
    """The e_machine field of an ELF file."""
    with open(path, "rb") as handle:
        header = handle.read(20)
    if header[:4] != b"\x7fELF":
        raise ValueError(f"{path} is not an ELF file")
    return struct.unpack("<H", header[18:20])[0]


def main(arch: str) -> int:
    spec = find_spec("mindspore")
    if spec is None or spec.origin is None:
        print("mindspore is not installed", file=sys.stderr)
        return 1
    libraries = sorted(Path(spec.origin).parent.glob("_c_expression*.so"))
    if not libraries:
        print("mindspore has no _c_expression library", file=sys.stderr)
        return 1
    found = elf_machine(libraries[0])
    if found != ELF_MACHINES[arch]:
        print(f"{libraries[0]} is built for ELF machine {found}, not {arch} ({ELF_MACHINES[arch]})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
