"""Run a command inside cgroups from its first instruction: `cgexec.py PROCS... -- ARGV...`.

Writes its own PID to each given cgroup.procs file, then execs ARGV (same PID), so every
process the command forks is born in the role's cgroup and all its memory is charged there:
moving a server after it started races its forks and leaves earlier memory behind. Run as
`python -I -S cgexec.py` (standard library only, no site: ~10 ms), once per server launch.
"""

import os
import sys


def main(argv: list[str]) -> None:
    if "--" not in argv:
        sys.exit("usage: cgexec.py CGROUP_PROCS... -- COMMAND...")
    split = argv.index("--")
    procs, command = argv[:split], argv[split + 1:]
    if not command:
        sys.exit("cgexec.py: no command")
    pid = str(os.getpid())
    for path in procs:
        with open(path, "w") as file:
            file.write(pid)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])
