"""BlackSheep benchmark app: exposes the ASGI callable ``asgi``.

Add further endpoints with ``app.router.add_get(...)`` beside ``hello``.
"""

from blacksheep import Application, Request, Response, text

HELLO = "Hello World!"


async def hello(request: Request) -> Response:
    return text(HELLO)  # text/plain; charset=utf-8


app = Application(show_error_details=False)
app.router.add_get("/hello", hello)

asgi = app
