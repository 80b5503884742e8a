"""Django copy of the benchmark app, a single-file project (WSGI: ``wsgi``; ASGI: ``asgi``).

Settings are configured in-module: no database, no middleware, DEBUG off. Routes come from
pwb_routes, bodies from pwb_common. The WSGI side resolves ``urlpatterns`` (sync views, sync
backend); the ASGI side resolves ``AsyncURLConf`` (async views, asyncpg + aiohttp), so no
request pays for Django's sync/async bridging.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import django
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler, ASGIRequest
from django.core.wsgi import get_wsgi_application
from django.http import HttpRequest, HttpResponse
from django.urls import path

import pwb_routes
import pwb_shapes_wsgi
import pwb_shapes_asgi

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


def respond(body: bytes, content_type: str) -> HttpResponse:
    # Without CommonMiddleware Django sends no Content-Length; set it so every server can
    # keep the connection alive without chunking.
    response = HttpResponse(body, content_type=content_type)
    response["Content-Length"] = str(len(body))
    return response


def view(body: Callable[[], bytes], content_type: str) -> Callable[[HttpRequest], HttpResponse]:
    def get(request: HttpRequest) -> HttpResponse:
        return respond(body(), content_type)

    return get


def async_view(
    body: Callable[[], Awaitable[bytes]], content_type: str
) -> Callable[[HttpRequest], Awaitable[HttpResponse]]:
    async def get(request: HttpRequest) -> HttpResponse:
        return respond(await body(), content_type)

    return get


urlpatterns = [
    path(route.path.lstrip("/"), view(route.body, route.content_type)) for route in pwb_routes.ROUTES
]


class AsyncURLConf:
    # Route.on_loop honours a sync PWB_DRIVER too (seed 001's variant)
    urlpatterns = [
        path(route.path.lstrip("/"), async_view(route.on_loop(), route.content_type))
        for route in pwb_routes.ROUTES
    ]


class AsyncRequest(ASGIRequest):
    urlconf = AsyncURLConf  # Django resolves a request against request.urlconf when set


class AsyncHandler(ASGIHandler):
    request_class = AsyncRequest


wsgi = pwb_shapes_wsgi.wrap(get_wsgi_application())
django.setup(set_prefix=False)  # what get_asgi_application() does before building its handler
asgi = pwb_shapes_asgi.wrap(AsyncHandler())
