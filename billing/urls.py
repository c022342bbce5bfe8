from django.urls import path

from billing import api

urlpatterns = [
    path("v1/account", api.AccountApi.as_view(), name="account"),
    path("v1/credits/ledger", api.LedgerApi.as_view(), name="ledger"),
    path("v1/usage", api.UsageApi.as_view(), name="usage"),
    path("v1/usage/records", api.UsageRecordsApi.as_view(), name="usage-records"),
]
