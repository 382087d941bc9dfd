"""The browser's proxy against real sockets: what it lets through reaches the site, what the SSRF guard refuses
never leaves it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from agent.pages.browser.guard import GuardProxy
from agent.pages.ssrf import Allowlist


async def _site(seen: list[bytes]) -> tuple[asyncio.Server, int]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _ask(proxy_port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy_port)
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return answer


async def _with_proxy(allow: str, test: Callable[[int, int, list[bytes], list[str]], object]) -> None:
    seen: list[bytes] = []
    counted: list[str] = []
    site, site_port = await _site(seen)
    proxy = GuardProxy(Allowlist.parse(allow), counted.append)
    port = await proxy.start()
    try:
        await test(port, site_port, seen, counted)  # type: ignore[misc]
    finally:
        await proxy.close()
        site.close()


def test_an_allowed_plain_request_reaches_the_site_in_origin_form_without_proxy_headers() -> None:
    async def check(port: int, site_port: int, seen: list[bytes], counted: list[str]) -> None:
        answer = await _ask(port, f"GET http://127.0.0.1:{site_port}/page?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{site_port}"
                                  "\r\nProxy-Connection: keep-alive\r\n\r\n".encode())
        assert answer.endswith(b"hello") and counted == ["allowed"]
        [head] = seen
        assert head.startswith(b"GET /page?q=1 HTTP/1.1\r\n") and b"Proxy-Connection" not in head
        assert b"Connection: close" in head

    asyncio.run(_with_proxy("127.0.0.1", check))


def test_a_tunnel_to_an_allowed_address_is_opened_and_carries_bytes_both_ways() -> None:
    async def check(port: int, site_port: int, seen: list[bytes], counted: list[str]) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"CONNECT 127.0.0.1:{site_port} HTTP/1.1\r\nHost: 127.0.0.1:{site_port}\r\n\r\n".encode())
        assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await asyncio.wait_for(reader.read(), 5)).endswith(b"hello")
        writer.close()
        assert counted == ["allowed"] and seen == [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"]

    asyncio.run(_with_proxy("127.0.0.1", check))


def test_a_closed_address_gets_no_connection_a_refused_tunnel_and_no_answer_to_pass_for_the_sites() -> None:
    async def check(port: int, site_port: int, seen: list[bytes], counted: list[str]) -> None:
        plain = await _ask(port, f"GET http://127.0.0.1:{site_port}/ HTTP/1.1\r\n\r\n".encode())
        tunnel = await _ask(port, f"CONNECT 127.0.0.1:{site_port} HTTP/1.1\r\n\r\n".encode())
        metadata = await _ask(port, b"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n")
        mapped = await _ask(port, f"CONNECT [::ffff:127.0.0.1]:{site_port} HTTP/1.1\r\n\r\n".encode())
        assert plain == b"" and metadata == b"" and tunnel.startswith(b"HTTP/1.1 403") and mapped.startswith(
            b"HTTP/1.1 403")
        assert seen == [] and counted == ["blocked"] * 4

    asyncio.run(_with_proxy("", check))


def test_a_malformed_or_endless_head_is_dropped() -> None:
    async def check(port: int, site_port: int, seen: list[bytes], counted: list[str]) -> None:
        assert await _ask(port, b"NONSENSE\r\n\r\n") == b""
        assert await _ask(port, b"GET http://127.0.0.1/ HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n") == b""
        assert seen == [] and counted == []

    asyncio.run(_with_proxy("127.0.0.1", check))


