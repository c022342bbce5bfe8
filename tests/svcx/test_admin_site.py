"""The admin is branded as the service's: its name in the header and the title, its icon."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = [pytest.mark.django_db]


def test_the_admin_carries_the_service_name_and_icon(client: Client) -> None:
    login = client.get("/admin/login/").content.decode()
    assert '<div id="site-name"><a href="/admin/">svcx admin</a></div>' in login
    assert "Django administration" not in login

    client.force_login(get_user_model().objects.create_superuser("staff", "staff@example.com", "pw"))
    index: Any = client.get("/admin/")
    body = index.content.decode()

    assert "<title>Staff administration | svcx admin</title>" in body
    assert '<link rel="icon" href="/favicon.ico">' in body
    assert "/static/svcx/admin.css" in body
    assert client.get("/favicon.ico").status_code == 200
