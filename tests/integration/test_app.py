"""`pywebbench app` on real third-party apps written here: Flask with SQLAlchemy, FastAPI with
Pydantic models, a Django project from `django-admin startproject` reading the private
PostgreSQL; each across three servers, 1 s windows, one round. Then the bad inputs: one line
and exit 2 each, before any load."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pywebbench.results.model import TrialStatus
from pywebbench.results.store import load_results
from pywebbench.stage.envs import EnvironmentBuilder, EnvSpec
from .conftest import pywebbench

SHORT = ("--duration", "1", "--rounds", "1", "--warmup", "0.2", "--settle", "0.1", "--connections", "8")
"""One round: each server's window on the app shows it served the mix (a second round in the same
launch repeated that; rounds and launches are the run tests' subject)."""
FLASK_REQS = "flask==3.1.3\nsqlalchemy==2.0.58\n"
DJANGO_REQS = ("django==5.2.19", "psycopg[binary]==3.3.9")


def _one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("pywebbench: error:")]
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(lines) == 1, done.stderr[-3000:]
    return lines[0]


def _measured(out: Path, servers: set[str], done: subprocess.CompletedProcess[str]) -> None:
    """Every server was loaded, answered the mix without an error, and has its deploy command."""
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a busy shared machine flags windows
    results = load_results(out)
    assert {t.spec.stack_id for t in results.trials} == {f"app:{s}" for s in servers}
    for trial in results.trials:
        assert trial.status is TrialStatus.OK, (trial.spec.trial_id, trial.error)
        assert trial.load is not None and trial.load.requests > 0 and trial.load.non_2xx == 0
    assert {t.spec.round for t in results.trials} == {1} and len(results.trials) == len(servers)
    deploy = results.header.options["deploy"]
    assert set(deploy) == {f"app:{s}" for s in servers}
    assert "Deploy commands" in done.stdout
    markdown = pywebbench("report", str(out), "--format", "markdown")
    assert "### Deploy commands" in markdown.stdout
    html = pywebbench("report", str(out), "--format", "html")
    assert '<section id="deploy"' in html.stdout
    for command in deploy.values():
        assert command in done.stdout


@pytest.fixture(scope="module")
def flask_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("flaskapp")
    (root / "shop").mkdir()
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "web.py").write_text(textwrap.dedent('''
        import os
        from flask import Flask, jsonify, request
        from sqlalchemy import String, create_engine, select
        from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

        class Base(DeclarativeBase):
            pass

        class Item(Base):
            __tablename__ = "items"
            id: Mapped[int] = mapped_column(primary_key=True)
            name: Mapped[str] = mapped_column(String(40))

        engine = create_engine("sqlite:///" + os.environ["SHOP_DB"])

        def create_app():
            app = Flask(__name__)

            @app.get("/items")
            def items():
                with Session(engine) as session:
                    rows = session.scalars(select(Item).order_by(Item.id).limit(int(request.args["limit"])))
                    return jsonify([{"id": i.id, "name": i.name} for i in rows])

            @app.post("/echo")
            def echo():
                return jsonify(request.get_json())
            return app
    '''))
    (root / "seed.py").write_text(textwrap.dedent('''
        from sqlalchemy.orm import Session
        from shop.web import Base, Item, engine
        Base.metadata.drop_all(engine)
        Base.metadata.create_all(engine)
        with Session(engine) as session:
            session.add_all([Item(id=i, name=f"item-{i}") for i in range(50)])
            session.commit()
    '''))
    (root / "requirements.txt").write_text(FLASK_REQS)
    (root / "item.json").write_text('{"name": "new"}')
    return root


