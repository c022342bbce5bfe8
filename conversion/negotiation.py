"""`Accept` negotiation for endpoints that answer in JSON or Markdown (decisions.md 3)."""

from __future__ import annotations

from core.errors import ErrorCode, ServiceError, caller_text

JSON = "application/json"
MARKDOWN = "text/markdown"


def _ranges(header: str) -> list[tuple[str, float, int]]:
    """(media range, q, position) of each entry of an Accept header."""
    entries = []
    for position, item in enumerate(header.split(",")):
        parts = [p.strip() for p in item.split(";")]
        media = parts[0].lower()
        if not media:
            continue
        q = 1.0
        for param in parts[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = max(0.0, min(1.0, float(value)))
                except ValueError:
                    q = 0.0
        entries.append((media, q, position))
    return entries


def _matches(media: str, offered: str) -> int:
    """How specifically `media` names `offered`: 3 exact, 2 type/*, 1 */*, 0 not at all."""
    if media == offered:
        return 3
    kind = offered.split("/")[0]
    if media == f"{kind}/*":
        return 2
    if media == "*/*":
        return 1
    return 0


def negotiate(header: str | None) -> str:
    """JSON or MARKDOWN. An absent header or */* means JSON; q-values choose within a list;
    a header naming neither is 406 `unsupported_accept`."""
    if header is None or not header.strip():
        return JSON
    best: tuple[float, int, int, str] | None = None
    for offered, preference in ((JSON, 1), (MARKDOWN, 0)):
        # The most specific range naming the type decides its q (RFC 9110 12.5.1).
        matching = [(_matches(media, offered), q, pos) for media, q, pos in _ranges(header) if _matches(media, offered)]
        if not matching:
            continue
        specificity, q, _position = max(matching, key=lambda m: (m[0], -m[2]))
        if q <= 0:
            continue
        # Higher q wins; then an explicitly named type over a wildcard; then JSON.
        candidate = (q, min(specificity, 2), preference, offered)
        if best is None or candidate > best:
            best = candidate
    if best is None:
        raise ServiceError(
            ErrorCode.UNSUPPORTED_ACCEPT,
            f"Accept {caller_text(header)!r} names no type this endpoint produces; "
            "use application/json or text/markdown.",
            details={"available": [JSON, MARKDOWN]},
        )
    return best[3]
