"""Web pages by their address: fetched by the real worker over real HTTP from a site served on loopback,
read by trafilatura, searchable; each bad page its own error; addresses inside the network refused."""

import gzip
import io
import ipaddress
import ssl
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import User
from ingestion.extract import web
from ingestion.models import Chunk, Job, Source
from secondbrain.errors import AppError
from tests.factories import ApiClient, assert_error

pytestmark = pytest.mark.django_db(transaction=True)

ARTICLE = """<!doctype html>
<html lang="en"><head>
  <meta charset="utf-8">
  <title>Growing tomatoes on a balcony | The Patient Gardener</title>
  <meta property="og:title" content="Growing tomatoes on a balcony">
  <meta property="og:site_name" content="The Patient Gardener">
  <meta name="author" content="Marta Lindqvist">
  <meta property="article:published_time" content="2026-03-14T09:30:00+00:00">
</head><body>
  <nav><a href="/">Home</a> <a href="/shop">Shop our seeds</a> <a href="/login">Log in</a></nav>
  <article>
    <h1>Growing tomatoes on a balcony</h1>
    <p>Cherry tomatoes are the easiest to grow in pots. Choose a container of at least twenty litres,
       fill it with peat-free compost and put it where it gets six hours of sun a day.</p>
    <h2>Watering</h2>
    <p>Water the plants every morning in July, and feed them with a comfrey tea once a week as soon as
       the first trusses of flowers appear. Irregular watering splits the fruit.</p>
    <h2>Pinching out</h2>
    <p>Remove the side shoots that grow between the main stem and the leaves, so that the plant puts its
       strength into the fruit instead of into leaves.</p>
  </article>
  <footer>© 2026 The Patient Gardener · Cookie settings · Subscribe to our newsletter</footer>
</body></html>"""


class Site(ThreadingHTTPServer):
    daemon_threads = True
    routes: dict[str, Callable[[BaseHTTPRequestHandler], None]]
    requests: list[str]


def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str, **headers: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(body)


