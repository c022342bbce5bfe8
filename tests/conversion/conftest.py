"""Isolation for the service-level conversion tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _files_storage(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Each test stores files in a directory of its own."""
    if not request.config.pluginmanager.hasplugin("django"):
        return  # `-p no:django`: the engine's own tests
    settings: Any = request.getfixturevalue("settings")
    location = tmp_path / "files"
    settings.SVCX_FILES_DIR = location
    settings.STORAGES = {
        **settings.STORAGES,
        "files": {"BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(location)}},
    }
