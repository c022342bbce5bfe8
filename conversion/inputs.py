"""Input serializers of the members a document request carries beside its source
(decisions.md 1 and 2), one per encoding: what a parser of `conversion.parsers` yields as
`members` is validated by the serializer the view names for its encoding."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from django.conf import settings
from rest_framework import serializers

from conversion.options import OcrLanguagesField, OptionsSerializer, ScanOptionsSerializer
from conversion.parsers import json_strings
from core.errors import ErrorCode, ServiceError, caller_text
from core.inputs import FlagField, StringField, ValueField, field_path, invalid
from core.serializers import SharedFields


class MetadataField(ValueField):
    """Client metadata: a JSON object without NUL characters, at most
    `SVCX_METADATA_LIMIT_BYTES` of compact JSON (413 `metadata_too_large`)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        path = field_path(self)
        if not isinstance(data, dict):
            raise invalid(f"`{path}` must be a JSON object.")
        for text, where in json_strings(data, path):
            if "\x00" in text:
                raise ServiceError(
                    ErrorCode.INVALID_PARAMETER_TYPE,
                    f"`{caller_text(where)}` contains a NUL character, which metadata cannot hold.",
                    param=caller_text(where),
                )
        size = len(json.dumps(data, separators=(",", ":")).encode())
        limit = int(settings.SVCX_METADATA_LIMIT_BYTES)
        if size > limit:
            raise ServiceError(
                ErrorCode.METADATA_TOO_LARGE,
                f"`{caller_text(path)}` is {size} bytes of JSON; the limit is {limit}. "
                "Send a smaller object, such as an id.",
                param=path,
                details={"limit_bytes": limit, "size_bytes": size},
            )
        return data


class MembersSerializer(SharedFields[dict[str, Any]]):
    """The members of one encoding; its fields are the members the parser accepts.

    `json_text`: members that arrive as JSON text (multipart parts, a header), decoded by the
    parser; `headers`: members read from request headers (the raw PDF), named as the header.
    """

    json_text: ClassVar[tuple[str, ...]] = ()
    headers: ClassVar[tuple[str, ...]] = ()


class JsonMembersSerializer(MembersSerializer):
    """application/json: `options` (object), `password` (string), `metadata` (object),
    `debug` (a JSON boolean)."""

    options = OptionsSerializer(required=False)
    password = StringField(required=False)
    metadata = MetadataField(required=False)
    debug = FlagField(text=False, required=False)


class PartsMembersSerializer(JsonMembersSerializer):
    """multipart/form-data text parts: `options` and `metadata` hold JSON, `debug` is
    `true` or `false`."""

    json_text: ClassVar[tuple[str, ...]] = ("options", "metadata")
    debug = FlagField(text=True, required=False)


PASSWORD_HEADER = "X-Svcx-Pdf-Password"  # noqa: S105  # a header name, not a password
METADATA_HEADER = "X-Svcx-Metadata"


class RawPdfMembersSerializer(OptionsSerializer):
    """application/pdf: the options and `debug` as query parameters (errors name the bare
    parameter: `pages`), the password and metadata as headers."""

    json_text: ClassVar[tuple[str, ...]] = (METADATA_HEADER,)
    headers: ClassVar[tuple[str, ...]] = (PASSWORD_HEADER, METADATA_HEADER)

    debug = FlagField(text=True, required=False)

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        del fields["chunking"]  # an object: JSON and multipart bodies carry it, query strings cannot
        fields[PASSWORD_HEADER] = StringField(required=False)
        fields[METADATA_HEADER] = MetadataField(required=False)
        return fields

    def validate(self, attrs: dict[str, Any]) -> Any:
        members = {
            "debug": attrs.pop("debug", False),
            "password": attrs.pop(PASSWORD_HEADER, None),
            "metadata": attrs.pop(METADATA_HEADER, None),
        }
        return {"options": super().validate(attrs), **members}


class ScanJsonMembersSerializer(JsonMembersSerializer):
    """A version 2 request (a job, its pre-flight), application/json: version 1's members,
    `options` with OCR (`ocr`, `ocr_languages`)."""

    options = ScanOptionsSerializer(required=False)


class ScanPartsMembersSerializer(PartsMembersSerializer):
    """A version 2 request, multipart/form-data: version 1's parts, `options` with OCR."""

    options = ScanOptionsSerializer(required=False)


class ScanRawPdfMembersSerializer(RawPdfMembersSerializer):
    """A version 2 request with the raw PDF: version 1's query parameters and headers, and
    `ocr` with OCR's values and `ocr_languages` (comma-separated)."""

    reads_scans = True
    ocr_languages = OcrLanguagesField(text=True, required=False)


WEBHOOK_METADATA_HEADER = "X-Svcx-Webhook-Metadata"


class JobJsonMembersSerializer(ScanJsonMembersSerializer):
    """POST /v2/jobs, application/json: the members of a conversion and `webhook_metadata`
    (an object echoed in the job and its webhook events)."""

    webhook_metadata = MetadataField(required=False)


class JobPartsMembersSerializer(ScanPartsMembersSerializer):
    """POST /v2/jobs, multipart/form-data: a conversion's parts and `webhook_metadata` (JSON)."""

    json_text: ClassVar[tuple[str, ...]] = ("options", "metadata", "webhook_metadata")
    webhook_metadata = MetadataField(required=False)


class JobRawPdfMembersSerializer(ScanRawPdfMembersSerializer):
    """POST /v2/jobs with the raw PDF: a conversion's query parameters and headers, and the
    header X-Svcx-Webhook-Metadata."""

    json_text: ClassVar[tuple[str, ...]] = (METADATA_HEADER, WEBHOOK_METADATA_HEADER)
    headers: ClassVar[tuple[str, ...]] = (PASSWORD_HEADER, METADATA_HEADER, WEBHOOK_METADATA_HEADER)

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        fields[WEBHOOK_METADATA_HEADER] = MetadataField(required=False)
        return fields

    def validate(self, attrs: dict[str, Any]) -> Any:
        webhook_metadata = attrs.pop(WEBHOOK_METADATA_HEADER, None)
        return {**super().validate(attrs), "webhook_metadata": webhook_metadata}


class NoMembersSerializer(MembersSerializer):
    """An encoding that carries nothing beside its source (a multipart upload to /v1/files)."""


class FileQuerySerializer(MembersSerializer):
    """A raw PDF stored by POST /v1/files: the query parameter `filename` names it."""

    filename = StringField(required=False)
