"""The frameworks: the interfaces each app offers and the packages it needs (pinned)."""

from __future__ import annotations

from pywebbench.catalog.model import Framework, Interface

W, A, O = Interface.WSGI, Interface.ASGI, Interface.OWN

FRAMEWORKS: tuple[Framework, ...] = (
    Framework("flask", "Flask", frozenset({W}), ("flask==3.1.3",)),
    Framework("bottle", "Bottle", frozenset({W}), ("bottle==0.13.4",)),
    Framework("falcon", "Falcon", frozenset({W, A}), ("falcon==4.4.0",)),
    # Django 6 needs Python 3.12; 5.2 is the LTS that runs on 3.11.
    Framework("django", "Django", frozenset({W, A}), ("django==5.2.19",)),
    Framework("hug", "hug", frozenset({W}), ("hug==2.6.1", "falcon==2.0.0")),
    # 0.5.42 is the last API Star with a server framework; it imports werkzeug.urls.url_decode,
    # which werkzeug 3.0 removed.
    Framework("apistar", "API Star", frozenset({W}), ("apistar==0.5.42", "werkzeug==2.2.3")),
    Framework("starlette", "Starlette", frozenset({A}), ("starlette==1.10.0",)),
    Framework("fastapi", "FastAPI", frozenset({A}), ("fastapi==0.163.2",)),
    Framework("quart", "Quart", frozenset({A}), ("quart==0.22.0",)),
    # aioflask 0.4.0 breaks on Flask >= 2.2 and Werkzeug 3.
    Framework("aioflask", "Aioflask", frozenset({A}), ("aioflask==0.4.0", "flask==2.1.3", "werkzeug==2.3.8")),
    Framework("litestar", "Litestar", frozenset({A}), ("litestar==2.25.0",)),
    Framework("blacksheep", "BlackSheep", frozenset({A}), ("blacksheep==2.6.4",)),
    Framework("sanic", "Sanic", frozenset({A, O}), ("sanic==25.12.1",)),
    Framework("aiohttp", "aiohttp", frozenset({O}), ("aiohttp==3.14.5",)),
    Framework("tornado", "Tornado", frozenset({O}), ("tornado==6.6.1",)),
    Framework("go", "Go", frozenset({O}), (), native=True),
    Framework("nginx", "nginx", frozenset({O}), (), native=True),
)
