from django.urls import path

from accounts import views

urlpatterns = [
    path("reveal/<str:token>", views.key_reveal, name="key-reveal"),
]