def test_a_flask_app_with_sqlalchemy_across_three_servers(flask_app: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = pywebbench(
        "app", "--app", "shop.web:create_app", "--factory", "--app-dir", str(flask_app),
        "--requirements", str(flask_app / "requirements.txt"), "--env", f"SHOP_DB={tmp_path / 'shop.db'}",
        "--env", "SHOP_SECRET=hunter2-not-recorded",
        "--setup", "python seed.py",
        "--request", "GET /items?limit=20 weight=3",
        "--request", f"POST /echo @{flask_app / 'item.json'} Content-Type:application/json",
        "--expect-body", '"name"',
        "--server", "gunicorn-gthread", "--server", "waitress", "--server", "granian",
        *SHORT, "--out", str(out))
    _measured(out, {"gunicorn-gthread", "waitress", "granian-wsgi"}, done)
    app = load_results(out).header.options["app"]
    assert app["interface"] == "WSGI" and app["env_keys"] == ["SHOP_DB", "SHOP_SECRET"]
    assert "hunter2" not in (out / "results.jsonl").read_text()  # --env values are not recorded
    assert "SHOP_SECRET=***" in load_results(out).header.command
    assert "gunicorn --bind 0.0.0.0:8000" in done.stdout and "'shop.web:create_app()'" in done.stdout


def test_a_fastapi_app_with_pydantic_models_across_three_servers(tmp_path: Path) -> None:
    root = tmp_path / "api"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "api"\nversion = "0"\n'
                                         'dependencies = ["fastapi==0.163.2"]\n')
    (root / "main.py").write_text(textwrap.dedent('''
        from fastapi import FastAPI
        from pydantic import BaseModel, Field

        class Order(BaseModel):
            item: str = Field(min_length=1)
            quantity: int = Field(gt=0)

        class Quote(BaseModel):
            item: str
            total_cents: int

        app = FastAPI()

        @app.post("/quote", response_model=Quote)
        async def quote(order: Order) -> Quote:
            return Quote(item=order.item, total_cents=order.quantity * 250)
    '''))
    (root / "order.json").write_text(json.dumps({"item": "tea", "quantity": 4}))
    out = tmp_path / "run"
    done = pywebbench(
        "app", "--app", "main:app", "--app-dir", str(root),
        "--request", f"POST /quote @{root / 'order.json'} Content-Type:application/json",
        "--expect-body", '"total_cents":1000',
        "--server", "uvicorn", "--server", "hypercorn", "--server", "granian",
        *SHORT, "--out", str(out))
    _measured(out, {"uvicorn", "hypercorn", "granian"}, done)
    assert load_results(out).header.options["app"]["interface"] == "ASGI"


