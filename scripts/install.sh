#!/usr/bin/env bash
# Installs whatever pywebbench needs and is missing on a Debian/Ubuntu machine: the system
# packages (load generators, compilers for the C servers) and the project's Python
# environment, built by uv in .venv. Safe to run again: it only adds what is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(
  wrk apache2-utils util-linux procps        # load generators, taskset, ps
  nghttp2-client                             # h2load: the generator of --protocol h2c, h1-tls, h2-tls
  build-essential python3-dev python3-venv   # compiling meinheld, bjoern, uWSGI
  libev-dev                                  # bjoern's event loop
  postgresql pgbouncer nginx-light           # private instances, started by the harness
  chromium chromium-driver                   # the HTML report's browser test
  openssh-server openssh-client              # the netns rig's per-host sshd; the SSH transport
  ca-certificates curl git
)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install: apt packages: ${missing[*]}" >&2
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Go builds the reference server and the upstream API; Debian's golang-go if none is on PATH.
if ! command -v go >/dev/null 2>&1 && [ ! -x /usr/local/go/bin/go ]; then
  $SUDO apt-get update -q
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends golang-go
fi

# oha: the open-loop generator, from crates.io into the user's pywebbench cache (Debian does not
# package it), so every checkout on this machine shares one build.
OHA_VERSION=1.16.0
TOOLS="${PYWEBBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pywebbench}/tools"
if [ ! -x "$TOOLS/cargo/bin/oha" ] && [ ! -x .tools/cargo/bin/oha ] && ! command -v oha >/dev/null 2>&1; then
  CARGO=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
  if [ ! -x "$CARGO" ]; then
    $SUDO apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends cargo
    CARGO=$(command -v cargo)
  fi
  echo "install: oha $OHA_VERSION into $TOOLS/cargo (a few minutes of compiling, once)" >&2
  "$CARGO" install --quiet --locked --root "$TOOLS/cargo" oha --version "$OHA_VERSION"
fi

# vegeta: an open-loop generator a run may choose (--generator vegeta; oha sends every mix by
# default), from the Go module proxy into the same cache, where src/pywebbench/stage/tools.py finds it.
VEGETA_VERSION=v12.13.0
if [ ! -x "$TOOLS/vegeta-$VEGETA_VERSION/vegeta" ] && ! command -v vegeta >/dev/null 2>&1; then
  GO=$(command -v go || echo /usr/local/go/bin/go)
  echo "install: vegeta $VEGETA_VERSION into $TOOLS/vegeta-$VEGETA_VERSION (half a minute of compiling, once)" >&2
  mkdir -p "$TOOLS/vegeta-$VEGETA_VERSION"
  GOBIN="$TOOLS/vegeta-$VEGETA_VERSION" CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-modcacherw -buildvcs=false" \
    "$GO" install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION"
fi

# The distribution's Python when it is 3.11+, not the first python3 on PATH: the stacks run on
# the interpreter the harness runs on, and a pyenv build is compiled without PGO/LTO unless
# asked (here pyenv's 3.11.7 served flask:gunicorn-sync about 30% slower than Debian's 3.11.2).
PYTHON=python3
if /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  PYTHON=/usr/bin/python3
fi

# uv: the one on PATH, else a private copy from PyPI (Debian 12 does not package uv).
if command -v uv >/dev/null 2>&1; then
  UV=uv
else
  if [ ! -x .tools/uv/bin/uv ]; then
    echo "install: uv into .tools/uv" >&2
    "$PYTHON" -m venv .tools/uv
    .tools/uv/bin/pip install --quiet --disable-pip-version-check uv
  fi
  UV=.tools/uv/bin/uv
fi

# Never let uv fetch an interpreter: stacks run on the machine's own Python 3.11+. Bytecode is
# compiled here, once, in parallel: otherwise the first commands (and each test worker at once)
# compile numpy, scipy and plotly as they import them.
export UV_PYTHON_DOWNLOADS=never
"$UV" sync --quiet --frozen --compile-bytecode --python "$PYTHON" 2>/dev/null \
  || "$UV" sync --quiet --compile-bytecode --python "$PYTHON"
