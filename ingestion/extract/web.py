"""A web page by its address → its readable text (trafilatura), its title and its date.

The address is whatever a person typed, and the worker that fetches it sits inside the server's
network, so the fetch is guarded:
- http and https only, no user name or password in the address;
- every address the host name resolves to must be public (`address_allowed`): not this machine, its
  LAN, or a link-local address such as a cloud's metadata service (169.254.169.254). An operator
  opens networks with WEB_FETCH_ALLOWED_NETWORKS (loopback for pages served on this machine, a LAN's
  wiki), never link-local ones;
- the connection goes to the address that was checked, not to a second lookup that a rebinding DNS
  server could answer differently; https still verifies the certificate for the host's name;
- redirects are followed here, each hop checked like the first, at most MAX_REDIRECTS;
- one deadline for the whole fetch (WEB_FETCH_TIMEOUT_SECONDS), and at most WEB_PAGE_MAX_MB read,
  counted after decompression.

Failures: `url_invalid`, `url_forbidden`, `url_unreachable` (no such host, no answer, an error status,
too many redirects), `url_not_html`, `url_too_large`, `url_empty` (no readable text).
"""

import ipaddress
import re
import socket
import time
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from datetime import time as day_start
from typing import Any
from urllib.parse import SplitResult, quote, urljoin, urlsplit, urlunsplit

import certifi
import urllib3
from django.conf import settings
from django.utils import timezone

from ingestion.extract import Extracted, Progress
from secondbrain.errors import AppError

MAX_URL_CHARS = 2048
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
MAX_REDIRECTS = 5
CONNECT_TIMEOUT_SECONDS = 10
READ_BLOCK_BYTES = 64 * 1024
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
USER_AGENT = "SecondBrain/0.1 (a self-hosted notebook saving a page its user asked for)"
HEADERS = {
    "User-Agent": USER_AGENT,
    "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
    "Accept-Encoding": "gzip, deflate",
}

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Page:
    url: str  # where the page was found, after redirects
    html: bytes
    charset: str | None  # as the server declared it


def url_normalize(raw: str) -> str:
    """The address as it is stored and compared for duplicates: scheme and host in lower case, no
    default port, no fragment, `/` for an empty path; AppError("url_invalid") for what is no web address.
    A host that is an IP address is checked here already (`url_forbidden`); names are checked when
    the worker resolves them."""
    text = raw.strip()
    if not text:
        raise AppError(
            "url_invalid", "Type the address of a web page, such as https://example.org/article.", status=422
        )
    if len(text) > MAX_URL_CHARS:
        raise AppError("url_invalid", f"The address is longer than {MAX_URL_CHARS} characters.", status=422)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise AppError("url_invalid", f"“{text[:100]}” is not a valid web address.", status=422) from None
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"}:
        raise AppError(
            "url_invalid", "Only web pages can be added: the address must start with http:// or https://.", status=422
        )
    if parts.username is not None or parts.password is not None:
        raise AppError("url_invalid", "Addresses with a user name or password in them cannot be added.", status=422)
    host = _host_ascii(parts.hostname or "")
    literal = _ip(host)
    if literal is not None and not address_allowed(literal):
        raise _forbidden(host)
    netloc = f"[{host}]" if literal is not None and literal.version == 6 else host
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        netloc += f":{port}"
    # As a browser sends it: "/wiki/Köln" and "/a b" as UTF-8 %-escapes, escapes already there kept.
    path, query = quote(parts.path or "/", safe=_PATH_SAFE), quote(parts.query, safe=_PATH_SAFE + "?")
    return urlunsplit((scheme, netloc, path, query, ""))


def _host_ascii(host: str) -> str:
    host = host.rstrip(".").lower()
    if not host:
        raise AppError("url_invalid", "The address has no host name (such as example.org).", status=422)
    try:
        return host if _ip(host) is not None else host.encode("idna").decode("ascii")
    except UnicodeError:
        raise AppError("url_invalid", f"“{host[:100]}” is not a valid host name.", status=422) from None


