"""The --hosts inventory: roles placed on hosts, refused in one line when it cannot work."""

from __future__ import annotations

from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.hosts import Role, load_inventory, parse_inventory


def test_roles_land_on_their_hosts_and_unplaced_roles_on_the_app_host(tmp_path: Path) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text('[hosts.gen1]\naddress = "10.0.0.2"\nroles = ["generator"]\n'
                    '[hosts.gen2]\naddress = "10.0.0.4"\nroles = ["generator"]\n'
                    '[hosts.app]\naddress = "10.0.0.3"\nuser = "bench"\nport = 2222\nkey = "~/.ssh/k"\n'
                    'roles = ["app", "db"]\n')
    inventory = load_inventory(path)
    assert [h.name for h in inventory.generators] == ["gen1", "gen2"]
    app = inventory.host_of(Role.APP)
    assert (app.name, app.user, app.port, app.key) == ("app", "bench", 2222, Path("~/.ssh/k").expanduser())
    assert inventory.host_of(Role.DB) is app and inventory.host_of(Role.PROXY) is app


@pytest.mark.parametrize(("text", "says"), [
    ('[hosts.a]\naddress = "10.0.0.2"\nroles = ["app"]\n', "no host takes the generator role"),
    ('[hosts.a]\naddress = "10.0.0.2"\nroles = ["generator"]\n', "no host takes the app role"),
    ('[hosts.a]\naddress = "10.0.0.2"\nroles = ["app", "generator"]\n[hosts.b]\naddress = "10.0.0.3"\n'
     'roles = ["app"]\n', "role 'app' is on 'a' and 'b'"),
    ('[hosts.a]\naddress = "10.0.0.2"\nroles = ["web"]\n', "unknown role 'web'"),
    ('[hosts.a]\naddress = "8.8.8.8"\nroles = ["app", "generator"]\n', "public address"),
    ('[hosts.a]\naddress = "not an address!"\nroles = ["app", "generator"]\n', "neither an IP address"),
    ('[hosts.a]\naddress = "10.0.0.2"\nport = 70000\nroles = ["app", "generator"]\n', "port must be"),
    ('[hosts.a]\naddress = "10.0.0.2"\nroles = ["app", "generator"]\npassword = "x"\n', "unknown key 'password'"),
    ('[server]\nx = 1\n', "unknown table 'server'"),
    ('hosts = [', "does not parse"),
    ('[hosts.a]\naddress = "10.0.0.2"\nroles = ["app", "generator", "proxy"]\n[hosts.p]\naddress = "10.0.0.3"\n'
     'roles = ["proxy"]\n', "role 'proxy' is on 'a' and 'p'"),
])
def test_an_inventory_that_cannot_work_is_one_line(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "hosts.toml"
    path.write_text(text)
    with pytest.raises(UserError) as caught:
        load_inventory(path)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_public_address_needs_allow_remote() -> None:
    data = {"hosts": {"a": {"address": "8.8.8.8", "roles": ["app", "generator"]}}}
    assert parse_inventory(data, allow_remote=True).hosts[0].address == "8.8.8.8"
    with pytest.raises(UserError, match="cannot read the inventory"):
        load_inventory(Path("/nonexistent/hosts.toml"))


def test_a_host_may_name_its_known_hosts_file_and_its_uv(tmp_path: Path) -> None:
    inventory = parse_inventory({"hosts": {"a": {"address": "10.0.0.2", "roles": ["app", "generator"],
                                                 "known_hosts": "/run/kh", "uv": "/opt/uv/bin/uv"}}})
    host = inventory.hosts[0]
    assert (host.known_hosts, host.uv) == (Path("/run/kh"), Path("/opt/uv/bin/uv"))
    with pytest.raises(UserError, match="uv must be a path"):
        parse_inventory({"hosts": {"a": {"address": "10.0.0.2", "roles": ["app", "generator"], "uv": 3}}})


def test_the_proxy_role_takes_one_host_of_its_own_or_stays_with_the_app() -> None:
    inventory = parse_inventory({"hosts": {"a": {"address": "10.0.0.2", "roles": ["app", "generator"]},
                                           "edge": {"address": "10.0.0.3", "roles": ["proxy"]}}})
    assert inventory.host_of(Role.PROXY).name == "edge"


def test_a_placed_proxy_needs_the_nginx_topology_said_before_any_host_is_reached(tmp_path: Path) -> None:
    from pywebbench.measure.placing import hosts_ready
    from pywebbench.plan.options import RunOptions
    path = tmp_path / "hosts.toml"
    path.write_text('[hosts.a]\naddress = "10.0.0.2"\nroles = ["app", "generator"]\n'
                    '[hosts.edge]\naddress = "10.0.0.3"\nroles = ["proxy"]\n')
    with pytest.raises(UserError, match="places the proxy role .nginx. on 'edge'.*add --topology nginx"):
        hosts_ready(RunOptions(hosts=str(path)).validate(), [])
