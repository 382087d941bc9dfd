import asyncio
import ipaddress

import pytest

from agent.pages.ssrf import Allowlist, Blocked, check_address, check_url, is_public


@pytest.mark.parametrize(
    ("address", "public"),
    [("93.184.216.34", True), ("2606:2800:220:1::1", True), ("127.0.0.1", False), ("10.1.2.3", False),
     ("172.16.0.1", False), ("192.168.1.1", False), ("169.254.169.254", False), ("100.64.0.1", False),
     ("0.0.0.0", False), ("::1", False), ("fe80::1", False), ("fd00::1", False), ("::ffff:127.0.0.1", False),
     ("224.0.0.1", False),
     # 6to4 (2002:AABB:CCDD::/48 carries AA.BB.CC.DD) and Teredo (the client's address XORed with ffff:ffff)
     ("2002:7f00:1::1", False), ("2002:a9fe:a9fe::1", False), ("2002:5db8:d822::1", True),
     ("2001:0:4136:e378:8000:63bf:80ff:fffe", False), ("2001:0:5db8:d822:8000:63bf:a247:2bdd", True)],
)
def test_public_addresses(address: str, public: bool) -> None:
    assert is_public(ipaddress.ip_address(address)) is public


def test_allowlist_opens_hosts_and_networks() -> None:
    allow = Allowlist.parse(" 127.0.0.1, 10.0.0.0/8 , docs.internal, *.corp.example ")
    check_address("anything", ipaddress.ip_address("127.0.0.1"), allow)
    check_address("x", ipaddress.ip_address("10.9.8.7"), allow)
    check_address("docs.internal", ipaddress.ip_address("192.168.0.5"), allow)
    check_address("wiki.corp.example", ipaddress.ip_address("192.168.0.6"), allow)
    with pytest.raises(Blocked, match=r"192\.168\.0\.7, a non-public address"):
        check_address("corp.example.evil", ipaddress.ip_address("192.168.0.7"), allow)


@pytest.mark.parametrize(
    ("url", "message"),
    [("file:///etc/passwd", "only http and https"), ("http://127.0.0.1:8080/x", "127.0.0.1, a non-public"),
     ("http://localhost/x", "non-public"), ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
     ("http://[::1]/", "::1"), ("http:///nohost", "no host"), ("gopher://x.org/", "only http")],
)
def test_urls_are_checked_after_resolution(url: str, message: str) -> None:
    with pytest.raises(Blocked, match=message):
        asyncio.run(check_url(url, Allowlist.parse("")))


def test_an_allowed_loopback_passes() -> None:
    asyncio.run(check_url("http://127.0.0.1:9/x", Allowlist.parse("127.0.0.1")))