@pytest.fixture(scope="module")
def django_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`django-admin startproject mysite`, plus an app whose view reads a table made by a migration."""
    root = tmp_path_factory.mktemp("django")
    env = EnvironmentBuilder().ensure(EnvSpec(DJANGO_REQS, (), sys.executable))
    run = dict(capture_output=True, text=True, check=True, timeout=120)
    subprocess.run([str(env.bin_dir / "django-admin"), "startproject", "mysite", str(root)], **run)  # type: ignore[call-overload]
    subprocess.run([str(env.python), "manage.py", "startapp", "catalog"], cwd=root, **run)  # type: ignore[call-overload]
    settings = root / "mysite" / "settings.py"
    settings.write_text(settings.read_text().replace("DEBUG = True", "DEBUG = False")
                        .replace("ALLOWED_HOSTS = []", "ALLOWED_HOSTS = ['*']")
                        .replace("INSTALLED_APPS = [", "INSTALLED_APPS = [\n    'catalog',") + textwrap.dedent('''
        import os
        from urllib.parse import urlsplit
        if "DATABASE_URL" in os.environ:  # the harness's private PostgreSQL
            _url = urlsplit(os.environ["DATABASE_URL"])
            DATABASES = {"default": {
                "ENGINE": "django.db.backends.postgresql", "NAME": _url.path.lstrip("/"),
                "USER": _url.username, "PASSWORD": _url.password, "HOST": _url.hostname, "PORT": _url.port,
            }}
    '''))
    (root / "catalog" / "models.py").write_text(textwrap.dedent('''
        from django.db import models

        class Book(models.Model):
            title = models.CharField(max_length=100)
    '''))
    (root / "catalog" / "views.py").write_text(textwrap.dedent('''
        from django.http import JsonResponse
        from catalog.models import Book

        def books(request):
            return JsonResponse({"books": list(Book.objects.order_by("id").values_list("title", flat=True))})
    '''))
    urls = root / "mysite" / "urls.py"
    urls.write_text(urls.read_text().replace("from django.urls import path", "from django.urls import path\n"
                                             "from catalog.views import books")
                    .replace("path('admin/', admin.site.urls),", "path('admin/', admin.site.urls),\n"
                             "    path('books/', books),"))
    subprocess.run([str(env.python), "manage.py", "makemigrations", "catalog"], cwd=root, **run)  # type: ignore[call-overload]
    (root / "db.sqlite3").unlink(missing_ok=True)  # makemigrations' consistency check made it
    (root / "requirements.txt").write_text("\n".join(DJANGO_REQS) + "\n")
    return root


def test_a_django_project_reading_the_private_postgresql(django_project: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    seed = ("python manage.py migrate --noinput && python manage.py shell -c "
            "\"from catalog.models import Book; Book.objects.get_or_create(title='Dune')\"")
    done = pywebbench(
        "app", "--app", "mysite.wsgi:application", "--app-dir", str(django_project),
        "--requirements", str(django_project / "requirements.txt"), "--with-postgres", "--pgbouncer",
        "--setup", seed, "--request", "GET /books/", "--expect-body", '"Dune"',
        "--server", "gunicorn-sync", "--server", "gunicorn-gthread", "--server", "uwsgi",
        *SHORT, "--out", str(out), timeout=900)
    _measured(out, {"gunicorn-sync", "gunicorn-gthread", "uwsgi"}, done)
    results = load_results(out)
    assert {s.name for s in results.services} >= {"postgresql", "pgbouncer"}
    assert not (django_project / "db.sqlite3").exists()  # every read went to the private PostgreSQL
    assert "gunicorn --bind 0.0.0.0:8000 --workers" in done.stdout and "mysite.wsgi:application" in done.stdout


# -- bad input: one line, exit 2, before any load ----------------------------------------------


@pytest.fixture
def plain_app(tmp_path: Path) -> Path:
    """A dependency-free WSGI app that fails under one server only (and a variant failing everywhere)."""
    (tmp_path / "plain.py").write_text(textwrap.dedent('''
        def app(environ, start_response):
            broken = "waitress" in environ.get("SERVER_SOFTWARE", "").lower() or environ["PATH_INFO"] == "/boom"
            start_response("500 Internal Server Error" if broken else "200 OK", [("Content-Type", "text/plain")])
            return [b"oops" if broken else b"fine"]

        def neither(request):
            return None

        def odd(environ, start_response):  # one server's answer differs from the others'
            gunicorn = "gunicorn" in environ.get("SERVER_SOFTWARE", "").lower()
            start_response("200 OK", [("Content-Type", "text/plain")])
            return [b"hello from gunicorn" if gunicorn else b"hello"]
    '''))
    (tmp_path / "broken.py").write_text("import no_such_package_here\napp = None\n")
    return tmp_path


def test_a_5xx_on_one_server_is_reported_and_not_loaded(plain_app: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = pywebbench("app", "--app", "plain:app", "--app-dir", str(plain_app), "--server", "gunicorn-sync",
                      "--server", "waitress", *SHORT, "--out", str(out))
    assert done.returncode == 1, done.stderr[-3000:]
    assert "app:waitress was not loaded: GET /: status 500, expected 200" in done.stderr
    trials = load_results(out).trials
    assert all(t.load is None for t in trials if t.spec.stack_id == "app:waitress")
    assert all(t.status is TrialStatus.OK for t in trials if t.spec.stack_id == "app:gunicorn-sync")


def test_a_server_whose_answer_differs_from_the_others_is_reported(plain_app: Path, tmp_path: Path) -> None:
    done = pywebbench("app", "--app", "plain:odd", "--app-dir", str(plain_app), "--server", "gunicorn-sync",
                      "--server", "waitress", "--server", "granian", *SHORT, "--out", str(tmp_path / "run"))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert ("app:gunicorn-sync answers app GET / differently from app:granian-wsgi, app:waitress: "
            "byte 5: 'hello from gunicorn' != 'hello' (19 and 5 bytes)") in done.stderr
    assert done.stderr.count("answers app GET / differently") == 1


def test_bad_inputs_are_one_line_and_exit_2(plain_app: Path, tmp_path: Path) -> None:
    base = ("app", "--app-dir", str(plain_app), "--server", "gunicorn-sync", *SHORT)
    line = _one_error_line(pywebbench(*base, "--app", "broken:app", "--out", str(tmp_path / "a")))
    assert "does not import: ModuleNotFoundError: No module named 'no_such_package_here'" in line
    line = _one_error_line(pywebbench(*base, "--app", "plain:neither", "--out", str(tmp_path / "b")))
    assert "is neither a WSGI callable" in line
    line = _one_error_line(pywebbench(*base, "--app", "plain:app", "--request", "FETCH /", "--out", str(tmp_path / "c")))
    assert "unknown method 'FETCH'" in line
    line = _one_error_line(pywebbench(*base, "--app", "plain:app", "--setup",
                                      "python -c \"import sys; sys.exit('no database configured')\"",
                                      "--out", str(tmp_path / "d")))
    assert "--setup" in line and "no database configured" in line
    line = _one_error_line(pywebbench(*base, "--app", "plain:app", "--request", "GET /boom",
                                      "--out", str(tmp_path / "e")))
    assert "the app failed on every server: GET /boom: status 500" in line
    line = _one_error_line(pywebbench(*base, "--app", "plain:app", "--server", "uvicorn", "--out", str(tmp_path / "f")))
    assert "serves ASGI" in line
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
