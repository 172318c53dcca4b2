"""What lnp decided is what the kernel does: the address lnp checked is the one the kernel
reads, however the program's memory or descriptors change meanwhile, and however long the
program says its address is. tcpdump on the peer counts what got through: nothing may."""

import pytest

from conftest import json_lines

TO_PEER = "src host 10.77.0.1 and dst host 10.77.0.2 and (tcp port 8080 or udp port 9999)"


@pytest.mark.parametrize("op", ["connect", "sendto", "sendmsg", "sendmmsg"])
def test_an_address_flipped_by_another_thread_never_reaches_a_denied_host(lan, fixtures, op):
    port = "8080" if op == "connect" else "9999"
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny"], [fixtures.racer, "flip", op, "10.77.0.2", port, "2"])
    [race] = json_lines(result.stdout)
    assert race["accepted"] > 100, "the loop must make calls, many of them to loopback"
    assert capture.packets() == []


def test_a_group_flipped_by_another_thread_is_never_joined(lan, fixtures):
    """A join sends an IGMP membership report: none may reach the peer."""
    capture = lan.capture("igmp")
    result = lan.lnp_run(["--deny"], [fixtures.racer, "flip", "join", "239.7.7.7", "c0", "2"])
    assert json_lines(result.stdout), result.stderr
    assert capture.packets() == []


@pytest.mark.parametrize("other", ["tcp", "unix"])
def test_a_socket_swapped_onto_the_descriptor_never_reaches_a_denied_host(lan, fixtures, other):
    """The kernel ignores an address on a connected TCP socket and refuses an IP address on an
    AF_UNIX one; a UDP socket dup2'd onto the number between lnp's look and the call must not
    inherit that leniency."""
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny"], [fixtures.racer, "swap", other, "10.77.0.2", "9999", "2"])
    assert json_lines(result.stdout), result.stderr
    assert capture.packets() == []


@pytest.mark.parametrize("form", ["sendmsg", "sendmmsg", "syscall", "fastopen"])
@pytest.mark.parametrize("length", ["129", "200", "4096", "0x7fffffff"])
def test_an_oversized_name_length_is_read_as_the_kernel_reads_it(lan, fixtures, audit, form, length):
    """The kernel reads at most 128 bytes of msg_name, whatever msg_namelen says."""
    port = "8080" if form == "fastopen" else "9999"
    # (to another host: a plain datagram to 10.66.1.2 would leave ARP requests behind)
    plain = json_lines(lan.client([fixtures.probe, "namelen", form, "203.0.113.5", port, length]).stdout)
    assert plain[0]["errno"] != "EINVAL", "the kernel takes such a length"
    capture = lan.capture("dst host 10.66.1.2", interface="p0")
    [result] = json_lines(lan.lnp_run(["--deny", "--audit", str(audit.path)],
                                      [fixtures.probe, "namelen", form, "10.66.1.2", port, length]).stdout)
    assert result["errno"] == "EHOSTUNREACH"
    assert [r["address"] for r in audit.records()] == ["10.66.1.2"]
    assert capture.packets() == []


def test_a_name_length_the_kernel_refuses_is_left_to_it(lan, fixtures, audit):
    plain = json_lines(lan.client([fixtures.probe, "namelen", "sendmsg", "10.66.1.2", "9999", "0x80000000"]).stdout)
    wrapped = json_lines(lan.lnp_run(["--deny", "--audit", str(audit.path)],
                                     [fixtures.probe, "namelen", "sendmsg", "10.66.1.2", "9999", "0x80000000"]).stdout)
    assert wrapped == plain == [{"call": "sendmsg", "result": -1, "errno": "EINVAL"}]
    assert audit.records() == []


@pytest.mark.parametrize("user", [None, "65534"])
@pytest.mark.parametrize("op", ["connect", "sendto", "sendmsg", "sendmmsg"])
def test_an_address_flipped_in_a_static_program_never_reaches_a_denied_host(lan, fixtures, op, user):
    """The supervisor decides on its copy of the address and makes the call with it."""
    port = "8080" if op == "connect" else "9999"
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--strict", "--deny"], [fixtures.racer_static, "flip", op, "10.77.0.2", port, "2"], user=user)
    [race] = json_lines(result.stdout)
    assert race["accepted"] > 100, "the loop must make calls, many of them to loopback"
    assert capture.packets() == []


def test_strict_as_root_closes_the_race_of_a_socket_swapped_onto_a_unix_sockets_call(lan, fixtures):
    """A Unix socket's call is the one the supervisor lets the kernel continue, and the kernel
    reads the descriptor again: another thread may put a UDP socket on it meanwhile (without
    the kernel's socket hooks, some 40,000 datagrams of this loop reached the peer in 3 s).
    As root, --strict attaches the hooks to the program's cgroup: an IP call that lnp-run
    does not make itself is refused."""
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--strict", "--deny"], [fixtures.racer_static, "swap", "unix", "10.77.0.2", "9999", "3"])
    [race] = json_lines(result.stdout)
    assert "socket hooks" not in result.stderr, result.stderr
    assert race["accepted"] == 0
    assert capture.packets() == []


def test_strict_as_root_closes_the_race_of_a_socket_swapped_onto_a_unix_sockets_option(lan, fixtures):
    """The same race on setsockopt: a join continued on a Unix socket's descriptor, where
    another thread has put a UDP socket meanwhile (without the setsockopt hook, the group was
    joined and its report reached the link). The hook refuses the options lnp decides to any
    process but lnp-run."""
    capture = lan.capture("igmp")
    result = lan.lnp_run(["--strict", "--deny"], [fixtures.racer_static, "swap", "join", "239.7.7.8", "c0", "3"])
    [race] = json_lines(result.stdout)
    assert "socket hooks" not in result.stderr, result.stderr
    assert race["accepted"] == 0
    assert capture.packets() == []
