"""The loopback listener (tests/conftest.py) counts every connection, so that its 0 proves a parser reached for
nothing."""

import socket
import urllib.request
from urllib.parse import urlsplit

import pytest


def test_a_connection_is_counted_as_soon_as_connect_returns(loopback_listener) -> None:
    assert loopback_listener.connections == 0
    port = urlsplit(loopback_listener.url).port
    for _ in range(3):
        socket.create_connection(("127.0.0.1", port)).close()
    assert loopback_listener.connections == 3


def test_an_http_client_fails_fast_and_is_counted(loopback_listener) -> None:
    with pytest.raises(OSError):  # URLError, or the connection closed before an answer
        urllib.request.urlopen(loopback_listener.url + "/x.dtd", timeout=30)
    assert loopback_listener.connections == 1


def test_the_secret_files_text_is_its_marker(secret_file) -> None:
    assert secret_file.read_text().startswith("SECRET-") and secret_file.is_absolute()