def _ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def address_allowed(address: IPAddress) -> bool:
    """Whether the worker may connect to `address`: a public one, or one in WEB_FETCH_ALLOWED_NETWORKS;
    never a link-local one (cloud metadata services answer there)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_link_local:
        return False
    if any(address.version == network.version and address in network for network in _allowed_networks()):
        return True
    return address.is_global and not (address.is_multicast or address.is_reserved or address.is_unspecified)


def _allowed_networks() -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(getattr(settings, "WEB_FETCH_ALLOWED_NETWORKS", ()))


def _forbidden(host: str) -> AppError:
    return AppError(
        "url_forbidden",
        f"{host} is an address inside this server's own network (this machine, a private network or a "
        "metadata service), which Second Brain does not fetch. An administrator can allow it with "
        "WEB_FETCH_ALLOWED_NETWORKS.",
        status=422,
    )


def extract(url: str, progress: Progress, *, zone: tzinfo) -> Extracted:
    """The page at `url` (as `url_normalize` gives it): its text as Markdown (headings kept, for
    passages anchored like a note's), title and date; `zone` places a date that has no time."""
    page = fetch(url)
    progress(0.5)
    readable = _readable(page)
    progress(1.0)
    text = (readable.get("text") or "").strip()
    if not re.search(r"\w", text):
        raise AppError(
            "url_empty",
            "No readable text was found on this page: it may be empty, or show its text only with JavaScript.",
        )
    metadata = {
        "url": url,
        "fetched_from": page.url,
        "fetched_at": timezone.now().isoformat(),
        **{key: str(readable[key])[:300] for key in ("sitename", "author") if readable.get(key)},
    }
    title = " ".join(str(readable.get("title") or "").split()) or None
    return Extracted(
        segments=[], metadata=metadata, occurred_at=_date(readable.get("date"), zone), title=title, text=text
    )


def _readable(page: Page) -> dict[str, Any]:
    """trafilatura's main text of the page (Markdown: headings kept; None when it finds none) and its
    title, date, site name and author."""
    # Imported here: the web process (which only checks addresses) never loads trafilatura and lxml.
    import trafilatura

    html: str | bytes = page.html
    if page.charset:
        try:
            html = page.html.decode(page.charset, errors="replace")
        except LookupError:  # a charset Python does not know: trafilatura detects one itself
            pass
    tree = trafilatura.load_html(html)
    if tree is None:
        return {}
    # extensive=False: the page's own date (its metadata, a visible publication date), no guess from
    # dates that merely appear in its text.
    found = trafilatura.extract_metadata(tree, default_url=page.url, extensive=False).as_dict()
    # Parsed again: extraction prunes the tree it is given.
    found["text"] = trafilatura.extract(
        trafilatura.load_html(html),
        url=page.url,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        include_formatting=True,
    )
    return found


def _date(value: object, zone: tzinfo) -> datetime | None:
    """The page's date (trafilatura gives YYYY-MM-DD) as the start of that day in the owner's zone."""
    try:
        day = date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None
    if day is None or day.year < 1900 or day > timezone.now().date():
        return None
    return datetime.combine(day, day_start(), tzinfo=zone)


def fetch(url: str) -> Page:
    """The page's HTML, found by following at most MAX_REDIRECTS redirects, each hop checked."""
    deadline = time.monotonic() + settings.WEB_FETCH_TIMEOUT_SECONDS
    for _ in range(MAX_REDIRECTS + 1):
        host = urlsplit(url).hostname or ""
        response = _request(url, deadline)
        try:
            location = response.headers.get("Location")
            if response.status in (301, 302, 303, 307, 308) and location:
                url = url_normalize(urljoin(url, location))
                continue
            if response.status >= 400:
                reason = f"{response.status} {response.reason or ''}".strip()
                raise AppError("url_unreachable", f"The page could not be fetched: the site answered {reason}.")
            return Page(url=url, html=_body(response, deadline, host), charset=_content_type(response)[1])
        finally:
            response.close()  # each hop on a connection of its own: none is reused
    raise AppError("url_unreachable", f"The page redirects more than {MAX_REDIRECTS} times, so it was not fetched.")


def _request(url: str, deadline: float) -> urllib3.BaseHTTPResponse:
    """The response's head (its body unread); each checked address in turn until one connects."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    unreachable = AppError("url_unreachable", f"{host} could not be reached: it refused or dropped the connection.")
    for address in _resolve(host, port):
        try:
            return _request_at(address, parts, port, deadline)
        except urllib3.exceptions.SSLError:
            raise AppError(
                "url_unreachable", f"{host}'s certificate could not be verified, so the page was not fetched."
            ) from None
        except urllib3.exceptions.NewConnectionError:  # refused there: a dual-stack host's other address
            continue
        except urllib3.exceptions.TimeoutError:
            raise _timed_out(host) from None
        except urllib3.exceptions.HTTPError:
            raise unreachable from None
    raise unreachable


def _request_at(address: IPAddress, parts: SplitResult, port: int, deadline: float) -> urllib3.BaseHTTPResponse:
    remaining = max(deadline - time.monotonic(), 0.1)
    options: dict[str, Any] = {
        "timeout": urllib3.Timeout(connect=min(CONNECT_TIMEOUT_SECONDS, remaining), read=remaining),
        "retries": False,
        "maxsize": 1,
    }
    pool: urllib3.HTTPConnectionPool
    if parts.scheme == "https":
        # Connected to the checked address, the certificate is still verified for the host's name.
        pool = urllib3.HTTPSConnectionPool(
            str(address), port, server_hostname=parts.hostname, assert_hostname=parts.hostname,
            cert_reqs="CERT_REQUIRED", ca_certs=certifi.where(), **options,
        )  # fmt: skip
    else:
        pool = urllib3.HTTPConnectionPool(str(address), port, **options)
    return pool.urlopen(
        "GET",
        urlunsplit(("", "", parts.path or "/", parts.query, "")),
        headers={**HEADERS, "Host": parts.netloc},
        redirect=False,
        preload_content=False,
        decode_content=True,
    )


def _resolve(host: str, port: int) -> list[IPAddress]:
    """The addresses to connect to, once every address the host has is allowed."""
    literal = _ip(host)
    if literal is not None:
        addresses = [literal]
    else:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError):
            raise AppError("url_unreachable", f"There is no web site called {host}: check the address.") from None
        addresses = list(dict.fromkeys(ipaddress.ip_address(str(entry[4][0]).split("%")[0]) for entry in found))
    # All of them, not just the one used: a name that also points inside the network is refused whole.
    if not addresses or not all(address_allowed(address) for address in addresses):
        raise _forbidden(host)
    return addresses


def _timed_out(host: str) -> AppError:
    return AppError(
        "url_unreachable",
        f"{host} did not send the page within {settings.WEB_FETCH_TIMEOUT_SECONDS} seconds; try again later.",
    )


def _content_type(response: urllib3.BaseHTTPResponse) -> tuple[str, str | None]:
    """The response's media type (lower case, "" when absent) and its declared charset."""
    header = response.headers.get("Content-Type", "")
    media, _, rest = header.partition(";")
    charset = re.search(r"charset\s*=\s*\"?([\w.:-]+)", rest, re.IGNORECASE)
    return media.strip().lower(), charset.group(1) if charset else None


def _body(response: urllib3.BaseHTTPResponse, deadline: float, host: str) -> bytes:
    """The HTML, read within the deadline and the size limit; a response of another type is refused
    before its body is read."""
    media = _content_type(response)[0]
    if media and media not in HTML_TYPES:
        raise AppError("url_not_html", _not_html(media))
    limit = settings.WEB_PAGE_MAX_MB * 2**20
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large()
    received = bytearray()
    try:
        for block in response.stream(READ_BLOCK_BYTES, decode_content=True):
            received += block
            if len(received) > limit:
                raise _too_large()
            if time.monotonic() > deadline:
                raise _timed_out(host)
    except urllib3.exceptions.TimeoutError:
        raise _timed_out(host) from None
    except urllib3.exceptions.HTTPError:
        raise AppError("url_unreachable", "The connection broke while the page was being read; try again.") from None
    if not media and not re.match(
        rb"\s*(<!--.*?-->\s*)*<(!doctype html|html|head|body)", bytes(received[:2048]), re.I | re.S
    ):
        raise AppError("url_not_html", _not_html("an unnamed type"))
    return bytes(received)


def _not_html(media: str) -> str:
    named = {"application/pdf": "a PDF", "image/": "an image", "audio/": "a recording", "text/calendar": "a calendar"}
    kind = next((label for prefix, label in named.items() if media.startswith(prefix)), None)
    if kind:
        return f"This address gives {kind} ({media}), not a web page: download it and add the file instead."
    return f"This address gives {media}, not a web page (HTML), so it cannot be added as one."


def _too_large() -> AppError:
    return AppError("url_too_large", f"The page is larger than the {settings.WEB_PAGE_MAX_MB} MB limit for web pages.")
