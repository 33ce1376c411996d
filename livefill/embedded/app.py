"""The ASGI application of the embedded server: the demo provider and the relay.

`build_app(relay_token=..., defaults=...)` is what `EmbeddedServer` and `livefill-server` serve;
`create_app()` is a zero-argument factory for `uvicorn --factory livefill.embedded.app:create_app`
(a random relay token, default knobs). The demo provider object is kept at `app.state.demo`.

`app_headers=True` (the app's own in-process relay only) lets the relay take the two headers that
act on this machine for a loopback peer: `x-livefill-upstream-key` (a key to forward) and
`x-livefill-record` (a file to write). `livefill-server` and `create_app` serve with it False:
those headers are then refused with 403 naming them, before anything is written or forwarded.
"""

from __future__ import annotations

import secrets

from starlette.applications import Starlette
from starlette.middleware import Middleware

from livefill.relay import app as relay_app
from livefill.demo.provider import DemoProvider
from livefill.serving.guard import Guard, GuardLimits
from livefill.demo.knobs import DemoDefaults

__all__ = ["build_app", "create_app"]


def build_app(
    *,
    relay_token: str,
    defaults: DemoDefaults | None = None,
    limits: GuardLimits | None = None,
    app_headers: bool = False,
) -> Starlette:
    """The server's Starlette app: demo-provider routes and the relay routes.

    The relay's routes call the demo provider upstream over real HTTP on this same server. Every
    request passes `livefill.serving.guard.Guard` first (host, origin, content type, body size/time).
    `app_headers`: honour `x-livefill-upstream-key` and `x-livefill-record` (the app's own relay).
    """
    demo = DemoProvider(defaults)
    app = Starlette(
        routes=[
            *demo.routes(),
            *relay_app.routes(relay_token=relay_token, accept_upstream_key=app_headers, accept_record=app_headers),
        ],
        middleware=[Middleware(Guard, limits=limits or GuardLimits())],
    )
    app.state.demo = demo
    app.state.relay_token = relay_token
    return app


def create_app() -> Starlette:
    """ASGI factory for `uvicorn --factory livefill.embedded.app:create_app`."""
    return build_app(relay_token=secrets.token_urlsafe(24))
