"""Roles placed before anything starts: `--hosts` read and checked over SSH, or the netns rig
made, then the db and upstream roles and the links brought up as a `HostPlacement`
(measure/placement.py); on one host, nothing (the runner's `LocalPlacement`)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path

from pywebbench.catalog.workloads import Needs
from pywebbench.core.errors import UserError
from pywebbench.measure.placement import HostPlacement, PlacedHost, PlacementConfig, UpstreamRole
from pywebbench.plan.hosts import Inventory, Role, load_inventory
from pywebbench.plan.options import RunOptions
from pywebbench.services.backing import BackingConfig
from pywebbench.stage.envs import cache_root, uv_binary
from pywebbench.stage.hostcheck import check_inventory, require_ready, target_of
from pywebbench.stage.netns import NetnsRig
from pywebbench.stage.reference import GoBuildError, build_go_binaries
from pywebbench.stage.ssh import SshError
from pywebbench.stage.staging import StagingError
from pywebbench.stage.toxiproxy import build_toxiproxy


RIG_ROLES = (("gen", Role.GENERATOR), ("app", Role.APP), ("db", Role.DB))
"""--topology netns: the default three-role layout, a namespace each."""


def hosts_ready(options: RunOptions, points: Sequence[Sequence[tuple[str, object]]]) -> Inventory | None:
    """--hosts read and every host checked over SSH (doctor --hosts), and an rtt knob refused on one
    host, before anything starts."""
    if not options.placed and any(name == "rtt_s" for point in points for name, _ in point):
        raise UserError("--knob rtt delays the links between hosts, and on a single host there are none: "
                        "add --hosts HOSTS_TOML or --topology netns")
    if options.hosts is None:
        return None
    inventory = load_inventory(Path(options.hosts), allow_remote=options.allow_remote)
    proxy = [h.name for h in inventory.hosts if Role.PROXY in h.roles]
    if proxy and options.topology != "nginx":
        raise UserError(f"the inventory places the proxy role (nginx) on {proxy[0]!r}, but this run loads the app "
                        "directly: add --topology nginx")
    with tempfile.TemporaryDirectory(prefix="pwb-ssh-") as control:  # short: socket paths are capped
        require_ready(check_inventory(inventory, Path(control)))
    return inventory


def place_roles(services: ExitStack, options: RunOptions, needs: frozenset[Needs], inventory: Inventory | None,
                run_dir: Path, on_note: Callable[[str], None], backing: BackingConfig | None = None) -> HostPlacement | None:
    """The roles' hosts reached (the netns rig made first), the db and upstream roles and the links up;
    None on one host."""
    if not options.placed:
        return None
    try:
        toxiproxy = build_toxiproxy()
    except (OSError, RuntimeError, ValueError) as exc:
        raise UserError(f"the links between hosts need Toxiproxy, and it could not be built: {exc}") from None
    if inventory is not None:
        hosts = [PlacedHost(h.name, h.address, h.roles, target_of(h), str(h.uv) if h.uv else None, h.offline)
                 for h in inventory.hosts]
        mode = "hosts"
    else:
        rig = services.enter_context(NetnsRig(tuple(name for name, _ in RIG_ROLES), run_dir))
        on_note(f"netns rig: {', '.join(f'{name} {rig.hosts[name].address}' for name, _ in RIG_ROLES)}")
        uv = uv_binary()  # the rig's namespaces see this machine's files
        hosts = [PlacedHost(name, rig.hosts[name].address, (role,), rig.hosts[name].target, uv, offline=True)
                 for name, role in RIG_ROLES]
        mode = "netns"
    config = PlacementConfig(Needs.DATABASE in needs, options.db_rows, options.max_db_sessions, options.rtt_s or 0.0,
                             toxiproxy, _upstream_role(options) if Needs.UPSTREAM in needs else None,
                             proxy=options.topology == "nginx", db_lanes=backing.lanes if backing else 1,
                             db_largest_cap=backing.postgres_sessions if backing else None)
    try:
        return services.enter_context(HostPlacement(hosts, run_dir, config, mode))
    except (SshError, StagingError, OSError) as exc:
        raise UserError(f"the hosts could not be made ready: {str(exc).splitlines()[0]}") from None


def _upstream_role(options: RunOptions) -> UpstreamRole:
    try:  # cached by its sources' hash: the backing services' build later is the same one
        binary = build_go_binaries(cache_root() / "go").upstream
    except (GoBuildError, OSError) as exc:
        raise UserError(f"the upstream role needs the Go upstream, and it could not be built: "
                        f"{str(exc).splitlines()[0]}") from None
    return UpstreamRole(binary, options.upstream_delay_s, options.upstream_size)
