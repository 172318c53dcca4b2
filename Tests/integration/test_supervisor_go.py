"""A static Go program (CGO_ENABLED=0, Tests/fixtures/goclient): no loader, no C library, its
sockets non-blocking and its calls made by the Go runtime — nothing a preload can see. Its
local-network operations are decided by the supervisor, as root and as nobody; what is not
local, and what is allowed, works as without lnp."""

import time

import pytest

from conftest import ByteSink, json_lines

TO_PEER = "src host 10.77.0.1 and dst host 10.77.0.2 and (tcp port 8080 or udp port 9999)"
DENIED = {"result": -1, "errno": "EHOSTUNREACH"}
OK = {"result": 0, "errno": None}
SENT = {"result": 8, "errno": None}  # one datagram, "goclient"
MIB = 1 << 20


def calls(result):
    return [(line["call"], {k: v for k, v in line.items() if k != "call"}) for line in json_lines(result.stdout)]


def writable_audit(audit):
    audit.path.touch()
    audit.path.chmod(0o666)  # written by lnp-run, as the user the test runs it as
    return audit


def datagrams(lan):
    return [line for line in lan.udp_received() if line.endswith(" goclient")]


def wait_for_datagrams(lan, count):
    deadline = time.time() + 5
    while len(datagrams(lan)) < count and time.time() < deadline:
        time.sleep(0.05)
    return len(datagrams(lan))


@pytest.mark.parametrize("user", [None, "65534"])
@pytest.mark.parametrize("command, op, transport", [
    (["connect", "10.77.0.2", "8080"], "connect", "tcp"),  # net.Dial: a non-blocking connect
    (["udp", "10.77.0.2", "9999"], "sendto", "udp"),  # WriteToUDP
    (["udp-dial", "10.77.0.2", "9999"], "connect", "udp"),  # net.DialUDP
    (["udp-msg", "10.77.0.2", "9999"], "sendmsg", "udp"),  # WriteMsgUDP
])
def test_a_go_programs_local_operations_are_denied_by_the_supervisor(lan, fixtures, audit, command, op, transport,
                                                                     user):
    program = fixtures.go_program()
    capture = lan.capture(TO_PEER)
    writable_audit(audit)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], [program] + command, user=user)
    assert calls(result) == [(op, DENIED)], result.stderr
    assert result.stderr == ""
    assert capture.packets() == []
    [record] = audit.records()
    assert (record["by"], record["decision"]) == ("supervisor", "deny")
    assert (record["op"], record["transport"]) == (op, transport)
    assert (record["address"], record["port"]) == ("10.77.0.2", int(command[2]))
    assert record["exe"] == str(program)


@pytest.mark.parametrize("user", [None, "65534"])
def test_a_go_program_reaches_what_is_not_local_under_deny(lan, fixtures, audit, user):
    """A routed host (203.0.113.5, via the peer as gateway) and loopback: no local-network
    operation, nothing recorded, the calls made as usual."""
    program = fixtures.go_program()
    writable_audit(audit)
    before = len(datagrams(lan))
    options = ["--deny", "--audit", str(audit.path)]
    routed = lan.lnp_run(options, [program, "connect", "203.0.113.5", "8080"], user=user)
    assert calls(routed) == [("connect", OK)], routed.stderr
    udp = lan.lnp_run(options, [program, "udp", "203.0.113.5", "9999"], user=user)
    assert calls(udp) == [("sendto", SENT)], udp.stderr
    assert wait_for_datagrams(lan, before + 1) == before + 1
    loopback = lan.lnp_run(options, [program, "loopback", str(MIB)], user=user)
    assert calls(loopback) == [("listen", OK), ("connect", OK), ("send", {"result": MIB, "errno": None}),
                               ("received", {"result": MIB, "errno": None})], loopback.stderr
    assert audit.records() == []


@pytest.mark.parametrize("user, port", [(None, 7003), ("65534", 7004)])
def test_allowed_calls_of_a_go_program_are_made_for_it(lan, fixtures, audit, workdir, user, port):
    """The supervisor connects Go's non-blocking socket for it (EINPROGRESS, which Go's poller
    completes), then a megabyte is written on the connection; its datagrams, sent with an
    address or on a connected socket, arrive."""
    program = fixtures.go_program()
    writable_audit(audit)
    options = ["--allow", "--audit", str(audit.path)]
    sink = ByteSink(lan, workdir, port)
    sent = lan.lnp_run(options, [program, "send", "10.77.0.2", str(port), str(MIB)], user=user)
    assert calls(sent) == [("connect", OK), ("send", {"result": MIB, "errno": None})], sent.stderr
    assert sink.received() == MIB
    before = len(datagrams(lan))
    for command, op in [("udp", "sendto"), ("udp-dial", "connect"), ("udp-msg", "sendmsg")]:
        result = lan.lnp_run(options, [program, command, "10.77.0.2", "9999"], user=user)
        expected = [(op, SENT)] if op != "connect" else [("connect", OK), ("write", SENT)]
        assert calls(result) == expected, result.stderr
    assert wait_for_datagrams(lan, before + 3) == before + 3
    assert all(line.startswith("::ffff:10.77.0.1 ") for line in datagrams(lan)[before:])
    records = audit.records()
    assert [(r["op"], r["transport"], r["port"]) for r in records] == [
        ("connect", "tcp", port), ("sendto", "udp", 9999), ("connect", "udp", 9999), ("sendmsg", "udp", 9999)]
    assert {(r["by"], r["decision"]) for r in records} == {("supervisor", "allow")}


def test_preload_only_leaves_a_go_program_unobserved(lan, fixtures):
    """The layer split: without the supervisor the same denied connect reaches the peer, and
    lnp-run says why it cannot observe the program."""
    program = fixtures.go_program()
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--preload-only"], [program, "connect", "10.77.0.2", "8080"])
    assert calls(result) == [("connect", OK)]
    assert capture.packets() != []
    assert result.stderr == (f"lnp-run: warning: cannot observe {program}: static binary (the loader that applies "
                             "LD_PRELOAD never runs); Go program (it makes raw system calls, past the C library); "
                             "running it unobserved\n")
