"""Output serializers of the service's own endpoints: each writes its body and describes it in OpenAPI."""

from __future__ import annotations

from rest_framework import serializers

from core.serializers import OutputSerializer


class HealthSerializer(OutputSerializer):  # writes {status, checks, request_id}
    status = serializers.CharField()
    checks = serializers.DictField()
    request_id = serializers.CharField()
