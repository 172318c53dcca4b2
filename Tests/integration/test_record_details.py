"""Details of the record that real clients showed wrong: what is a `.local` name, what is one
operation, where an address goes, which fields a socket has, and the words of `reason`."""

import json
import shutil

import pytest

from conftest import json_lines, require


@pytest.mark.parametrize("name", ["local", "local.", "LOCAL"])
def test_the_bare_name_local_is_not_a_local_name(lan, fixtures, audit, name):
    """glibc sends `local` to DNS like any single-label name; only names *in* the domain are mDNS."""
    plain = lan.client([fixtures.probe, "resolve", name])
    wrapped = lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "resolve", name])
    assert json_lines(wrapped.stdout) == json_lines(plain.stdout)
    assert audit.records() == []


def test_names_in_the_local_domain_still_are(lan, fixtures, audit):
    lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "resolve", "printer.local."])
    # getaddrinfo, gethostbyname, gethostbyname_r
    assert [(r["op"], r["host"]) for r in audit.records()] == [("resolve", "printer.local.")] * 3


PERL_WITH_TIMEOUT = ('use IO::Socket::INET; my $s = IO::Socket::INET->new(PeerAddr => "$ARGV[0]:8080", Timeout => 5)'
                     ' or do { print "$!\\n"; exit }; print "connected\\n"')


def test_a_connect_that_completes_a_connecting_socket_is_not_a_second_operation(lan, audit):
    """Perl's connect with a timeout: EINPROGRESS, wait, then connect again (0)."""
    require(shutil.which("perl") is not None, "perl is not installed")
    result = lan.lnp_run(["--allow", "--audit", str(audit.path)], ["perl", "-e", PERL_WITH_TIMEOUT, "10.77.0.2"])
    assert result.stdout.strip() == "connected", result.stderr
    assert [(r["op"], r["address"]) for r in audit.records()] == [("connect", "10.77.0.2")]


def test_a_connect_to_another_destination_is_an_operation(lan, fixtures, audit):
    lan.lnp_run(["--allow", "--audit", str(audit.path)], [fixtures.probe, "connect-twice", "10.77.0.2", "10.66.1.2"])
    assert [r["address"] for r in audit.records()] == ["10.77.0.2", "10.66.1.2"]


SCOPED = """
import socket, sys
[(family, kind, proto, _, address)] = socket.getaddrinfo(sys.argv[1], 9, type=socket.SOCK_DGRAM)
s = socket.socket(family, kind, proto)
try:
    s.connect(address)
    print("connected")
except OSError as e:
    print(e.strerror)
"""


def test_a_numeric_scoped_address_is_an_address_not_a_host(lan, audit):
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["python3", "-c", SCOPED, "fe80::99%c0"])
    assert result.stdout.strip() == "No route to host", result.stderr
    [record] = audit.records()
    assert (record["address"], record["host"], record["reason"]) == ("fe80::99", None, "link-local via c0")


RAW = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
echo = bytes([8, 0, 0xf7, 0xff, 0, 0, 0, 0])  # an ICMP echo request with its checksum
try:
    s.sendto(echo, (sys.argv[1], 77))  # the port of a raw socket's address means nothing
    print("sent")
except OSError as e:
    print(e.strerror)
"""


def test_a_raw_socket_has_no_port(lan, audit):
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["python3", "-c", RAW, "10.77.0.2"])
    assert result.stdout.strip() == "No route to host", result.stderr
    [record] = audit.records()
    assert (record["transport"], record["port"]) == ("raw", None)


def test_an_icmp_socket_has_no_port(lan, audit):
    lan.client(["sysctl", "-qw", "net.ipv4.ping_group_range=0 0"])
    script = RAW.replace("socket.SOCK_RAW", "socket.SOCK_DGRAM")
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["python3", "-c", script, "10.77.0.2"])
    assert result.stdout.strip() == "No route to host", result.stderr
    [record] = audit.records()
    assert (record["transport"], record["port"]) == ("icmp", None)


def test_a_group_join_has_no_port(lan, fixtures, audit):
    lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "join", "ip", "239.1.2.3"])
    [record] = audit.records()
    assert (record["op"], record["address"], record["port"]) == ("join", "239.1.2.3", None)


@pytest.mark.parametrize("address", ["203.0.113.5", "10.99.0.7", "10.88.0.2", "10.77.0.2", "10.66.1.2"])
def test_the_reason_is_in_lnp_checks_words(lan, fixtures, audit, address):
    lan.lnp_run(["--allow", "--audit", str(audit.path), "--audit-all"],
                [fixtures.probe, "connect", "udp", address, "9"])
    checked = json.loads(lan.client([lan.build.lnp, "check", "--json", address]).stdout)[0]
    [record] = audit.records()
    assert record["reason"] == checked["reason"]
