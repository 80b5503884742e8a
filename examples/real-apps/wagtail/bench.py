"""Settings for serving the `wagtail start` project under a benchmark: production settings,
the database from DATABASE_URL (the harness's private PostgreSQL), any Host accepted.
Copied to mysite/settings/bench.py by scripts/real-apps."""

import os

import dj_database_url

from .production import *  # noqa: F403

DEBUG = False
ALLOWED_HOSTS = ["*"]
SECRET_KEY = os.environ.get("SECRET_KEY", "pywebbench-benchmark-not-a-secret")
DATABASES = {"default": dj_database_url.config(default=f"sqlite:///{BASE_DIR}/db.sqlite3")}  # noqa: F405
# No collectstatic step: {% static %} resolves without the manifest a production build would make.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
