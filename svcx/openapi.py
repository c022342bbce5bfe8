"""OpenAPI generation: drf-spectacular, plus the envelope, error codes and headers svcx adds
to every operation, all read from the error catalogue and the views themselves."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from drf_spectacular.openapi import AutoSchema

from conversion import engine
from conversion.options import offered_engines
from core.errors import CATALOGUE, ERROR_TYPES, ErrorCode

# Codes any authenticated endpoint can answer, before its own.
AUTHENTICATED_CODES = (
    ErrorCode.MISSING_API_KEY,
    ErrorCode.INVALID_API_KEY,
    ErrorCode.REVOKED_API_KEY,
    ErrorCode.EXPIRED_API_KEY,
    ErrorCode.INSUFFICIENT_SCOPE,
    ErrorCode.IP_NOT_ALLOWED,
    ErrorCode.ACCOUNT_SUSPENDED,
    ErrorCode.RATE_LIMIT_REQUESTS,
    ErrorCode.UNSUPPORTED_OPTION_VALUE,  # an unknown X-Svcx-Simulate code on a test key
)
# Codes any endpoint can answer.
COMMON_CODES = (ErrorCode.METHOD_NOT_ALLOWED, ErrorCode.INTERNAL_ERROR, ErrorCode.SERVICE_UNAVAILABLE)

REQUEST_ID_HEADER = {
    "X-Request-Id": {
        "description": "Identifier of this request (`req_...`), on every response; quote it to support.",
        "schema": {"type": "string", "pattern": "^req_[0-9A-Za-z]+$"},
    }
}

ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": [
                "type",
                "code",
                "message",
                "param",
                "retryable",
                "retry_after_ms",
                "doc_url",
                "request_id",
                "details",
            ],
            "properties": {
                "type": {"type": "string", "enum": list(ERROR_TYPES)},
                "code": {"type": "string", "enum": sorted(code.value for code in CATALOGUE)},
                "message": {"type": "string"},
                "param": {"type": "string", "nullable": True},
                "retryable": {"type": "boolean"},
                "retry_after_ms": {"type": "integer", "nullable": True},
                "doc_url": {"type": "string", "format": "uri"},
                "request_id": {"type": "string"},
                "details": {"type": "object", "additionalProperties": True},
            },
        }
    },
}


RATE_LIMIT_HEADERS = {
    f"x-ratelimit-{part}-{{meter}}": {
        "description": f"{text} of each meter that applied to the request (meters: requests, pages, concurrency, "
        "uploads, inspect, toc); one header per meter, with the meter's name in place of {meter}.",
        "schema": {"type": "integer"},
    }
    for part, text in (
        ("limit", "The limit"),
        ("remaining", "What is left"),
        ("reset", "Seconds until the window resets"),
    )
}
SIMULATE_PARAMETER = {
    "name": "X-Svcx-Simulate",
    "in": "header",
    "required": False,
    "description": "Test keys only: return this error code as a real request would (details.simulated: true). "
    "Live keys ignore it.",
    "schema": {"type": "string"},
}


def error_codes_of(view: Any) -> list[ErrorCode]:
    """The codes an operation of `view` can answer: its declared `error_codes` and the shared ones."""
    codes: set[ErrorCode] = {*COMMON_CODES, *getattr(view, "error_codes", ())}
    if getattr(view, "authenticated", True):
        codes.update(AUTHENTICATED_CODES)
    return sorted(codes)


class SvcxAutoSchema(AutoSchema):
    def get_operation(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        operation = super().get_operation(*args, **kwargs)
        if operation is None:
            return None
        authenticated = getattr(self.view, "authenticated", True)
        for response in operation.get("responses", {}).values():
            response.setdefault("headers", {}).update(REQUEST_ID_HEADER)
            if authenticated:
                response["headers"].update(RATE_LIMIT_HEADERS)
        by_status: dict[int, list[str]] = defaultdict(list)
        for code in error_codes_of(self.view):
            # Plain strings in the document: the YAML renderer knows no enumerations.
            by_status[CATALOGUE[code].status].append(code.value)
        for status, codes in sorted(by_status.items()):
            headers = dict(REQUEST_ID_HEADER)
            if authenticated:
                headers.update(RATE_LIMIT_HEADERS)
            if status == 401:
                headers["WWW-Authenticate"] = {
                    "schema": {"type": "string"},
                    "description": 'Bearer realm="svcx", error="invalid_token"',
                }
            if status == 405:
                headers["Allow"] = {"schema": {"type": "string"}, "description": "The methods the endpoint accepts."}
            if any(CATALOGUE[ErrorCode(c)].retryable and status in (429, 503, 409) for c in codes):
                headers["Retry-After"] = {
                    "schema": {"type": "integer"},
                    "description": "Seconds to wait before retrying.",
                }
            operation["responses"][str(status)] = {
                "description": "Error envelope. Codes: " + ", ".join(f"`{c}`" for c in codes),
                "headers": headers,
                "content": {
                    "application/json": {
                        "schema": {"$ref": "#/components/schemas/ErrorEnvelope"},
                        "x-error-codes": codes,
                    }
                },
            }
        if not authenticated:
            operation["security"] = []
        else:
            operation.setdefault("parameters", []).append(SIMULATE_PARAMETER)
        return operation


def only_public_api(endpoints: list[tuple[Any, ...]], **kwargs: Any) -> list[tuple[Any, ...]]:
    """Preprocessing hook: describe the public API only (/v1 and /v2)."""
    return [endpoint for endpoint in endpoints if endpoint[0].startswith(("/v1/", "/v2/"))]


def add_envelope(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: the shared envelope component and the bearer security scheme."""
    components = result.setdefault("components", {})
    components.setdefault("schemas", {})["ErrorEnvelope"] = ENVELOPE_SCHEMA
    components.setdefault("securitySchemes", {})["bearer"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "`Authorization: Bearer <API_KEY>`; a 63-character key svcx_sk_live_... or svcx_sk_test_...",
    }
    result["security"] = [{"bearer": []}]
    return result


