"""Doors to the local network other than the functions every program calls: glibc's other
names for them, the rsh and rexec clients, the resolver with a name server the program chose,
and asynchronous name resolution. Each is gated like the door it stands beside; tcpdump on the
peer proves that a denied one sent nothing."""

import time

import pytest

from conftest import json_lines

# On the peer: take one connection on a port, read the request, and refuse it as an rshd
# does (a byte 1, then a message): rcmd would retry a refused connection for half a minute.
ACCEPT_ONCE = ("import socket, sys, time\n"
               "s = socket.socket(); s.bind(('10.77.0.2', int(sys.argv[1]))); s.listen()\n"
               "c = s.accept()[0]; c.settimeout(2); time.sleep(0.2)\n"
               "try: c.recv(4096)\nexcept OSError: pass\n"
               "c.sendall(b'\\x01refused by the test\\n'); c.close()\n")


def doors(lan, fixtures, policy, *arguments, audit=None):
    options = [f"--{policy}"] + (["--audit", str(audit.path)] if audit else [])
    result = lan.lnp_run(options, [fixtures.doors, *arguments])
    assert result.returncode == 0, result.stderr
    return json_lines(result.stdout)


def test_glibcs_other_name_for_connect_is_gated(lan, fixtures, audit):
    capture = lan.capture("tcp and dst host 10.77.0.2")
    [result] = doors(lan, fixtures, "deny", "__connect", "10.77.0.2", "8080", audit=audit)
    assert result["errno"] == "EHOSTUNREACH"
    assert [(r["op"], r["address"]) for r in audit.records()] == [("connect", "10.77.0.2")]
    assert capture.packets() == []


@pytest.mark.parametrize("name", ["sendmmsg", "__sendmmsg"])
def test_sendmmsg_found_by_dlsym_under_any_name_is_gated(lan, fixtures, audit, name):
    capture = lan.capture("udp and dst host 10.77.0.2")
    [result] = doors(lan, fixtures, "deny", "dlsym", name, "10.77.0.2", "9999", audit=audit)
    assert result["errno"] == "EHOSTUNREACH"
    assert capture.packets() == []


@pytest.mark.parametrize("door,port", [("rcmd", 514), ("rexec", 512)])
def test_rsh_and_rexec_are_gated(lan, fixtures, audit, door, port):
    capture = lan.capture(f"tcp and dst host 10.77.0.2 and dst port {port}")
    [result] = doors(lan, fixtures, "deny", door, "peer.lan", audit=audit)
    assert (result["result"], result["errno"]) == (-1, "EHOSTUNREACH")
    [record] = audit.records()
    assert (record["op"], record["address"], record["port"], record["host"]) == ("connect", "10.77.0.2", port, "peer.lan")
    assert capture.packets() == []
    server = lan.peer(["python3", "-c", ACCEPT_ONCE, str(port)], background=True)
    time.sleep(0.5)
    capture = lan.capture(f"tcp and dst host 10.77.0.2 and dst port {port}")
    doors(lan, fixtures, "allow", door, "peer.lan")
    assert capture.packets(), "allowed, the client reaches the peer"
    server.kill()


RESOLVERS = ["res_query", "res_nquery", "res_search", "res_querydomain", "res_send", "old_res_query"]


@pytest.mark.parametrize("door", RESOLVERS)
def test_a_name_server_the_program_chose_on_the_local_network_is_gated(lan, fixtures, audit, door):
    capture = lan.capture("udp and dst host 10.77.0.2 and dst port 53")
    [result] = doors(lan, fixtures, "deny", door, "example.com", "10.77.0.2", audit=audit)
    assert (result["result"], result["errno"]) == (-1, "EHOSTUNREACH")
    assert result["h_errno"] == 2  # TRY_AGAIN, as for a server that cannot be reached
    [record] = audit.records()
    assert (record["op"], record["address"], record["port"], record["transport"]) == ("resolve", "10.77.0.2", 53, "udp")
    assert record["host"].startswith("example.com")
    assert capture.packets() == []
    capture = lan.capture("udp and dst host 10.77.0.2 and dst port 53")
    doors(lan, fixtures, "allow", door, "example.com", "10.77.0.2")
    assert capture.packets(), "allowed, the query reaches the server"


def test_the_configured_name_server_stays_exempt(lan, fixtures, audit):
    capture = lan.capture("udp and dst host 10.77.0.53 and dst port 53")
    doors(lan, fixtures, "deny", "res_query", "example.com", audit=audit)
    assert capture.packets(), "resolv.conf's server is asked, as without lnp"
    assert audit.records() == []


@pytest.mark.parametrize("door", RESOLVERS)
def test_a_local_name_through_the_resolver_is_gated(lan, fixtures, audit, door):
    capture = lan.capture("udp and dst port 53")
    [result] = doors(lan, fixtures, "deny", door, "printer.local", "10.77.0.53", audit=audit)
    assert result["result"] == -1
    assert result["h_errno"] == 1  # HOST_NOT_FOUND, as for a name that does not exist
    assert [(r["op"], r["host"]) for r in audit.records()] == [("resolve", "printer.local")]
    assert capture.packets() == []


def test_getaddrinfo_a_decides_each_name(lan, fixtures, audit):
    results = doors(lan, fixtures, "deny", "getaddrinfo_a", "printer.local", "peer.lan", audit=audit)
    assert results == [{"call": "getaddrinfo_a", "status": 0},
                       {"name": "printer.local", "status": -2, "found": False},  # EAI_NONAME
                       {"name": "peer.lan", "status": 0, "found": True}]
    assert [(r["op"], r["host"]) for r in audit.records()] == [("resolve", "printer.local")]


def test_getaddrinfo_a_with_every_name_denied_still_returns(lan, fixtures, audit):
    results = doors(lan, fixtures, "deny", "getaddrinfo_a", "a.local", "b.local")
    assert [r["status"] for r in results] == [0, -2, -2]
