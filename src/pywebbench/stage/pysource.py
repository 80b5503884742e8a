"""CPython's upstream source tarball from the Debian mirror apt already uses, without the internet.

Debian's source package python3.X carries the release tarball unchanged as
python3.X_3.X.N.orig.tar.xz in the pool. Which N: the Sources indexes of unstable and testing name
the newest (with its SHA-256); a mirror may still serve older ones the indexes no longer list
(their SHA-256 is read from the .dsc beside them), so a few patch levels below are tried too.
Every tarball is checked against a SHA-256 from the mirror before it is used.
"""

from __future__ import annotations

import hashlib
import lzma
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError

SOURCES_FILES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
SUITES = ("unstable", "testing")
TIMEOUT_S = 60.0
LOWER_PATCHES = 6  # how far below the indexes' newest patch level to look for a tarball still served
MIRROR_ENV = "PYWEBBENCH_DEBIAN_MIRROR"


@dataclass(frozen=True)
class Tarball:
    version: str  # "3.14.7"
    url: str
    sha256: str
    checked_by: str  # where the SHA-256 came from: "the unstable Sources index" or "the .dsc"


def debian_mirror(files: tuple[Path, ...] = SOURCES_FILES) -> str | None:
    """The first Debian archive URI apt is configured with (security mirrors aside)."""
    configured = os.environ.get(MIRROR_ENV)
    if configured:
        return configured.rstrip("/")
    paths: list[Path] = []
    for path in files:
        paths += sorted(path.iterdir()) if path.is_dir() else [path]
    for path in paths:
        if path.suffix not in (".list", ".sources") or not path.is_file():
            continue
        for uri in re.findall(r"(?:^deb(?:-src)?\s+(?:\[[^]]*\]\s+)?|^URIs:\s*)(\S+)", path.read_text(), re.M):
            if uri.startswith(("http://", "https://")) and uri.rstrip("/").endswith("/debian"):
                return str(uri).rstrip("/")
    return None


def index_entries(text: str, package: str) -> dict[str, str]:
    """{orig tarball name: sha256} of `package`'s stanza in a Sources index (or a .dsc)."""
    found: dict[str, str] = {}
    for stanza in text.split("\n\n"):
        if not re.search(rf"^(Package|Source): {re.escape(package)}$", stanza, re.M):
            continue
        block = re.search(r"^Checksums-Sha256:\n((?: .*\n?)+)", stanza, re.M)
        for line in (block.group(1) if block else "").splitlines():
            digest, _size, name = line.split()
            if name.endswith(".orig.tar.xz"):
                found[name] = digest
    return found


def _version_of(name: str) -> tuple[int, ...]:
    match = re.search(r"_(\d+)\.(\d+)\.(\d+)\.orig", name)
    return tuple(int(g) for g in match.groups()) if match else (0,)


def _get(url: str) -> bytes | None:
    """The body at url, or None when the mirror says it has no such file."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as answer:
            body: bytes = answer.read()
            return body
    except urllib.error.HTTPError as exc:
        if exc.code in (403, 404, 410):
            return None
        raise UserError(f"{url}: the mirror answered {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise UserError(f"cannot reach the Debian mirror ({url}): {exc}") from None


def candidates(mirror: str, minor: str) -> list[Tarball]:
    """The tarballs of python3.<minor> the mirror may serve, newest first, each with its SHA-256's
    origin; those the indexes list first, then lower patch levels by their .dsc (checked on use)."""
    package = f"python3.{minor}"
    listed: dict[str, tuple[str, str]] = {}
    for suite in SUITES:
        raw = _get(f"{mirror}/dists/{suite}/main/source/Sources.xz")
        if raw is None:
            continue
        for name, digest in index_entries(lzma.decompress(raw).decode(errors="replace"), package).items():
            listed.setdefault(name, (digest, f"the {suite} Sources index"))
    pool = f"{mirror}/pool/main/p/{package}"
    found = [Tarball(".".join(map(str, _version_of(n))), f"{pool}/{n}", d, by) for n, (d, by) in listed.items()]
    found.sort(key=lambda t: _version_of(t.url), reverse=True)
    newest = _version_of(found[0].url)[2] if found else LOWER_PATCHES
    known = {t.version for t in found}
    for patch in range(newest - 1, max(-1, newest - 1 - LOWER_PATCHES), -1):
        version = f"3.{minor}.{patch}"
        if version not in known:
            found.append(Tarball(version, f"{pool}/{package}_{version}.orig.tar.xz", "", "the .dsc"))
    return found


def _dsc_digest(tarball: Tarball) -> str | None:
    """The orig tarball's SHA-256 from the .dsc of its first Debian revision the mirror serves."""
    base = tarball.url.removesuffix(".orig.tar.xz")
    package = base.rsplit("/", 1)[1].split("_")[0]
    for revision in (1, 2, 3):
        text = _get(f"{base}-{revision}.dsc")
        if text is not None:
            return index_entries(text.decode(errors="replace"), package).get(tarball.url.rsplit("/", 1)[1])
    return None


def fetch_tarball(minor: str, into: Path, mirror: str | None = None) -> tuple[Path, Tarball]:
    """The newest tarball of CPython 3.<minor> the mirror serves, downloaded into `into` (or
    already there) and checked; a one-line UserError saying why when there is none."""
    mirror = mirror or debian_mirror()
    if mirror is None:
        raise UserError(f"no Debian mirror in /etc/apt/sources.list*: set {MIRROR_ENV}=URL or give --source FILE")
    into.mkdir(parents=True, exist_ok=True)
    for tarball in candidates(mirror, minor):
        path = into / tarball.url.rsplit("/", 1)[1]
        digest = tarball.sha256 or (_dsc_digest(tarball) if path.exists() or _exists(tarball.url) else None)
        if not digest:
            continue
        if not (path.exists() and _sha256(path) == digest):
            body = _get(tarball.url)
            if body is None:
                continue
            if hashlib.sha256(body).hexdigest() != digest:
                raise UserError(f"{tarball.url}: SHA-256 differs from {tarball.checked_by}'s; not used")
            path.write_bytes(body)
        return path, Tarball(tarball.version, tarball.url, digest, tarball.checked_by)
    raise UserError(f"the mirror {mirror} serves no python3.{minor} source tarball "
                    f"(pool/main/p/python3.{minor}/); give --source FILE (a Python-3.{minor}.N.tar.xz)")


def _exists(url: str) -> bool:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=TIMEOUT_S) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
