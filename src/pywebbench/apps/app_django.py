"""Django copy of the benchmark app, a single-file project (WSGI: ``wsgi``; ASGI: ``asgi``).

Settings are configured in-module: no database, no middleware, DEBUG off.
"""

from __future__ import annotations

from django.conf import settings
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application
from django.http import HttpRequest, HttpResponse
from django.urls import path

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["*"],
    SECRET_KEY="pywebbench-not-secret",
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=[],
    MIDDLEWARE=[],
    DATABASES={},
    TEMPLATES=[],
    USE_I18N=False,
    USE_TZ=True,
    LOGGING_CONFIG=None,
)

TEXT_PLAIN = "text/plain; charset=utf-8"


def text(body: str) -> HttpResponse:
    # Without CommonMiddleware Django sends no Content-Length; set it so every server can
    # keep the connection alive without chunking.
    data = body.encode()
    response = HttpResponse(data, content_type=TEXT_PLAIN)
    response["Content-Length"] = str(len(data))
    return response


def hello(request: HttpRequest) -> HttpResponse:
    return text("Hello World!")


# Further endpoints (DB query, upstream call, template) go here, beside /hello.

urlpatterns = [
    path("hello", hello),
]

wsgi = get_wsgi_application()
asgi = get_asgi_application()
