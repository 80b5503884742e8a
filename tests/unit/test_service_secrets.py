"""Service passwords are fresh per start and kept out of reprs and recorded configs."""

from __future__ import annotations

from pywebbench.report.common import inert
from pywebbench.results.model import ServiceRecord
from pywebbench.services.backing import REDACTED, _redacted
from pywebbench.services.postgres import PostgresConfig


def test_each_config_gets_its_own_password_and_does_not_show_it() -> None:
    first, second = PostgresConfig(), PostgresConfig()
    assert first.password != second.password and len(first.password) >= 32
    assert first.password not in repr(first)
    assert first == second  # the password is no part of what a config means


def test_a_recorded_config_never_holds_a_password() -> None:
    record = ServiceRecord("pgbouncer", "PgBouncer 1.2 s3cret", {"config": "auth = s3cret\n", "lanes": 2})
    clean = _redacted(record, ("s3cret",))
    assert "s3cret" not in repr(clean) and clean.config["config"] == f"auth = {REDACTED}\n"
    assert clean.config["lanes"] == 2


def test_inert_shows_control_characters_instead_of_sending_them() -> None:
    assert inert("a\x1b[2Jb\tc\nd\u202e") == "a\\x1b[2Jb\tc\nd\\u202e"
