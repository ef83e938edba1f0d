import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "secondbrain.settings")
# Django must be set up before the consumers (and through them the models) are imported.
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from chat.routing import websocket_urlpatterns as chat_websockets  # noqa: E402
from ingestion.routing import websocket_urlpatterns as ingestion_websockets  # noqa: E402
from mcp_server.http import MCP_PATH, McpEndpoint  # noqa: E402
from mcp_server.tools import server as mcp_server  # noqa: E402
from secondbrain.limits import ASGIApp, BodySizeLimit, ConcurrencyLimit, Receive, Scope, Send  # noqa: E402


class Mounts:
    """ASGI apps at paths of their own beside Django (the MCP server's streamable HTTP endpoint),
    Django for every other path. The authorization matrix reads `mounts` (tests/test_authorization.py)."""

    def __init__(self, mounts: dict[str, ASGIApp], default: ASGIApp) -> None:
        self.mounts = mounts
        self.default = default

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.mounts.get(scope["path"].rstrip("/") or "/", self.default)
        await app(scope, receive, send)


# An MCP call may wait on the model for seconds, as /api/ask does, borrowing a database connection only
# for each step: neither holds one of the slots that keep requests within the connection pool.
application = ProtocolTypeRouter(
    {
        "http": BodySizeLimit(
            ConcurrencyLimit(
                Mounts({MCP_PATH: McpEndpoint(mcp_server)}, django_asgi_app),
                limit=settings.WEB_CONCURRENT_REQUESTS,
                exempt=("/api/ask", MCP_PATH),
            )
        ),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(chat_websockets + ingestion_websockets))
        ),
    }
)
