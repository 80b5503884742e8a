"""`pywebbench python install` (issue 47 item 2) without building CPython: the tarball found on a
Debian mirror served from tmp_path (the Sources indexes, a tarball only a .dsc vouches for, a
checksum that differs), the build's steps run on a stand-in source tree whose configure and make
are shell scripts, the GIL check that keeps or refuses the build, and the one-line refusals (a bad
name, packages missing without root). The real build of 3.14t is recorded in the commit that added
this (its time and `sys._is_gil_enabled()`)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import lzma
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.stage import pybuild, pysource
from pywebbench.stage.pybuild import install, installed, parse_name
from pywebbench.stage.pysource import debian_mirror, fetch_tarball, index_entries


def _stanza(package: str, files: dict[str, bytes], kind: str = "Package") -> str:
    sums = "".join(f" {hashlib.sha256(body).hexdigest()} {len(body)} {name}\n" for name, body in files.items())
    return f"{kind}: {package}\nVersion: x\nChecksums-Sha256:\n{sums}Directory: pool/main/p/{package}\n"


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "mirror"
    pool = root / "pool/main/p/python3.14"
    pool.mkdir(parents=True)
    (root / "dists/unstable/main/source").mkdir(parents=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root
    server.shutdown()
    server.server_close()


def _index(root: Path, text: str) -> None:
    (root / "dists/unstable/main/source/Sources.xz").write_bytes(lzma.compress(text.encode()))


def test_the_indexed_tarball_is_taken_when_the_mirror_serves_it(mirror: tuple[str, Path], tmp_path: Path) -> None:
    url, root = mirror
    body = b"tarball 3.14.9"
    (root / "pool/main/p/python3.14/python3.14_3.14.9.orig.tar.xz").write_bytes(body)
    _index(root, _stanza("python3.13", {"python3.13_3.13.9.orig.tar.xz": b"no"}) + "\n" +
           _stanza("python3.14", {"python3.14_3.14.9.orig.tar.xz": body}))
    path, tarball = fetch_tarball("14", tmp_path / "src", url)
    assert path.read_bytes() == body
    assert (tarball.version, tarball.checked_by) == ("3.14.9", "the unstable Sources index")


def test_a_tarball_the_indexes_no_longer_list_is_found_below_and_checked_by_its_dsc(
        mirror: tuple[str, Path], tmp_path: Path) -> None:
    url, root = mirror
    body = b"tarball 3.14.7"
    pool = root / "pool/main/p/python3.14"
    (pool / "python3.14_3.14.7.orig.tar.xz").write_bytes(body)
    (pool / "python3.14_3.14.7-1.dsc").write_text(
        _stanza("python3.14", {"python3.14_3.14.7.orig.tar.xz": body}, kind="Source"))
    _index(root, _stanza("python3.14", {"python3.14_3.14.9.orig.tar.xz": b"gone from the pool"}))
    path, tarball = fetch_tarball("14", tmp_path / "src", url)
    assert (path.name, tarball.checked_by, tarball.sha256) == (
        "python3.14_3.14.7.orig.tar.xz", "the .dsc", hashlib.sha256(body).hexdigest())


def test_a_tarball_whose_checksum_differs_is_refused(mirror: tuple[str, Path], tmp_path: Path) -> None:
    url, root = mirror
    (root / "pool/main/p/python3.14/python3.14_3.14.9.orig.tar.xz").write_bytes(b"tampered")
    _index(root, _stanza("python3.14", {"python3.14_3.14.9.orig.tar.xz": b"original"}))
    with pytest.raises(UserError, match=r"SHA-256 differs from the unstable Sources index's; not used$"):
        fetch_tarball("14", tmp_path / "src", url)


def test_no_tarball_is_one_line_saying_what_to_give(mirror: tuple[str, Path], tmp_path: Path) -> None:
    url, root = mirror
    _index(root, "")
    with pytest.raises(UserError) as refused:
        fetch_tarball("14", tmp_path / "src", url)
    assert str(refused.value) == (f"the mirror {url} serves no python3.14 source tarball "
                                  "(pool/main/p/python3.14/); give --source FILE (a Python-3.14.N.tar.xz)")


def test_the_mirror_is_read_from_apt_s_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(pysource.MIRROR_ENV, raising=False)
    listing, parts = tmp_path / "sources.list", tmp_path / "sources.list.d"
    parts.mkdir()
    listing.write_text("# none here\n")
    (parts / "security.sources").write_text("Types: deb\nURIs: http://deb.debian.org/debian-security\n")
    (parts / "debian.sources").write_text("Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n")
    assert debian_mirror((listing, parts)) == "http://mirror.example/debian"
    listing.write_text("deb [arch=amd64] https://other.example/debian bookworm main\n")
    assert debian_mirror((listing, parts)) == "https://other.example/debian"


def test_index_entries_reads_one_package_s_orig_tarballs() -> None:
    text = _stanza("python3.14", {"python3.14_3.14.9.orig.tar.xz": b"a", "python3.14_3.14.9-1.debian.tar.xz": b"b"})
    assert index_entries(text, "python3.14") == {"python3.14_3.14.9.orig.tar.xz": hashlib.sha256(b"a").hexdigest()}
    assert index_entries(text, "python3.1") == {}


@pytest.mark.parametrize(("name", "parsed"), [("3.14t", ("14", True)), ("3.13", ("13", False)), (" 3.14 ", ("14", False))])
def test_names_read(name: str, parsed: tuple[str, bool]) -> None:
    assert parse_name(name) == parsed


@pytest.mark.parametrize(("name", "line"), [
    ("3.12t", "python install: free-threaded builds start at 3.13, not 3.12t"),
    ("pypy3", "python install: 'pypy3' is not a CPython version such as 3.13, 3.14 or 3.14t (t: free-threaded)"),
])
def test_bad_names_are_refused_in_one_line(name: str, line: str) -> None:
    with pytest.raises(UserError) as refused:
        parse_name(name)
    assert str(refused.value) == line


def test_missing_packages_without_root_are_one_line_with_the_apt_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pybuild, "missing_packages", lambda: ["libssl-dev", "zlib1g-dev"])
    monkeypatch.setattr(pybuild.os, "geteuid", lambda: 1000)
    with pytest.raises(UserError) as refused:
        pybuild.ensure_packages(lambda line: None)
    assert str(refused.value) == ("python install: the build needs libssl-dev, zlib1g-dev: "
                                  "sudo apt-get install -y libssl-dev zlib1g-dev")


def _source(tmp_path: Path, gil: str) -> Path:
    """A tarball whose configure records its arguments and whose make install puts a stand-in
    python3.14t (answering version and GIL questions) under the prefix."""
    tree = tmp_path / "Python-3.14.7"
    tree.mkdir()
    (tree / "configure").write_text('#!/bin/sh\necho "$@" > configured\nfor a; do case "$a" in --prefix) p=1;; '
                                    '*) [ -n "$p" ] && echo "$a" > prefix && p=;; esac; done\nexit 0\n')
    python = (f'#!/bin/sh\ncase "$2" in *_is_gil_enabled*) echo {gil};; *) echo 3.14.7;; esac\n')
    (tree / "python.stub").write_text(python)
    (tree / "Makefile").write_text("all:\n\ttrue\ninstall:\n\tmkdir -p $$(cat prefix)/bin && "
                                   "cp python.stub $$(cat prefix)/bin/python3.14t && chmod +x $$(cat prefix)/bin/python3.14t\n")
    (tree / "configure").chmod(0o755)
    archive = tmp_path / "Python-3.14.7.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(tree, arcname=tree.name)
    return archive


def test_a_build_is_kept_with_its_record_once_the_gil_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pybuild, "missing_packages", lambda: [])
    said: list[str] = []
    built = install("3.14t", source=_source(tmp_path, "False"), optimized=False, say=said.append,
                    root=tmp_path / "pythons", jobs=1)
    assert (built.version, built.free_threaded, built.gil_enabled) == ("3.14.7", True, False)
    assert "--disable-gil" in built.configure and "--enable-optimizations" not in built.configure
    assert installed("3.14t", tmp_path / "pythons") == built
    assert [line.split(" ...")[0] for line in said] == ["./configure --prefix", "make -j1", "make install"]
    again: list[str] = []
    assert install("3.14t", source=None, optimized=False, say=again.append, root=tmp_path / "pythons") == built
    assert again[0].startswith("3.14t is installed: ")


def test_a_build_whose_gil_comes_back_on_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pybuild, "missing_packages", lambda: [])
    with pytest.raises(UserError, match=r"starts with the GIL enabled \(sys._is_gil_enabled\(\) is True\); not kept"):
        install("3.14t", source=_source(tmp_path, "True"), optimized=False, say=lambda line: None,
                root=tmp_path / "pythons", jobs=1)
    assert installed("3.14t", tmp_path / "pythons") is None
    assert not (tmp_path / "pythons/3.14t").exists()
