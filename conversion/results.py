"""The result body of a conversion, as version 1 answers it and a version 2 job keeps it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conversion import engine
from conversion.engine.chunks import ChunkOptions, chunk_result
from conversion.engine.elements import Span
from conversion.serializers import ElementSerializer


def page_payload(p: engine.PageResult, doc_spans: list[Span | None] | None = None) -> dict[str, Any]:
    """One page of a result body; `doc_spans`, where the document is known, say where its
    elements stand in the document's Markdown."""
    spans = doc_spans if doc_spans is not None else [None] * len(p.elements)
    return {
        "page": p.page,
        "label": p.label,
        "markdown": p.markdown,
        "has_text_layer": p.has_text_layer,
        "warnings": p.warnings,
        "width": round(p.width, 2),
        "height": round(p.height, 2),
        # Written once here by the serializer that describes them; answers (and cache
        # hits) send them as stored.
        "elements": ElementSerializer(
            [e.as_dict(span) for e, span in zip(p.elements, spans, strict=True)], many=True
        ).data,
    }


def result_payload(
    result: engine.ConversionResult, info: engine.DocumentInfo, sha256: str, options: Mapping[str, Any]
) -> dict[str, Any]:
    """The result body of a conversion (version 1's, and a version 2 job's) made with the job's
    `options`: its engine, and with `chunking` ([max_tokens, overlap_tokens]) its `chunks` too."""
    chunking = options.get("chunking")
    engine_id = options.get("engine", engine.ENGINE_ID)
    markdown, doc_spans = result.document()
    extra: dict[str, Any] = {}
    if chunking:
        cut = ChunkOptions(max_tokens=chunking[0], overlap_tokens=chunking[1])
        extra["chunks"] = [c.as_dict() for c in chunk_result(result, cut, (markdown, doc_spans))]
    return {
        "engine": {"id": engine_id, "version": engine.ENGINES[engine_id]},
        "document": {
            "page_count": result.page_count,
            "sha256": sha256,
            "pdf_version": info.pdf_version,
            "repaired": info.repaired,
        },
        "pages": [page_payload(p, spans) for p, spans in zip(result.pages, doc_spans, strict=True)],
        # The document's Markdown: the pages joined, tables that run across a break made one.
        "markdown": markdown,
        "result_truncated": result.truncated,
        "pages_converted": len(result.pages),
        # The result's warnings begin with the document's own (a repair, an unreadable outline).
        "warnings": list(result.warnings),
        "timings": dict(result.timings),
        **extra,
    }


def pages_markdown(pages: list[dict[str, Any]]) -> str:
    """The Markdown answer of a result's pages: each page's Markdown after `<!-- page N -->`."""
    return "\n\n".join(f"<!-- page {p['page']} -->\n\n{p['markdown']}".rstrip() for p in pages) + "\n"