def _slow(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html")
    handler.end_headers()
    handler.wfile.write(b"<html><body><p>The start of a page that")
    handler.wfile.flush()
    time.sleep(4)


def _endless(handler: BaseHTTPRequestHandler) -> None:
    """A page without a Content-Length that would go on for ever, gzipped as it goes."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html; charset=utf-8")
    handler.send_header("Content-Encoding", "gzip")
    handler.end_headers()
    packed = gzip.compress(b"<html><body>" + b"<p>tomato " * 400_000)  # ~4 MB of HTML in a few KB
    try:
        handler.wfile.write(packed)
    except OSError:  # the reader stopped, as it should
        pass


ROUTES: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {
    "/article": lambda h: _send(h, 200, ARTICLE.encode(), "text/html; charset=utf-8"),
    "/old-address": lambda h: _send(h, 301, b"", "text/html", Location="/article"),
    "/missing": lambda h: _send(h, 404, b"<html><body><h1>Not found</h1></body></html>", "text/html"),
    "/report.pdf": lambda h: _send(h, 200, b"%PDF-1.4\n" + bytes(2000), "application/pdf"),
    "/blank": lambda h: _send(
        h, 200, b"<html><head><title>App</title></head><body><div id=app></div></body></html>", "text/html"
    ),  # fmt: skip
    "/endless": _endless,
    "/slow": _slow,
    "/to-metadata": lambda h: _send(h, 302, b"", "text/html", Location="http://169.254.169.254/latest/meta-data/"),
    "/loop": lambda h: _send(h, 302, b"", "text/html", Location="/loop"),
}


@pytest.fixture(name="site")
def site_fixture(settings: Any) -> Iterator[str]:
    """A web site on this machine's loopback, which the worker may fetch from (as an operator allows it)."""
    settings.WEB_FETCH_ALLOWED_NETWORKS = (ipaddress.ip_network("127.0.0.0/8"),)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 — http.server's name
            server.requests.append(self.path)
            ROUTES.get(self.path, lambda h: _send(h, 404, b"", "text/html"))(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = Site(("127.0.0.1", 0), Handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def add(api: ApiClient, url: str, **fields: Any) -> Any:
    return api.post("/web-pages", {"url": url, **fields})


def added(api: ApiClient, url: str, **fields: Any) -> dict[str, Any]:
    response = add(api, url, **fields)
    assert response.status_code == 202, response.content
    return {**api.wait_for_job(response.json()["job_id"], timeout=120), "source_id": response.json()["source_id"]}


def test_a_page_is_fetched_read_and_found_by_search(api: ApiClient, user: User, celery_worker: None, site: str) -> None:
    user.time_zone = "Europe/Stockholm"
    user.save(update_fields=["time_zone"])
    job = added(api, f"{site}/old-address")
    assert job["status"] == "done", job

    source = Source.objects.get(pk=job["source_id"])
    assert (source.kind, source.title) == ("url", "Growing tomatoes on a balcony")
    assert source.occurred_at == datetime(2026, 3, 14, tzinfo=ZoneInfo("Europe/Stockholm"))
    assert source.metadata["url"] == f"{site}/old-address" and source.metadata["fetched_from"] == f"{site}/article"
    assert source.metadata["sitename"] == "The Patient Gardener" and source.metadata["author"] == "Marta Lindqvist"
    # The readable text, without the site's menu and footer.
    assert "comfrey tea once a week" in source.text and source.size == len(source.text.encode())
    assert "Shop our seeds" not in source.text and "Cookie settings" not in source.text
    headings = [chunk.anchor["heading"] for chunk in Chunk.objects.filter(source=source)]
    assert ["Watering"] in [heading[-1:] for heading in headings], headings

    found = api.get("/search", q="how often should I feed the tomatoes", k=3).json()["results"]
    assert found[0]["source_id"] == source.pk and found[0]["kind"] == "url"
    assert "comfrey tea" in found[0]["text"] and found[0]["anchor"]["heading"][-1] == "Watering"
    assert api.get(f"/sources/{source.pk}").json()["url"] == f"{site}/old-address"

    # The export keeps the page's text as a note that names its address.
    archive = zipfile.ZipFile(io.BytesIO(b"".join(api.get("/export").streaming_content)))
    [note] = [name for name in archive.namelist() if name.startswith("notes/")]
    front, body = archive.read(note).decode().split("---\n", 2)[1:]
    assert yaml.safe_load(front)["url"] == f"{site}/old-address" and "comfrey tea" in body


def test_a_title_and_date_given_win_over_the_pages(api: ApiClient, celery_worker: None, site: str) -> None:
    job = added(api, f"{site}/article", title="Balcony tomatoes", occurred_at="2026-05-01T08:00:00Z")
    source = Source.objects.get(pk=job["source_id"])
    assert source.title == "Balcony tomatoes"
    assert source.occurred_at.isoformat() == "2026-05-01T08:00:00+00:00"


def test_reprocess_fetches_the_page_as_it_is_now(
    api: ApiClient, celery_worker: None, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(ROUTES, "/changing", lambda h: _send(h, 200, ARTICLE.encode(), "text/html"))
    job = added(api, f"{site}/changing")
    assert job["status"] == "done", job
    updated = ARTICLE.replace("Growing tomatoes on a balcony", "Growing peppers on a balcony").replace(
        "Remove the side shoots", "Peppers need no pinching out. Remove the side shoots"
    )
    monkeypatch.setitem(ROUTES, "/changing", lambda h: _send(h, 200, updated.encode(), "text/html"))
    again = api.post(f"/sources/{job['source_id']}/reprocess").json()
    assert api.wait_for_job(again["job_id"])["status"] == "done"
    source = Source.objects.get(pk=job["source_id"])
    assert source.title == "Growing peppers on a balcony" and "Peppers need no pinching out" in source.text
    assert Source.objects.count() == 1


@pytest.mark.django_db
def test_the_same_address_twice_is_a_duplicate(api: ApiClient, site: str) -> None:
    first = add(api, f"{site}/article").json()
    again = add(api, f"  HTTP://127.0.0.1:{site.rsplit(':', 1)[1]}/article#watering ")
    assert_error(again, 409, "duplicate")
    assert again.json()["error"]["source_id"] == first["source_id"]
    assert Source.objects.count() == 1 and Job.objects.count() == 1


@pytest.mark.parametrize(
    ("path", "code", "words"),
    [
        ("/missing", "url_unreachable", "404"),
        ("/report.pdf", "url_not_html", "a PDF"),
        ("/blank", "url_empty", "JavaScript"),
        ("/endless", "url_too_large", "1 MB"),
        ("/to-metadata", "url_forbidden", "169.254.169.254"),
        ("/loop", "url_unreachable", "redirects more than"),
    ],
)
def test_each_bad_page_fails_with_its_own_reason_and_keeps_nothing(
    api: ApiClient, celery_worker: None, site: str, settings: Any, path: str, code: str, words: str
) -> None:
    settings.WEB_PAGE_MAX_MB = 1
    job = added(api, f"{site}{path}")
    assert (job["status"], job["error_code"]) == ("failed", code), job
    assert words in job["error_message"], job["error_message"]
    assert not Chunk.objects.filter(source_id=job["source_id"]).exists()
    assert Source.objects.get(pk=job["source_id"]).status == "failed"


@pytest.mark.django_db
def test_a_page_that_stops_sending_times_out(site: str, settings: Any) -> None:
    settings.WEB_FETCH_TIMEOUT_SECONDS = 1
    started = time.monotonic()
    with pytest.raises(AppError) as failure:
        web.fetch(f"{site}/slow")
    assert failure.value.code == "url_unreachable" and "within 1 seconds" in failure.value.message
    assert time.monotonic() - started < 3


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("", "url_invalid"),
        ("ftp://example.org/file", "url_invalid"),
        ("javascript:alert(1)", "url_invalid"),
        ("example.org/no-scheme", "url_invalid"),
        ("https://alice:secret@example.org/", "url_invalid"),
        ("http://example.org:99999/", "url_invalid"),
        ("http://169.254.169.254/latest/meta-data/", "url_forbidden"),
        ("http://[::ffff:169.254.169.254]/", "url_forbidden"),
        ("http://10.0.0.7/admin", "url_forbidden"),
        ("http://127.0.0.1:6379/", "url_forbidden"),
        ("http://[::1]/", "url_forbidden"),
    ],
)
def test_an_address_that_cannot_be_fetched_is_refused_at_once(api: ApiClient, url: str, code: str) -> None:
    assert_error(add(api, url), 422, code)
    assert not Source.objects.exists() and not Job.objects.exists()


def test_a_name_that_points_inside_the_network_is_refused_by_the_worker(
    api: ApiClient, celery_worker: None, site: str, settings: Any
) -> None:
    settings.WEB_FETCH_ALLOWED_NETWORKS = ()
    job = added(api, f"http://localhost:{site.rsplit(':', 1)[1]}/article")
    assert (job["status"], job["error_code"]) == ("failed", "url_forbidden"), job
    assert "WEB_FETCH_ALLOWED_NETWORKS" in job["error_message"]


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        (" HTTPS://Example.ORG:443/a/b/?q=1#part ", "https://example.org/a/b/?q=1"),
        ("http://example.org", "http://example.org/"),
        ("http://example.org:8080/x", "http://example.org:8080/x"),
        ("https://de.wikipedia.org/wiki/Köln", "https://de.wikipedia.org/wiki/K%C3%B6ln"),
        ("https://example.org/a%20b/c d?x=ä y", "https://example.org/a%20b/c%20d?x=%C3%A4%20y"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
        ("http://[2606:4700::6810:84e5]:8080/", "http://[2606:4700::6810:84e5]:8080/"),
    ],
)
def test_an_address_is_stored_as_a_browser_would_send_it(typed: str, stored: str) -> None:
    assert web.url_normalize(typed) == stored


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("93.184.215.14", True),
        ("2606:4700::6810:84e5", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.20.0.5", False),
        ("192.168.1.10", False),
        ("100.100.100.200", False),  # carrier-grade NAT; Alibaba's metadata service
        ("169.254.169.254", False),
        ("fe80::1", False),
        ("fd00:ec2::254", False),  # a unique-local address: AWS's IPv6 metadata service
        ("::ffff:10.0.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.251", False),
    ],
)
def test_only_public_addresses_are_fetched(address: str, allowed: bool) -> None:
    assert web.address_allowed(ipaddress.ip_address(address)) is allowed


