from django.urls import path

from accounts import api, views

urlpatterns = [
    path("v1/account", api.AccountApi.as_view(), name="account"),
    path("reveal/<str:token>", views.key_reveal, name="key-reveal"),
]
