"""The SDK has a method for every operation the OpenAPI description lists: a new /v1 endpoint
fails here until clients/python covers it."""

from __future__ import annotations

from drf_spectacular.generators import SchemaGenerator
from svcx_client import Client

# Each operation (method, path) and the Client method that calls it.
SDK_METHODS = {
    ("post", "/v1/convert"): "convert",  # a stored file's id (JSON)
    ("post", "/v1/convert/raw"): "convert",  # a path, bytes or a file (the raw PDF)
    ("post", "/v1/files"): "upload",  # sent as /v1/files/raw
    ("post", "/v1/files/raw"): "upload",
    ("get", "/v1/files/{file_id}"): "get_file",
    ("delete", "/v1/files/{file_id}"): "delete_file",
    ("post", "/v1/inspect"): "inspect",
    ("post", "/v1/inspect/raw"): "inspect",
    ("post", "/v1/toc"): "toc",
    ("post", "/v1/toc/raw"): "toc",
    ("get", "/v1/engines"): "engines",
    ("get", "/v1/engines/{engine_id}"): "engine",
    ("get", "/v1/account"): "account",
    ("get", "/v1/credits/ledger"): "ledger",
    ("get", "/v1/usage"): "usage",
    ("get", "/v1/usage/records"): "usage_records",
    ("get", "/v1/health"): "health",
    ("get", "/v1/openapi.json"): "openapi",
}


def test_every_operation_has_a_method_of_the_sdk() -> None:
    schema = SchemaGenerator(urlconf="svcx.urls").get_schema(request=None, public=True)
    operations = {
        (method, path)
        for path, item in schema["paths"].items()
        for method in item
        if method in ("get", "post", "put", "patch", "delete")
    }

    assert operations == set(SDK_METHODS)
    assert all(callable(getattr(Client, name, None)) for name in SDK_METHODS.values())