@pytest.mark.django_db
def test_an_operator_opens_networks_but_never_link_local_ones(settings: Any) -> None:
    settings.WEB_FETCH_ALLOWED_NETWORKS = (ipaddress.ip_network("192.168.1.0/24"), ipaddress.ip_network("0.0.0.0/0"))
    assert web.address_allowed(ipaddress.ip_address("192.168.1.10"))
    assert not web.address_allowed(ipaddress.ip_address("169.254.169.254"))


@pytest.mark.django_db
def test_the_page_form_adds_a_page_or_says_why_not(user: User, site: str) -> None:
    client = Client()
    client.force_login(user)
    added = client.post("/web-pages/", {"url": f"{site}/article"}, headers={"HX-Request": "true"})
    assert added.status_code == 200
    page = added.content.decode()
    source = Source.objects.get(owner=user)
    # The row, titled by the address until the worker has read the page's own title, and a fresh form.
    assert f'id="source-{source.pk}"' in page and f"{site.removeprefix('http://')}/article</a>" in page
    assert 'id="web-page-form"' in page and "Web page · " in page
    refused = client.post("/web-pages/", {"url": "file:///etc/passwd"}, headers={"HX-Request": "true"})
    assert refused.status_code == 200 and "must start with http:// or https://" in refused.content.decode()
    assert Source.objects.filter(owner=user).count() == 1
    assert not source.private
    private = client.post("/web-pages/", {"url": f"{site}/recipe", "private": "on"}, headers={"HX-Request": "true"})
    assert private.status_code == 200 and "Left out of search and answers" in private.content.decode()
    assert Source.objects.get(owner=user, metadata__url=f"{site}/recipe").private


