"""--audit-all: every outgoing connection and datagram destination recorded, marked not local.

203.0.113.5 (public.example in the client's hosts file) sits behind the client's default
route, on the peer's loopback: a host off the local network, inside the test namespaces.
"""

import json

from conftest import json_lines

UDP_SENDER = """
import socket, sys
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(5):
    a.sendto(b"x", ("203.0.113.5", 9999))
for _ in range(3):
    a.sendto(b"y", ("203.0.113.5", 9998))
b.sendto(b"z", ("203.0.113.5", 9999))
a.sendto(b"l", ("127.0.0.1", 9))
print("sent")
"""


def test_a_connect_off_the_local_network_is_recorded_as_not_local(lan, fixtures, audit):
    result = lan.lnp_run(["--deny", "--audit", str(audit.path), "--audit-all"],
                         [fixtures.probe, "resolve-connect", "public.example", "8080"])
    assert json_lines(result.stdout)[-1]["result"] == 0, "activity off the local network is never gated"
    [record] = [r for r in audit.records() if r["op"] == "connect"]
    assert (record["address"], record["port"], record["transport"]) == ("203.0.113.5", 8080, "tcp")
    assert record["host"] == "public.example"
    assert record["local"] is False
    assert (record["decision"], record["because"]) == ("allow", "not-local")
    assert record["reason"] == "through a gateway (route 0.0.0.0/0 on c0)"
    assert record["attribution"] == "app"


def test_local_operations_keep_their_decision_beside_the_activity(lan, fixtures, audit):
    script = (f"{fixtures.probe} connect tcp 203.0.113.5 8080; {fixtures.probe} connect tcp 10.77.0.2 8080")
    lan.lnp_run(["--deny", "--audit", str(audit.path), "--audit-all"], ["sh", "-c", script])
    records = audit.records()
    assert [(r["address"], r["local"], r["decision"]) for r in records] == [
        ("203.0.113.5", False, "allow"), ("10.77.0.2", True, "deny")]
    assert records[1]["because"] == "run-option"


def test_without_audit_all_only_local_operations_are_recorded(lan, fixtures, audit):
    script = f"{fixtures.probe} connect tcp 203.0.113.5 8080; {fixtures.probe} connect tcp 10.77.0.2 8080"
    lan.lnp_run(["--allow", "--audit", str(audit.path)], ["sh", "-c", script])
    assert [(r["address"], r["local"]) for r in audit.records()] == [("10.77.0.2", True)]


def test_one_record_per_socket_and_datagram_destination_and_none_for_loopback(lan, audit):
    result = lan.lnp_run(["--allow", "--audit", str(audit.path), "--audit-all"], ["python3", "-c", UDP_SENDER])
    assert result.stdout.strip() == "sent", result.stderr
    records = audit.records()
    assert all(r["op"] == "sendto" and r["transport"] == "udp" and r["local"] is False for r in records)
    by_socket = sorted((r["fd"], r["port"]) for r in records)
    first, second = sorted({fd for fd, _ in by_socket})
    assert by_socket == [(first, 9998), (first, 9999), (second, 9999)]
    assert "127.0.0.1" not in {r["address"] for r in records}


def test_each_tcp_connect_is_recorded(lan, fixtures, audit):
    script = "; ".join([f"{fixtures.probe} connect tcp 203.0.113.5 8080"] * 3)
    lan.lnp_run(["--allow", "--audit", str(audit.path), "--audit-all"], ["sh", "-c", script])
    assert len([r for r in audit.records() if r["op"] == "connect"]) == 3


def test_audit_all_needs_an_audit(lan, fixtures):
    result = lan.lnp_run(["--allow", "--audit-all"], ["true"])
    assert result.returncode == 125
    assert "--audit-all needs --audit" in result.stderr


def test_records_are_json_with_the_local_field(lan, fixtures, audit):
    lan.lnp_run(["--allow", "--audit", str(audit.path), "--audit-all"],
                [fixtures.probe, "connect", "tcp", "203.0.113.5", "8080"])
    for line in audit.path.read_text().splitlines():
        assert list(json.loads(line))[-2:] == ["local", "by"]
