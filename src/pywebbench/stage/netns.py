"""`--topology netns`: several hosts on one machine, each a network namespace with its own sshd.

One namespace per host, named `pwb-<run id>-<host>`, joined to a bridge by a veth pair on a
private /24 (10.231.x.0/24; the bridge, in the root namespace, is .1 so the harness reaches
every sshd). Each namespace's sshd is started by the harness with its own config, host key
and the run's one authorized key, all in the run directory; the user's keys are never
touched. The run id is this process's pid in hex, so a later run can tell a crashed run's
leftovers (its pid is gone) from a live run's namespaces and sweep only those.

Teardown, on exit, crash or Ctrl-C: every process inside each namespace (sshd and whatever it
started: they leave sshd's group, so they are found by namespace, `ip netns pids`) gets TERM,
a grace period, KILL; then the namespaces and the bridge are deleted (deleting a namespace
deletes its end of the veth pair, but only when the kernel gets to it, so our ends are
deleted too).
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from pywebbench.core.errors import UserError
from pywebbench.core.procs import ManagedProcess
from pywebbench.stage.ssh import SshTarget

PREFIX = "pwb-"
SUBNET_BASE = "10.231"
_NS_NAME = re.compile(r"^pwb-([0-9a-f]+)-")
SSHD = "/usr/sbin/sshd"
SUBNET_LOCK = "/run/pywebbench-netns.lock"


@dataclass(frozen=True)
class RigHost:
    name: str
    namespace: str
    address: str
    target: SshTarget


def run_id(pid: int | None = None) -> str:
    return f"{pid if pid is not None else os.getpid():x}"


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, check=False, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def namespaces() -> list[str]:
    done = _ip("netns", "list", check=False)
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def namespace_pids(ns: str) -> list[int]:
    done = _ip("netns", "pids", ns, check=False)
    return [int(p) for p in done.stdout.split() if p.isdigit()]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_namespace(ns: str, grace_s: float = 3.0) -> None:
    """Every process in the namespace: TERM, grace, KILL; then the namespace itself."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in namespace_pids(ns):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + (grace_s if sig == signal.SIGTERM else 5.0)
        while namespace_pids(ns) and time.monotonic() < deadline:
            time.sleep(0.05)
    _ip("netns", "delete", ns, check=False)


def sweep_leftovers() -> list[str]:
    """Namespaces and bridges of earlier runs whose harness is gone (a crash, a SIGKILL)."""
    swept = []
    for ns in namespaces():
        match = _NS_NAME.match(ns)
        if match and not _pid_alive(int(match.group(1), 16)):
            kill_namespace(ns)
            swept.append(ns)
    links = _ip("-o", "link", "show", check=False).stdout
    for name in re.findall(r"^\d+: (pw[0-9a-f]+(?:b|v\d+))[:@]", links, re.M):
        if not _pid_alive(int(re.sub(r"(b|v\d+)$", "", name)[2:], 16)):
            _ip("link", "delete", name, check=False)
            swept.append(name)
    return swept


def _free_subnet() -> str:
    used = _ip("-o", "-4", "addr", "show", check=False).stdout
    for third in range(1 + os.getpid() % 200, 255):
        if f" {SUBNET_BASE}.{third}." not in used:
            return f"{SUBNET_BASE}.{third}"
    raise UserError(f"--topology netns: no free {SUBNET_BASE}.x.0/24 subnet on this machine")


def preflight() -> None:
    """Refuse before anything starts when the rig cannot be made here."""
    if os.geteuid() != 0:
        raise UserError("--topology netns needs root (it creates network namespaces)")
    if not os.access(SSHD, os.X_OK):
        raise UserError(f"--topology netns needs sshd ({SSHD}): sudo apt-get install -y openssh-server")
    for tool in ("ip", "ssh", "ssh-keygen"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, check=False).returncode:
            raise UserError(f"--topology netns needs {tool}")


