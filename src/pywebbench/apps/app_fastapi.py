"""FastAPI benchmark app: exposes the ASGI callable ``asgi``.

Handlers return Response objects directly (no model validation/serialisation);
add further endpoints to ``router``. OpenAPI/docs routes are disabled.
"""

from fastapi import APIRouter, FastAPI
from fastapi.responses import PlainTextResponse

HELLO = "Hello World!"

router = APIRouter()


@router.get("/hello", response_class=PlainTextResponse)
async def hello() -> PlainTextResponse:
    return PlainTextResponse(HELLO)  # text/plain; charset=utf-8


asgi = FastAPI(debug=False, openapi_url=None, docs_url=None, redoc_url=None)
asgi.include_router(router)
