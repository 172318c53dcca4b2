"""The route as the socket takes it. A socket can choose its own way out — a forced output
interface, a raw IP header of its own, a packet socket — and then reach the LAN where its
address alone says it would not: each is decided as the kernel will send it. tcpdump on the
peer proves that a denied one sent nothing (no ARP either)."""

import json

import pytest

from conftest import FIXTURES, json_lines

EGRESS = FIXTURES / "egress.py"
# 198.51.100.7 is routed through tun0 (a VPN, not local); with no default route, a socket
# that forces c0 sends there straight onto the LAN, where the peer holds that address.
FORCED = ["bindtodevice", "bindtoifindex", "unicast-if", "pktinfo", "pktinfo-last", "connect-bound",
          "bind-after-connect"]


def egress(lan, form, address, port, *, options=None, interface="c0"):
    command = ["python3", EGRESS, form, address, str(port), interface]
    result = lan.client(command) if options is None else lan.lnp_run(options, command)
    [line] = json_lines(result.stdout)
    return line


@pytest.mark.parametrize("form", FORCED)
def test_a_forced_interface_sends_onto_the_lan_without_lnp(lan, form):
    """What the tests below deny: the kernel takes such an address as on-link."""
    with lan.without_default_route():
        capture = lan.capture("host 198.51.100.7")
        egress(lan, form, "198.51.100.7", 9999)
        assert capture.packets()


@pytest.mark.parametrize("form", FORCED)
def test_a_forced_interface_is_decided_as_the_kernel_routes_it(lan, audit, form):
    with lan.without_default_route():
        capture = lan.capture("host 198.51.100.7")
        result = egress(lan, form, "198.51.100.7", 9999, options=["--deny", "--audit", str(audit.path)])
        assert result["error"] == "No route to host"
        assert capture.packets() == []
        checked = json.loads(lan.client([lan.build.lnp, "check", "--json", "--interface", "c0", "198.51.100.7"]).stdout)[0]
    [record] = audit.records()
    assert record["address"] == "198.51.100.7"
    assert record["reason"] == checked["reason"]
    assert checked["local"] is True


@pytest.mark.parametrize("form", ["bindtodevice", "pktinfo"])
def test_a_forced_interface_with_a_route_through_a_gateway_is_not_local(lan, audit, form):
    """With the default route back, the interface's own route says: through a gateway."""
    result = egress(lan, form, "203.0.113.5", 9999, options=["--deny", "--audit", str(audit.path)])
    assert result["error"] is None
    assert audit.records() == []


HEADER_FORMS = [("header", "sendto"), ("header-sendmsg", "sendmsg"), ("header-sendmmsg", "sendmsg"),
                ("header-syscall", "sendto")]


@pytest.mark.parametrize("form,op", HEADER_FORMS, ids=[f for f, _ in HEADER_FORMS])
def test_an_own_ip_header_is_decided_by_its_destination(lan, audit, form, op):
    """The call names a public address, reached through the gateway; the header the program
    wrote says 10.77.0.2 — and the gateway is that host. (sendmmsg on such a socket sends
    its messages one by one, each a sendmsg.)"""
    capture = lan.capture("udp and dst host 10.77.0.2 and dst port 9998")
    egress(lan, form, "10.77.0.2", 9998)
    assert capture.packets(), "without lnp, the packet reaches the host its header names"
    capture = lan.capture("udp and dst host 10.77.0.2 and dst port 9998")
    result = egress(lan, form, "10.77.0.2", 9998, options=["--deny", "--audit", str(audit.path)])
    assert result["error"] == "No route to host"
    assert capture.packets() == []
    [record] = audit.records()
    assert (record["op"], record["transport"], record["address"], record["port"]) == (op, "raw", "10.77.0.2", None)
    allowed = egress(lan, form, "10.77.0.2", 9998, options=["--allow"])
    assert allowed["error"] is None and allowed["result"] in (34, 1)


def test_an_own_ip_header_to_a_public_address_passes(lan, audit):
    result = egress(lan, "header", "203.0.113.5", 9998, options=["--deny", "--audit", str(audit.path)])
    assert result["error"] is None
    assert audit.records() == []


def test_a_packet_socket_is_a_local_network_operation(lan, audit):
    capture = lan.capture("ether proto 0x88b5")
    egress(lan, "packet", "-", 0)
    assert capture.packets(), "without lnp, the frame reaches the link"
    capture = lan.capture("ether proto 0x88b5")
    result = egress(lan, "packet", "-", 0, options=["--deny", "--audit", str(audit.path)])
    assert result["error"] == "No route to host"
    assert capture.packets() == []
    [record] = audit.records()
    assert (record["op"], record["transport"], record["address"], record["fd"]) == ("socket", "packet", None, None)
    assert record["reason"] == "packet socket (it talks to the link directly)"
    allowed = egress(lan, "packet", "-", 0, options=["--allow"])
    assert allowed["result"] == 60


# A source route sends to its first hop whatever the destination says: an IPv4 loose source
# route (IP_OPTIONS, or IP_RETOPTS in one message) or an IPv6 segment routing header
# (IPV6_RTHDR). Here the destination, 203.0.113.5 (or 2001:db8::5), is reached through the
# gateway; the first hop is the peer itself.
SOURCE_ROUTES = [
    ("option", "10.77.0.2", "203.0.113.5", "setsockopt"),
    ("connected", "10.77.0.2", "203.0.113.5", "setsockopt"),
    ("stream", "10.77.0.2", "203.0.113.5", "setsockopt"),
    ("message", "10.77.0.2", "203.0.113.5", "sendmsg"),
    ("message-connected", "10.77.0.2", "203.0.113.5", "sendmsg"),
    ("srh", "fd77::2", "2001:db8::5", "setsockopt"),
]
HOP_CAPTURE = "(ip dst host 10.77.0.2 and (udp or tcp)) or (ip6 dst host fd77::2 and not icmp6)"


