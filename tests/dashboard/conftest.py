"""The dashboard through Django's test client, as a browser on the same machine uses it."""

import re
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from access.password import password_set
from memories.models import Memory

PASSWORD = "correct horse battery staple"
HOST = "localhost:7077"


@dataclass
class Owner:
    """A signed-in browser: the page's CSRF token is read from the forms, as a browser submits them."""

    client: Client
    csrf: str

    def get(self, path: str, **extra: Any) -> Any:
        return self.client.get(path, **extra)

    def post(self, path: str, data: dict[str, str] | None = None, **extra: Any) -> Any:
        return self.client.post(path, {"csrf": self.csrf} | (data or {}), **extra)

    def page(self, path: str) -> str:
        response = self.client.get(path)
        assert response.status_code == 200, response.content[:2000]
        return response.content.decode()

    def flash(self, path: str = "/dashboard/") -> str:
        return " ".join(re.findall(r'<p class="flash \w+" role="status">([^<]*)</p>', self.page(path)))


def browser() -> Client:
    return Client(headers={"host": HOST})


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def log_in(client: Client, password: str = PASSWORD) -> Any:
    return client.post("/dashboard/login", {"password": password, "next": "/dashboard/"})


@pytest.fixture
def owner_password(db: None) -> str:
    password_set(password=PASSWORD)
    return PASSWORD


@pytest.fixture
def owner(owner_password: str) -> Owner:
    client = browser()
    assert log_in(client).status_code == 303
    return Owner(client=client, csrf=csrf_of(client.get("/dashboard/").content.decode()))


def memory(**fields: Any) -> Memory:
    values = {"type": "project", "scope": "user", "source_agent": "claude-code"} | fields
    return Memory.objects.create(**values)
