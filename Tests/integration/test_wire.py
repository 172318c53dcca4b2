"""What goes on the wire, watched with tcpdump on the peer: a denied operation sends nothing
(not even ARP or neighbour discovery), and the same operation allowed does reach the peer,
which proves each capture would have seen it."""

import time

import pytest

from conftest import json_lines

# (name, probe arguments, tcpdump expression for what the operation would put on the wire)
CASES = [
    ("TCP connect", ["connect", "tcp", "10.77.0.2", "8080"], "tcp and host 10.77.0.2"),
    ("TCP connect over IPv6", ["connect", "tcp", "fd77::2", "8080"], "tcp and host fd77::2"),
    ("TCP to a fresh on-link host (ARP)", ["connect", "tcp", "10.77.0.40", "8080"], "arp host 10.77.0.40"),
    ("UDP sendto", ["sendto", "10.77.0.2", "9999"], "udp and host 10.77.0.2"),
    ("UDP sendmsg over IPv6", ["sendmsg", "fd77::2", "9999"], "udp and host fd77::2"),
    ("UDP via a mapped address", ["sendto", "::ffff:10.77.0.2", "9999"], "udp and host 10.77.0.2"),
    ("TCP Fast Open", ["fastopen", "10.77.0.2", "8080"], "tcp and host 10.77.0.2"),
    ("multicast send", ["sendto", "239.1.2.3", "9999"], "udp and dst host 239.1.2.3"),
    ("limited broadcast", ["sendto", "255.255.255.255", "9999"], "udp and dst host 255.255.255.255"),
    ("subnet broadcast", ["sendto", "10.77.0.255", "9999"], "udp and dst host 10.77.0.255"),
    ("multicast join (IGMP report)", ["join", "ip", "239.1.2.3"], "igmp"),
    ("syscall(SYS_sendto)", ["syscall", "sendto", "10.77.0.2", "9999"], "udp and host 10.77.0.2"),
    ("UDP to an AF_UNSPEC destination", ["unspec", "udp", "10.77.0.2", "9999"], "udp and host 10.77.0.2"),
]


@pytest.mark.parametrize("name,arguments,expression", CASES, ids=[c[0] for c in CASES])
def test_denied_sends_nothing_and_allowed_reaches_the_peer(lan, fixtures, name, arguments, expression):
    capture = lan.capture(expression)
    denied = lan.lnp_run(["--deny"], [fixtures.probe, *arguments])
    assert json_lines(denied.stdout)[0]["errno"] == "EHOSTUNREACH"
    assert capture.packets() == []

    capture = lan.capture(expression)
    lan.lnp_run(["--allow"], [fixtures.probe, *arguments])
    assert capture.packets(settle=1.5) != [], "the allowed operation should have been seen on the wire"


def test_allowed_datagram_arrives_at_the_peer_server(lan, fixtures):
    before = len(lan.udp_received())
    lan.lnp_run(["--allow"], [fixtures.probe, "sendto", "10.77.0.2", "9999"])
    deadline = time.time() + 5
    while len(lan.udp_received()) == before and time.time() < deadline:
        time.sleep(0.05)
    assert lan.udp_received()[before:] == ["::ffff:10.77.0.1 probe"]


def test_public_destination_reaches_its_server_under_deny(lan):
    result = lan.lnp_run(["--deny"], ["curl", "-sS", "http://203.0.113.5:8080/"])
    assert result.stdout == "lnp-peer-ok\n", result.stderr