def source_route(lan, fixtures, kind, form, hop, final, options=None):
    program = fixtures.escapes_static if kind == "static" else fixtures.escapes
    port = "8080" if form == "stream" else "9999"
    command = [program, "source-route", form, hop, final, port]
    result = lan.client(command) if options is None else lan.lnp_run(options, command)
    return {line["call"]: line for line in json_lines(result.stdout)}


@pytest.mark.parametrize("form,hop,final,call", SOURCE_ROUTES, ids=[f for f, *_ in SOURCE_ROUTES])
def test_a_source_route_reaches_its_first_hop_without_lnp(lan, fixtures, form, hop, final, call):
    capture = lan.capture(HOP_CAPTURE)
    source_route(lan, fixtures, "dynamic", form, hop, final)
    assert capture.packets()


@pytest.mark.parametrize("kind", ["dynamic", "static"])
@pytest.mark.parametrize("form,hop,final,call", SOURCE_ROUTES, ids=[f for f, *_ in SOURCE_ROUTES])
def test_a_source_route_is_decided_by_its_first_hop(lan, fixtures, audit, kind, form, hop, final, call):
    capture = lan.capture(HOP_CAPTURE)
    calls = source_route(lan, fixtures, kind, form, hop, final, options=["--deny", "--audit", str(audit.path)])
    assert calls[call]["errno"] == "EHOSTUNREACH", calls
    assert capture.packets() == []
    [record] = audit.records()
    assert record["address"] == hop
    assert record["by"] == ("supervisor" if kind == "static" else "preload")


@pytest.mark.parametrize("kind", ["dynamic", "static"])
def test_a_source_route_through_a_host_that_is_not_local_passes(lan, fixtures, audit, kind):
    calls = source_route(lan, fixtures, kind, "option", "203.0.113.5", "203.0.113.9",
                         options=["--deny", "--audit", str(audit.path)])
    assert calls["setsockopt"]["errno"] is None and calls["send"]["errno"] is None, calls
    assert audit.records() == []


def header_write(lan, fixtures, kind, form, options=None):
    program = fixtures.escapes_static if kind == "static" else fixtures.escapes
    command = [program, "header-write", form, "203.0.113.5", "10.77.0.2"]
    result = lan.client(command) if options is None else lan.lnp_run(options, command)
    return {line["call"]: line for line in json_lines(result.stdout)}


@pytest.mark.parametrize("form", ["raw", "late", "late-byte"])
def test_a_connected_raw_socket_writes_its_header_past_every_call_without_lnp(lan, fixtures, form):
    """write() names no destination: the packet goes to the gateway with the header's."""
    capture = lan.capture("udp and dst host 10.77.0.2 and dst port 9999")
    calls = header_write(lan, fixtures, "dynamic", form)
    assert calls["write"]["errno"] is None, calls
    assert capture.packets()


@pytest.mark.parametrize("kind", ["dynamic", "static"])
@pytest.mark.parametrize("form,call", [("raw", "connect"), ("late", "setsockopt"), ("late-byte", "setsockopt")])
def test_connecting_a_socket_that_writes_its_own_headers_is_decided(lan, fixtures, audit, kind, form, call):
    """Its writes go where their headers say, which no call shows: so connecting such a socket
    (or letting a connected one write headers) is a local-network operation, whatever the
    address it is connected to."""
    capture = lan.capture("udp and dst host 10.77.0.2 and dst port 9999")
    calls = header_write(lan, fixtures, kind, form, options=["--deny", "--audit", str(audit.path)])
    assert calls[call]["errno"] == "EHOSTUNREACH", calls
    assert capture.packets() == []
    [record] = audit.records()
    assert (record["op"], record["transport"], record["address"]) == ("connect", "raw", "203.0.113.5")
    assert record["reason"] == "a raw socket writing its own IP headers (they name where its writes go)"
    assert record["by"] == ("supervisor" if kind == "static" else "preload")
    allowed = header_write(lan, fixtures, kind, form, options=["--allow"])
    assert allowed["write"]["result"] == 35, allowed


def test_a_raw_socket_whose_peer_cannot_be_learned_fails_closed(lan, fixtures, audit):
    """The preload learns a connected raw socket's peer from /proc/net/raw; without a /proc to
    read (here one hidden by a tmpfs), turning IP_HDRINCL on is denied, never let through."""
    capture = lan.capture("udp and dst host 10.77.0.2 and dst port 9999")
    script = f"mount -t tmpfs none /proc && exec {fixtures.escapes} header-write late 203.0.113.5 10.77.0.2"
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["unshare", "-m", "sh", "-c", script])
    calls = {line["call"]: line for line in json_lines(result.stdout)}
    assert calls["setsockopt"]["errno"] == "EHOSTUNREACH", result.stdout + result.stderr
    assert capture.packets() == []
    [record] = audit.records()
    assert (record["op"], record["address"], record["by"]) == ("connect", None, "preload")
    assert record["reason"] == "a raw socket writing its own IP headers (they name where its writes go)"