class NetnsRig:
    """The namespaces, bridge, keys and sshds of one run; a context manager that undoes all of it."""

    def __init__(self, hosts: tuple[str, ...], work_dir: Path, *, rid: str | None = None) -> None:
        if not hosts or len(set(hosts)) != len(hosts):
            raise UserError("--topology netns needs distinct host names")
        self.rid = rid or run_id()
        self.host_names = hosts
        self.dir = work_dir / "rig"
        self.bridge = f"pw{self.rid}b"
        self.subnet = ""
        self.hosts: dict[str, RigHost] = {}
        self._sshds: list[ManagedProcess] = []
        self._made: list[str] = []

    @property
    def client_key(self) -> Path:
        return self.dir / "client_ed25519"

    @property
    def known_hosts(self) -> Path:
        return self.dir / "known_hosts"

    def namespace(self, host: str) -> str:
        return f"{PREFIX}{self.rid}-{host}"

    def __enter__(self) -> NetnsRig:
        preflight()
        sweep_leftovers()
        try:
            self._build()
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.teardown()

    def _build(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.dir, 0o700)
        _keygen(self.client_key)
        _keygen(self.dir / "host_ed25519")
        os.replace(self.client_key.with_suffix(".pub"), self.dir / "authorized_keys")
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        # Rigs made at once (the shards of `run --shards`) would otherwise both see a subnet free.
        with open(SUBNET_LOCK, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.subnet = _free_subnet()
            self._made.append(self.bridge)
            _ip("link", "add", self.bridge, "type", "bridge")
            _ip("addr", "add", f"{self.subnet}.1/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        host_pub = (self.dir / "host_ed25519.pub").read_text().split()
        lines = []
        for index, name in enumerate(self.host_names):
            address = f"{self.subnet}.{10 + index}"
            self._namespace(name, index, address)
            lines.append(f"{address} {host_pub[0]} {host_pub[1]}")
        self.known_hosts.write_text("\n".join(lines) + "\n")
        for index, name in enumerate(self.host_names):
            address = f"{self.subnet}.{10 + index}"
            self._start_sshd(name, address)
            target = SshTarget(address, 22, "root", self.client_key, self.known_hosts, shared_fs=True)
            self.hosts[name] = RigHost(name, self.namespace(name), address, target)
        for host in self.hosts.values():
            _wait_port(host.address, 22)

    def _namespace(self, name: str, index: int, address: str) -> None:
        ns = self.namespace(name)
        outside, inside = f"pw{self.rid}v{index}", f"pw{self.rid}i{index}"
        self._made.append(ns)
        _ip("netns", "add", ns)
        self._made.append(outside)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        _ip("link", "set", inside, "netns", ns)
        _ip("link", "set", outside, "master", self.bridge)
        _ip("link", "set", outside, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "link", "set", inside, "name", "eth0")
        _ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        _ip("-n", ns, "route", "add", "default", "via", f"{self.subnet}.1")

    def _start_sshd(self, name: str, address: str) -> None:
        config = self.dir / f"sshd_{name}.conf"
        config.write_text("\n".join([
            f"ListenAddress {address}",
            "Port 22",
            f"HostKey {self.dir / 'host_ed25519'}",
            f"AuthorizedKeysFile {self.dir / 'authorized_keys'}",
            f"PidFile {self.dir / f'sshd_{name}.pid'}",
            "PermitRootLogin prohibit-password",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes no",
            "MaxSessions 64",
            "MaxStartups 64",
            "AcceptEnv no",
            "PrintMotd no",
            "",
        ]))
        # bash started by sshd reads ~/.bashrc, even for `ssh host cmd`, unless it is a nested
        # shell (SHLVL): the rig's root is this machine's, whose .bashrc (pyenv init) cost 0.4 s
        # per command, 2 s per remote wrk. A rig host is a fresh machine: sshd's plain PATH.
        # SetEnv is OpenSSH 8.7's: an older sshd, which refuses it, goes without.
        plain = config.read_text()
        config.write_text(plain + "SetEnv SHLVL=1\n")
        if subprocess.run([SSHD, "-t", "-f", str(config)], capture_output=True, check=False, timeout=30).returncode:
            config.write_text(plain)
        sshd = ManagedProcess(["ip", "netns", "exec", self.namespace(name), SSHD, "-D", "-e", "-f", str(config)],
                              env={"PATH": "/usr/sbin:/usr/bin:/bin"}, log_dir=self.dir, name=f"sshd_{name}",
                              grace_s=2.0)
        sshd.start()
        self._sshds.append(sshd)

    def teardown(self) -> None:
        """Processes in the namespaces, the sshds, the namespaces, the bridge; safe to call twice."""
        for ns in [n for n in self._made if n.startswith(PREFIX)]:
            kill_namespace(ns)
        for sshd in self._sshds:
            sshd.stop()
        # The kernel frees a deleted namespace (and its veth ends) later, in its own time:
        # deleting our ends now takes each pair down at once.
        for link in [n for n in self._made if not n.startswith(PREFIX)]:
            _ip("link", "delete", link, check=False)
        self._made.clear()
        self._sshds.clear()

    def inventory_toml(self, roles: dict[str, tuple[str, ...]], uv: Path | None = None) -> str:
        """A `--hosts` file for this rig: each host's address, the run's key and known_hosts; offline, as
        the namespaces have no route out. `uv` is given to the app host only: no other role needs it."""
        out = []
        for name, host in self.hosts.items():
            out += [f"[hosts.{name}]", f'address = "{host.address}"', 'user = "root"',
                    f'key = "{self.client_key}"', f'known_hosts = "{self.known_hosts}"', "offline = true"]
            if uv is not None and "app" in roles.get(name, ()):
                out.append(f'uv = "{uv}"')
            out += ["roles = [" + ", ".join(f'"{r}"' for r in roles.get(name, ())) + "]", ""]
        return "\n".join(out)


def _keygen(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.with_suffix(".pub").unlink(missing_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "pywebbench-rig", "-f", str(path)],
                   check=True, capture_output=True, timeout=30)


def _wait_port(address: str, port: int, timeout_s: float = 10.0) -> None:
    import socket
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((address, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd on {address}:{port} did not come up")
