"""Output serializers of the billing endpoints: each writes its body and describes it in OpenAPI."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from accounts.keyformat import Environment
from billing.ledger import ledger_entry_changes
from billing.models import LedgerEntry
from core.serializers import BlankAsNullField, ConstantField, ListEnvelopeSerializer, OutputSerializer, TimestampField


class LedgerChangeField(serializers.IntegerField):
    """What the row changed `balance` (`which=0`) or `available` (`which=1`) by."""

    def __init__(self, which: int, **kwargs: Any) -> None:
        self.which = which
        super().__init__(source="*", **kwargs)

    def to_representation(self, value: Any) -> int:  # the row itself (source="*")
        return ledger_entry_changes(value)[self.which]


class LedgerEntrySerializer(OutputSerializer):  # writes a LedgerEntry
    id = serializers.CharField()
    object = ConstantField("ledger_entry")
    created_at = TimestampField()
    kind = serializers.ChoiceField(LedgerEntry.Kind.values)
    credits = serializers.IntegerField(
        help_text="Signed credits of the movement: holds and captures are negative, releases positive. "
        "A conversion appears as a hold and a capture of the same credits: do not sum this column "
        "to get what was spent; sum `balance_change` (or `available_change`)."
    )
    balance_change = LedgerChangeField(
        0,
        help_text="What the row changed `balance` by: grants, refunds, adjustments and captures; 0 "
        "for holds and releases. The sum over a statement is the change of balance.",
    )
    available_change = LedgerChangeField(
        1,
        help_text="What the row changed `available` (= balance - held) by: a hold lowers it, a release "
        "gives it back, a capture leaves it (the hold already lowered it).",
    )
    pages = serializers.IntegerField(help_text="Pages the movement is for (test keys: test allowance).")
    balance_after = serializers.IntegerField(help_text="The balance after this row.")
    request_id = BlankAsNullField()
    api_key_id = BlankAsNullField()
    reason = BlankAsNullField(help_text="Why staff granted or adjusted.")
    details = serializers.DictField(
        child=serializers.IntegerField(),
        help_text="What the movement is made of beyond its pages: a hold or capture of pages read by OCR has "
        "`ocr_pages` (how many of `pages`) and `ocr_page_credits` (what each cost instead of 1). Empty otherwise.",
    )


class LedgerListSerializer(ListEnvelopeSerializer):
    row = LedgerEntrySerializer


class UsageRecordSerializer(OutputSerializer):  # writes a UsageRecord
    id = serializers.CharField()
    object = ConstantField("usage_record")
    request_id = serializers.CharField()
    api_key_id = serializers.CharField()
    endpoint = serializers.CharField()
    status = serializers.IntegerField()
    pages = serializers.IntegerField()
    credits = serializers.IntegerField()
    created_at = TimestampField()


class UsageRecordListSerializer(ListEnvelopeSerializer):
    row = UsageRecordSerializer


class UsageDaySerializer(OutputSerializer):  # writes a UsageDaily
    date = serializers.DateField(source="day")
    requests = serializers.IntegerField()
    pages = serializers.IntegerField()
    credits = serializers.IntegerField()


class UsageSummarySerializer(OutputSerializer):  # writes {as_of, data: days}
    object = ConstantField("usage")
    as_of = TimestampField(allow_null=True)
    data = UsageDaySerializer(many=True)  # type: ignore[assignment]  # a member, not Serializer.data


class AccountCreditsSerializer(OutputSerializer):  # writes the credits of one environment
    balance = serializers.IntegerField()
    held = serializers.IntegerField()
    available = serializers.IntegerField()


class TestAllowanceSerializer(OutputSerializer):  # writes the test allowance of the month
    limit = serializers.IntegerField()
    used = serializers.IntegerField()
    held = serializers.IntegerField()
    resets_at = TimestampField()


class AccountSerializer(OutputSerializer):
    # Writes {organization, caller, credits, test_allowance, limits, request_id}.
    object = ConstantField("account")
    id = serializers.CharField(source="organization.id", help_text="Organization id, org_...")
    name = serializers.CharField(source="organization.name")
    status = serializers.ChoiceField(["active", "suspended", "delinquent"], source="organization.status")
    environment = serializers.ChoiceField(
        [e.value for e in Environment], source="caller.environment", help_text="Environment of the calling key."
    )
    api_key_id = serializers.CharField(source="caller.key_id")
    credits = AccountCreditsSerializer()
    test_allowance = TestAllowanceSerializer()
    limits = serializers.DictField(child=serializers.IntegerField())
    debug_policy = serializers.ChoiceField(["enabled", "disabled"], source="organization.debug_policy")
    created_at = TimestampField(source="organization.created_at")
    request_id = serializers.CharField()
