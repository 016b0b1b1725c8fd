"""ASGI entry point (gunicorn -k asgi): a small router in front of Django.

The router answers the lifespan protocol itself, which Django's ASGI handler does not support; the MCP
app that joins it later needs lifespan to start its task group.
"""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()


async def _lifespan(receive, send) -> None:  # type: ignore[no-untyped-def]
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def application(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
    if scope["type"] == "lifespan":
        return await _lifespan(receive, send)
    return await django_app(scope, receive, send)
