"""Every 2xx JSON body the test suite receives is checked against the OpenAPI description.

The description and the behaviour can then never drift apart: a field added to a body but not
to its serializer, or described but not sent, fails the test that produced it. Object schemas
are read as closed (no property they do not list), since drf-spectacular leaves them open.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from copy import deepcopy
from typing import Any

from jsonschema import Draft7Validator

_document: dict[str, Any] | None = None
_routes: list[tuple[re.Pattern[str], str]] = []
_validators: dict[tuple[str, str, str], Draft7Validator] = {}


def _closed(schema: Any) -> Any:
    """The schema in JSON Schema terms: `nullable` as a null type, objects closed."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _closed(value) for key, value in schema.items()}
    if out.pop("nullable", False):
        if "type" in out:
            out["type"] = [out["type"], "null"]
        elif "allOf" in out:
            out = {"anyOf": [{"type": "null"}, {"allOf": out.pop("allOf")}], **out}
    if out.get("type") == "object" and "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


def load(document: dict[str, Any]) -> None:
    global _document, _routes
    _document = _closed(deepcopy(document))
    _routes = []
    _validators.clear()
    for template in document["paths"]:
        regex = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        _routes.append((re.compile(regex), template))
    # Literal paths before templated ones ("/v1/files/raw" before "/v1/files/{file_id}").
    _routes.sort(key=lambda route: route[1].count("{"))


def loaded() -> bool:
    return _document is not None


def problems(method: str, path: str, status: int, body: Any) -> Iterator[str]:
    """Why `body` does not match the described response, if it does not."""
    assert _document is not None
    template = next((t for regex, t in _routes if regex.match(path)), None)
    if template is None:
        return
    operation = _document["paths"][template].get(method.lower())
    if operation is None:
        return
    response = operation["responses"].get(str(status))
    if response is None:
        yield f"{method} {path}: {status} is not a described response"
        return
    schema = response.get("content", {}).get("application/json", {}).get("schema")
    if schema is None:
        yield f"{method} {path}: {status} describes no JSON body"
        return
    key = (template, method.lower(), str(status))
    validator = _validators.get(key)
    if validator is None:
        # "#/components/..." references resolve against the schema's own root.
        validator = _validators[key] = Draft7Validator({**schema, "components": _document["components"]})
    for error in validator.iter_errors(body):
        where = "/".join(str(p) for p in error.absolute_path)
        yield f"{method} {path} {status} at /{where}: {error.message}"


def json_body(response: Any) -> Any | None:
    """The response's JSON body, or None when it is not JSON."""
    if not response.get("Content-Type", "").startswith("application/json"):
        return None
    content = response.content
    if response.get("Content-Encoding") == "gzip":
        content = gzip.decompress(content)
    try:
        return json.loads(content)
    except ValueError:
        return None