def close_request_bodies(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: every request body described is required, and its objects admit no
    member they do not name, as the server refuses unknown parts and members (`unknown_parameter`)."""
    schemas = result.get("components", {}).get("schemas", {})
    seen: set[int] = set()

    def close(schema: dict[str, Any]) -> None:
        if "$ref" in schema:
            schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
        for member in schema.get("allOf", []):
            close(member)
        if id(schema) in seen or "properties" not in schema:
            return
        seen.add(id(schema))
        schema["additionalProperties"] = False
        for member in schema["properties"].values():
            close(member)

    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if not body:
                continue
            body["required"] = True
            for media in body.get("content", {}).values():
                close(media.get("schema", {}))
    return result


def add_request_id(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: every 2xx JSON object answer carries `request_id`, as the API base
    view adds it to each (`ApiView.finalize_response`)."""
    schemas = result.get("components", {}).get("schemas", {})
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for status, response in operation.get("responses", {}).items():
                schema = response.get("content", {}).get("application/json", {}).get("schema")
                if not status.startswith("2") or not schema:
                    continue
                if "$ref" in schema:
                    schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
                properties = schema.get("properties")
                if properties is not None and "request_id" not in properties:
                    properties["request_id"] = {
                        "type": "string",
                        "description": "The request's id, the same as the X-Request-Id header.",
                    }
    return result


def offered_engines_only(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Postprocessing hook: every enumeration of the engines (the option `engine`, its query
    parameter) lists those the service offers (`offered_engines`), not every engine the code
    knows: the PDFium engine only where the operator turns it on (SVCX_PDFIUM_ENGINE)."""
    known = set(engine.ENGINES)
    offered = offered_engines()

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            values = node.get("enum")
            if isinstance(values, list) and values and set(values) == known:
                node["enum"] = list(offered)
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(result)
    return result
