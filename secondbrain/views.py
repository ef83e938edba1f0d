from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from secondbrain import metrics


@require_GET
def metrics_page(request: HttpRequest) -> HttpResponse:
    """Prometheus's scrape: 404 when METRICS_ENABLED is off, 403 to a caller without METRICS_TOKEN (or,
    with none set, not on loopback)."""
    if not settings.METRICS_ENABLED:
        raise Http404()
    if not metrics.scrape_allowed(request):
        return HttpResponse("Forbidden: send METRICS_TOKEN as a bearer token.\n", status=403, content_type="text/plain")
    return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)
