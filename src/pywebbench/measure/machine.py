"""The machine a run happened on, as pyperf records it: CPU, cores, kernel, load, governor."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

import psutil

from pywebbench.results.model import MachineInfo


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _governor() -> str | None:
    path = Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def usable_cpus() -> tuple[int, ...]:
    return tuple(sorted(os.sched_getaffinity(0)))


def machine_info() -> MachineInfo:
    load = os.getloadavg()
    return MachineInfo(
        hostname=socket.gethostname(),
        cpu_model=_cpu_model(),
        cpu_count=os.cpu_count() or 1,
        affinity=usable_cpus(),
        memory_mb=int(psutil.virtual_memory().total / 2**20),
        kernel=platform.release(),
        os=_os_name(),
        python=platform.python_version(),
        load_average=(round(load[0], 2), round(load[1], 2), round(load[2], 2)),
        governor=_governor(),
    )
