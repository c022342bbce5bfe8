"""The svcx API client: one typed method per /v1 operation.

    from svcx_client import Client

    with Client() as svcx:  # SVCX_API_KEY, SVCX_BASE_URL
        result = svcx.convert("report.pdf", format="md", pages="1-3")
        print(result.markdown, result.credits_billed)

A document is sent as the raw PDF body (`/v1/<operation>/raw`, options in the query string), or
named by the `file_id` of a stored file (a JSON body). Every POST and DELETE carries an
Idempotency-Key, made once per call and sent again on each retry (see `svcx_client.retry`).
The client is safe to share between threads.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal, TypedDict, TypeVar, Unpack, overload

import httpx

from svcx_client import models
from svcx_client.errors import APIConnectionError, APIError, ConfigurationError, error_class
from svcx_client.retry import IN_PROGRESS, RetryPolicy, is_retryable, server_wait

__version__ = "0.1.0"

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
# A conversion waits for its result, and the service stops one at 120 s.
DEFAULT_TIMEOUT = 150.0
MARKDOWN = "text/markdown"
JSON = "application/json"

Source = str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes]
Format = Literal["json", "md", "markdown"]
Row = TypeVar("Row")


class DocumentOptions(TypedDict, total=False):
    """What a request about a document may carry besides the document (decisions.md 1, 2)."""

    pages: str
    ocr: Literal["off"]
    flavor: Literal["gfm"]
    tables: Literal["markdown", "html", "text"]
    fallback: Literal["empty", "error"]
    password: str
    metadata: dict[str, Any]
    debug: bool
    idempotency_key: str


_OPTION_NAMES = ("pages", "ocr", "flavor", "tables", "fallback")


def environment_key() -> str:
    """SVCX_API_KEY, else SVCX_KEY (the name the service's guides export)."""
    return os.environ.get("SVCX_API_KEY") or os.environ.get("SVCX_KEY") or ""


def environment_base_url() -> str:
    """SVCX_BASE_URL, else SVCX_URL (the name the service's guides export)."""
    return os.environ.get("SVCX_BASE_URL") or os.environ.get("SVCX_URL") or ""


def new_idempotency_key() -> str:
    return f"svcx-py-{uuid.uuid4()}"


def read_source(source: Source) -> bytes:
    """The PDF's bytes from a path, bytes, or a binary file object."""
    if isinstance(source, bytes | bytearray | memoryview):
        return bytes(source)
    if isinstance(source, str | os.PathLike):
        return Path(source).read_bytes()
    return source.read()


class Client:
    """A client of the svcx API.

    `api_key` defaults to the environment's SVCX_API_KEY (or SVCX_KEY), `base_url` to
    SVCX_BASE_URL (or SVCX_URL, else http://127.0.0.1:8000). `timeout` is seconds per attempt (connecting: at most 10).
    Errors are raised as `svcx_client.errors.APIError` subclasses carrying the envelope, or
    `APIConnectionError` when no answer came.
    """

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        key = api_key if api_key is not None else environment_key()
        if not key:
            raise ConfigurationError("No API key: pass api_key or set SVCX_API_KEY.")
        self.base_url = (base_url or environment_base_url() or DEFAULT_BASE_URL).rstrip("/")
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._random = random.Random()  # noqa: S311  # jitter, not a secret
        self._lock = threading.Lock()
        self._rate_limits: dict[str, models.RateLimit] = {}
        self._requests_blocked_until = 0.0
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={"User-Agent": f"svcx-client-python/{__version__}", **(headers or {})},
            transport=transport,
        )
        self._auth = {"Authorization": f"Bearer {key}"}

    # -- the lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def rate_limits(self) -> dict[str, models.RateLimit]:
        """The meters the latest answer reported (`requests`, `pages`, ...)."""
        with self._lock:
            return dict(self._rate_limits)

    # -- documents ----------------------------------------------------------------------------

    @overload
    def convert(
        self,
        source: Source | None = None,
        *,
        file_id: str | None = None,
        format: Literal["json"] = "json",
        **options: Unpack[DocumentOptions],
    ) -> models.Conversion: ...

    @overload
    def convert(
        self,
        source: Source | None = None,
        *,
        file_id: str | None = None,
        format: Literal["md", "markdown"],
        **options: Unpack[DocumentOptions],
    ) -> models.MarkdownConversion: ...

    def convert(
        self,
        source: Source | None = None,
        *,
        file_id: str | None = None,
        format: Format = "json",
        **options: Unpack[DocumentOptions],
    ) -> models.Conversion | models.MarkdownConversion:
        """Convert a PDF (a path, bytes or a binary file), or a stored file by `file_id`.

        `format="json"` answers a `Conversion` (every page, its elements, what was billed);
        `format="md"` a `MarkdownConversion` (the Markdown as text, what was billed). One page
        costs one credit; a cached result (the same PDF and options within 24 hours) and every
        error bill nothing. Raises `APIError` subclasses: `PaymentRequiredError` (402),
        `DocumentError` (422, the PDF), `InvalidRequestError` (the request), ...
        """
        if format not in ("json", "md", "markdown"):
            raise ConfigurationError(f"format must be 'json' or 'md', not {format!r}.")
        accept = JSON if format == "json" else MARKDOWN
        response = self._document("convert", source, file_id, options, accept=accept)
        if accept == MARKDOWN:
            return models.MarkdownConversion.from_text(response.text, response.headers)
        return models.Conversion.from_json(response.json(), models.Answer.of(response.headers))

    def inspect(
        self, source: Source | None = None, *, file_id: str | None = None, **options: Unpack[DocumentOptions]
    ) -> models.Inspection:
        """What a document is (pages, encryption, permissions, a text sample), free of charge;
        `pages` chooses the sampled pages."""
        response = self._document("inspect", source, file_id, options)
        return models.Inspection.from_json(response.json(), models.Answer.of(response.headers))

    def toc(
        self, source: Source | None = None, *, file_id: str | None = None, **options: Unpack[DocumentOptions]
    ) -> models.Toc:
        """The document's outline (bookmarks), free of charge."""
        response = self._document("toc", source, file_id, options)
        return models.Toc.from_json(response.json(), models.Answer.of(response.headers))

    # -- stored files -------------------------------------------------------------------------

    def upload(
        self, source: Source, *, filename: str | None = None, idempotency_key: str | None = None
    ) -> models.StoredFile:
        """Store a PDF (up to 128 MiB, kept 7 days) to convert it by `file_id` afterwards."""
        if filename is None and isinstance(source, str | os.PathLike):
            filename = Path(source).name
        response = self._request(
            "POST",
            "/v1/files/raw",
            params={"filename": filename} if filename else None,
            content=read_source(source),
            headers={"Content-Type": "application/pdf"},
            idempotency_key=idempotency_key,
        )
        return models.StoredFile.from_json(response.json(), models.Answer.of(response.headers))

    def get_file(self, file_id: str) -> models.StoredFile:
        response = self._request("GET", f"/v1/files/{file_id}")
        return models.StoredFile.from_json(response.json(), models.Answer.of(response.headers))

    def delete_file(self, file_id: str, *, idempotency_key: str | None = None) -> models.FileDeleted:
        response = self._request("DELETE", f"/v1/files/{file_id}", idempotency_key=idempotency_key)
        return models.FileDeleted.from_json(response.json(), models.Answer.of(response.headers))

    # -- engines, account, ledger, usage -------------------------------------------------------

    def engines(self) -> models.ListPage[models.Engine]:
        response = self._request("GET", "/v1/engines")
        body = response.json()
        return models.ListPage(
            [models.Engine.from_json(e) for e in body["data"]], body["has_more"], models.Answer.of(response.headers)
        )

    def engine(self, engine_id: str) -> models.Engine:
        """One engine; an unknown id raises NotFoundError (`engine_not_found`)."""
        return models.Engine.from_json(self._request("GET", f"/v1/engines/{engine_id}").json())

    def account(self) -> models.Account:
        response = self._request("GET", "/v1/account")
        return models.Account.from_json(response.json(), models.Answer.of(response.headers))

    def ledger(self, *, limit: int = 20, starting_after: str | None = None) -> models.ListPage[models.LedgerEntry]:
        """One page of the credit ledger, newest first (the authoritative record of credits)."""
        return self._list(
            "/v1/credits/ledger", models.LedgerEntry.from_json, limit=limit, starting_after=starting_after
        )

    def usage_records(
        self,
        *,
        limit: int = 20,
        starting_after: str | None = None,
        start: str | None = None,
        end: str | None = None,
        api_key_id: str | None = None,
    ) -> models.ListPage[models.UsageRecord]:
        """One page of usage records (one per request), newest first; `start` and `end` are
        ISO 8601. The reporting copy can lag the ledger by a few seconds."""
        return self._list(
            "/v1/usage/records",
            models.UsageRecord.from_json,
            limit=limit,
            starting_after=starting_after,
            start=start,
            end=end,
            api_key_id=api_key_id,
        )

    def usage(self, *, start: str | None = None, end: str | None = None) -> models.Usage:
        response = self._request("GET", "/v1/usage", params=_present(start=start, end=end))
        return models.Usage.from_json(response.json(), models.Answer.of(response.headers))

    def iter_ledger(self, *, page_size: int = 100) -> Iterator[models.LedgerEntry]:
        """Every ledger entry, newest first, page after page."""
        return _every(lambda after: self.ledger(limit=page_size, starting_after=after))

    def iter_usage_records(self, *, page_size: int = 100, **period: str) -> Iterator[models.UsageRecord]:
        """Every usage record (filtered by `start`, `end`, `api_key_id`), newest first."""
        return _every(lambda after: self.usage_records(limit=page_size, starting_after=after, **period))

    # -- unauthenticated ----------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        """GET /v1/health: whether the service is ready (503 `service_unavailable` is raised)."""
        result: dict[str, Any] = self._request("GET", "/v1/health", authenticated=False).json()
        return result

    def openapi(self) -> dict[str, Any]:
        result: dict[str, Any] = self._request("GET", "/v1/openapi.json", authenticated=False).json()
        return result

    # -- the machinery ------------------------------------------------------------------------

    def _document(
        self,
        operation: str,
        source: Source | None,
        file_id: str | None,
        given: Mapping[str, Any],
        *,
        accept: str = JSON,
    ) -> httpx.Response:
        """POST a document request: the raw PDF to `/v1/<operation>/raw`, or a JSON body naming
        `file_id` to `/v1/<operation>`."""
        unknown = set(given) - set(DocumentOptions.__annotations__)
        if unknown:
            raise ConfigurationError(f"Unknown option(s) {', '.join(sorted(unknown))}.")
        if (source is None) == (file_id is None):
            raise ConfigurationError("Give exactly one of a source (path, bytes, file) or file_id.")
        options = {name: given[name] for name in _OPTION_NAMES if given.get(name) is not None}
        password, metadata, debug = given.get("password"), given.get("metadata"), given.get("debug")
        key = given.get("idempotency_key")
        if file_id is not None:
            body = _present(file_id=file_id, options=options or None, password=password, metadata=metadata, debug=debug)
            return self._request("POST", f"/v1/{operation}", json_body=body, accept=accept, idempotency_key=key)
        assert source is not None
        headers: dict[str, str | bytes] = {"Content-Type": "application/pdf"}
        params: dict[str, str] = dict(options)
        if debug is not None:
            params["debug"] = "true" if debug else "false"
        if metadata is not None:
            headers["X-Svcx-Metadata"] = json.dumps(metadata, separators=(",", ":"))
        if password is not None:
            # httpx sends header text as ASCII; the service reads the header's bytes as UTF-8.
            headers["X-Svcx-Pdf-Password"] = password.encode("utf-8")
        return self._request(
            "POST",
            f"/v1/{operation}/raw",
            params=params,
            content=read_source(source),
            headers=headers,
            accept=accept,
            idempotency_key=key,
        )

    def _list(
        self, path: str, row: Callable[[Mapping[str, Any]], Row], **query: str | int | None
    ) -> models.ListPage[Row]:
        response = self._request("GET", path, params=_present(**query))
        body = response.json()
        return models.ListPage([row(r) for r in body["data"]], body["has_more"], models.Answer.of(response.headers))

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        content: bytes | None = None,
        json_body: Any = None,
        headers: Mapping[str, str | bytes] | None = None,
        accept: str = JSON,
        idempotency_key: str | None = None,
        authenticated: bool = True,
    ) -> httpx.Response:
        """Send until a success, an error that is not retryable, or the retries are spent.

        A POST or DELETE gets an Idempotency-Key (`idempotency_key`, else a new one), the same on
        every attempt, so the service answers a retry of a request that did run with its stored
        answer. Raises APIError (an error answer) or APIConnectionError (no answer).
        """
        sent: dict[str, str | bytes] = {"Accept": accept, **(headers or {}), **(self._auth if authenticated else {})}
        if method in ("POST", "DELETE"):
            sent["Idempotency-Key"] = idempotency_key or new_idempotency_key()
        if json_body is not None:
            content = json.dumps(json_body).encode()
            sent["Content-Type"] = JSON
        # Bytes throughout: a header's value may be UTF-8 (the password), which httpx sends as is.
        wire = {name.encode(): value if isinstance(value, bytes) else value.encode() for name, value in sent.items()}
        policy = self.retry
        started = time.monotonic()
        attempts = retries = 0
        while True:
            self._pace()
            attempts += 1
            try:
                response = self._http.request(method, path, params=params, content=content, headers=wire)
            except httpx.TransportError as exc:
                if retries >= policy.max_retries:
                    raise APIConnectionError(
                        f"No answer from {self.base_url} after {attempts} attempt(s): {exc!r}", attempts=attempts
                    ) from exc
                self._sleep(policy.backoff_delay(retries, self._random))
                retries += 1
                continue
            self._remember(response.headers)
            if response.is_success:
                return response
            envelope = _json_or_none(response)
            if is_retryable(response.status_code, envelope):
                wait = server_wait(response.headers, envelope)
                code = ((envelope or {}).get("error") or {}).get("code")
                if code == IN_PROGRESS:
                    wait = wait or 1.0
                    if time.monotonic() - started + wait <= policy.in_progress_wait:
                        self._sleep(wait)
                        continue
                elif retries < policy.max_retries and (wait is None or wait <= policy.max_wait):
                    if wait is None:
                        wait = policy.backoff_delay(retries, self._random)
                    else:  # spread the clients that were refused together
                        wait += self._random.uniform(0, min(1.0, wait / 10))
                    self._sleep(wait)
                    retries += 1
                    continue
            raise _error(response, envelope, attempts)

    def _remember(self, headers: Mapping[str, str]) -> None:
        """Keep the answer's rate-limit headers; a `requests` meter at 0 holds the next requests
        until its window resets instead of spending them on 429s."""
        limits = models.rate_limits_of(headers)
        if not limits:
            return
        with self._lock:
            self._rate_limits = limits
            meter = limits.get("requests")
            if meter is not None and meter.remaining <= 0:
                self._requests_blocked_until = time.monotonic() + min(meter.reset_seconds, self.retry.max_wait)

    def _pace(self) -> None:
        with self._lock:
            wait = self._requests_blocked_until - time.monotonic()
        if wait > 0:
            self._sleep(wait)


def _present(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _error(response: httpx.Response, envelope: Any, attempts: int) -> APIError:
    body = envelope if isinstance(envelope, Mapping) else None
    text = "" if body is not None else " ".join(response.text.split())[:200]
    return error_class(response.status_code, body)(
        status=response.status_code,
        envelope=body,
        headers=dict(response.headers),
        attempts=attempts,
        fallback_message=text or response.reason_phrase,
    )


def _every(page_of: Callable[[str | None], models.ListPage[Row]]) -> Iterator[Row]:
    after: str | None = None
    while True:
        page = page_of(after)
        yield from page.data
        if not page.has_more or not page.data:
            return
        after = getattr(page.data[-1], "id", None)
