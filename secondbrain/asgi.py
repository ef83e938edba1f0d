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
from secondbrain.limits import BodySizeLimit, ConcurrencyLimit  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": BodySizeLimit(
            ConcurrencyLimit(django_asgi_app, limit=settings.WEB_CONCURRENT_REQUESTS, exempt=("/api/ask",))
        ),
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(chat_websockets + ingestion_websockets))
        ),
    }
)