def test_ingest_adds_a_page_by_its_address(user: User, celery_worker: None, site: str) -> None:
    out = io.StringIO()
    call_command("ingest", f"{site}/article", "--user", user.username, "--wait", stdout=out, stderr=io.StringIO())
    assert "Added: 1" in out.getvalue() and "“Growing tomatoes on a balcony”" in out.getvalue()
    assert Source.objects.get(owner=user).kind == "url"

    failed = io.StringIO()
    with pytest.raises(CommandError, match="1 of 1 items failed"):
        call_command(
            "ingest", f"{site}/missing", "--user", user.username, "--wait", stdout=failed, stderr=io.StringIO()
        )
    assert f"{site}/missing: url_unreachable: The page could not be fetched: the site answered 404" in failed.getvalue()


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for the name `localhost`, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(hours=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.mark.django_db
def test_https_is_verified_for_the_hosts_name_on_the_address_that_was_checked(
    site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = _certificate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 — http.server's name
            _send(self, 200, ARTICLE.encode(), "text/html")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        with pytest.raises(AppError, match="certificate could not be verified"):
            web.fetch(f"https://localhost:{port}/article")  # not signed by an authority we trust
        monkeypatch.setattr(web.certifi, "where", lambda: str(cert))  # now it is
        assert b"comfrey tea" in web.fetch(f"https://localhost:{port}/article").html
        with pytest.raises(AppError, match="certificate could not be verified"):
            web.fetch(f"https://127.0.0.1:{port}/article")  # the certificate names localhost, not the address
    finally:
        server.shutdown()
        server.server_close()
