"""`lnp check`: the same classification as the preload, for addresses given by hand."""

import json

import pytest

from conftest import run

EXPECTED = [
    ("10.77.0.2", "local", "on-link 10.77.0.0/24 via c0"),
    ("10.66.200.1", "local", "on-link 10.66.0.0/16 via c0"),
    ("fd77::9", "local", "on-link fd77::/64 via c0"),
    ("::ffff:10.77.0.2", "local", "on-link 10.77.0.0/24 via c0"),
    ("10.77.0.255", "local", "subnet broadcast via c0"),
    ("255.255.255.255", "local", "broadcast"),
    ("239.1.2.3", "local", "multicast"),
    ("ff02::fb", "local", "multicast"),
    ("169.254.1.1", "local", "link-local"),
    ("fe80::1%c0", "local", "link-local via c0"),
    ("printer.local", "local", ".local name"),
    ("10.77.0.1", "not local", "an address of this machine"),
    ("127.0.0.1", "not local", "loopback"),
    ("::", "not local", "unspecified address"),
    ("203.0.113.5", "not local", "through a gateway (route 0.0.0.0/0 on c0)"),
    ("10.99.0.4", "not local", "through a gateway (route 10.99.0.0/24 on c0)"),
    ("10.88.0.2", "not local", "point-to-point interface tun0"),
    ("10.77.0.53", "local", "on-link 10.77.0.0/24 via c0"),
    ("10.44.0.7", "local", "on-link 10.44.0.0/24 via c0"),
]


def test_check_table(lan):
    result = lan.client([lan.build.lnp, "check", *[e[0] for e in EXPECTED]])
    assert result.returncode == 0, result.stderr
    rows = [line.split(None, 1) for line in result.stdout.splitlines()]
    for (target, verdict, reason), (shown, rest) in zip(EXPECTED, rows, strict=True):
        assert shown == target
        assert rest.split("  ")[0].strip() == verdict
        assert rest.endswith(reason)


def test_check_a_dns_server_on_a_dns_port(lan):
    result = lan.client([lan.build.lnp, "check", "--port", "53", "10.77.0.53", "10.77.0.2"])
    assert result.stdout.splitlines() == [
        "10.77.0.53  not local  DNS server named in /etc/resolv.conf (exempt)",
        "10.77.0.2   local      on-link 10.77.0.0/24 via c0"]


def test_check_json(lan):
    result = lan.client([lan.build.lnp, "check", "--json", "10.77.0.2", "203.0.113.5"])
    assert json.loads(result.stdout) == [
        {"target": "10.77.0.2", "address": "10.77.0.2", "local": True, "reason": "on-link 10.77.0.0/24 via c0"},
        {"target": "203.0.113.5", "address": "203.0.113.5", "local": False,
         "reason": "through a gateway (route 0.0.0.0/0 on c0)"},
    ]


def test_check_agrees_with_the_preload(lan, fixtures, audit):
    lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "connect", "udp", "10.66.200.1", "9"])
    checked = json.loads(lan.client([lan.build.lnp, "check", "--json", "10.66.200.1"]).stdout)[0]
    assert checked["reason"] == audit.records()[0]["reason"]


@pytest.mark.parametrize("argument,message", [("example.com", "'example.com' is not an IP address or a .local name"),
                                              ("fe80::1%nosuchif", "'nosuchif' names no interface here"),
                                              ("10.0.0.256", "not an IP address")])
def test_check_rejects_what_it_cannot_check(build, argument, message):
    result = run([build.lnp, "check", argument])
    assert result.returncode != 0
    assert message in result.stderr


def test_check_needs_an_address(build):
    assert run([build.lnp, "check"]).returncode != 0
