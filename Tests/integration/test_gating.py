"""What is gated and how: every operation TN3179 lists, on every kind of local address, and
nothing else — run by the C probe under lnp-run in the test LAN (see conftest.py)."""

import pytest

from conftest import assert_route_changes_within_a_second, json_lines, run


def probe(lan, fixtures, policy, *arguments, audit=None, options=(), env=()):
    command = [fixtures.probe, *arguments]
    if env:
        command = ["env", *env] + command
    flags = [f"--{policy}", *options] + (["--audit", str(audit.path)] if audit else [])
    result = lan.lnp_run(flags, command)
    assert result.returncode == 0, result.stderr
    return json_lines(result.stdout)


def interface_index(lan, name):
    result = lan.client(["cat", f"/sys/class/net/{name}/ifindex"])
    return int(result.stdout)


# (name, probe arguments, the audit's reason)
LOCAL = [
    ("on-link", ["connect", "tcp", "10.77.0.2", "8080"], "on-link 10.77.0.0/24 via c0"),
    ("extra on-link route", ["connect", "udp", "10.66.1.2", "80"], "on-link 10.66.0.0/16 via c0"),
    ("on-link IPv6", ["connect", "tcp", "fd77::2", "8080"], "on-link fd77::/64 via c0"),
    ("multipath route with an on-link hop", ["connect", "udp", "10.44.0.9", "80"], "on-link 10.44.0.0/24 via c0"),
    ("the DNS server, not for DNS", ["connect", "tcp", "10.77.0.53", "80"], "on-link 10.77.0.0/24 via c0"),
    ("IPv4-mapped IPv6", ["connect", "tcp", "::ffff:10.77.0.2", "8080"], "on-link 10.77.0.0/24 via c0"),
    ("IPv4 link-local", ["connect", "udp", "169.254.10.20", "80"], "link-local"),
    ("multicast", ["sendto", "239.1.2.3", "9999"], "multicast"),
    ("IPv6 multicast", ["sendto", "ff05::1:3", "9999"], "multicast"),
    ("limited broadcast", ["sendto", "255.255.255.255", "9999"], "broadcast"),
    ("subnet broadcast", ["sendto", "10.77.0.255", "9999"], "subnet broadcast via c0"),
]

# (name, probe arguments, the errno the kernel gives, or None for success)
NOT_LOCAL = [
    ("public, through the default gateway", ["connect", "tcp", "203.0.113.5", "8080"], None),
    ("public IPv6, through the gateway", ["connect", "tcp", "2001:db8::5", "8080"], None),
    ("a network routed through a gateway", ["connect", "udp", "10.99.0.7", "80"], None),
    ("point-to-point peer (a VPN)", ["connect", "udp", "10.88.0.2", "80"], None),
    ("this machine's own address", ["connect", "tcp", "10.77.0.1", "1"], "ECONNREFUSED"),
    ("loopback", ["connect", "tcp", "127.0.0.1", "1"], "ECONNREFUSED"),
    ("IPv6 loopback", ["connect", "tcp", "::1", "1"], "ECONNREFUSED"),
    ("the DNS server of resolv.conf, for DNS", ["sendto", "10.77.0.53", "53"], None),
    ("the DNS server of resolv.conf, DNS over TLS", ["sendto", "10.77.0.53", "853"], None),
]


@pytest.mark.parametrize("name,arguments,reason", LOCAL, ids=[c[0] for c in LOCAL])
def test_local_operations_are_denied_with_ehostunreach_and_recorded(lan, fixtures, audit, name, arguments, reason):
    [result] = probe(lan, fixtures, "deny", *arguments, audit=audit)
    assert (result["result"], result["errno"]) == (-1, "EHOSTUNREACH")
    [record] = audit.records()
    assert record["reason"] == reason
    assert record["decision"] == "deny"
    assert record["port"] == int(arguments[-1])


@pytest.mark.parametrize("name,arguments,reason", LOCAL, ids=[c[0] for c in LOCAL])
def test_local_operations_are_allowed_and_recorded(lan, fixtures, audit, name, arguments, reason):
    [result] = probe(lan, fixtures, "allow", *arguments, audit=audit)
    assert result["errno"] != "EHOSTUNREACH"
    [record] = audit.records()
    assert (record["reason"], record["decision"]) == (reason, "allow")


def test_link_local_ipv6_names_the_scope_interface(lan, fixtures, audit):
    index = interface_index(lan, "c0")
    [result] = probe(lan, fixtures, "deny", "connect", "udp", f"fe80::99%{index}", "80", audit=audit)
    assert result["errno"] == "EHOSTUNREACH"
    assert audit.records()[0]["reason"] == "link-local via c0"
    assert audit.records()[0]["address"] == "fe80::99"


@pytest.mark.parametrize("name,arguments,errno", NOT_LOCAL, ids=[c[0] for c in NOT_LOCAL])
def test_what_is_not_local_passes_under_deny_unrecorded(lan, fixtures, audit, name, arguments, errno):
    [result] = probe(lan, fixtures, "deny", *arguments, audit=audit)
    assert result["errno"] == errno
    assert audit.records() == []


@pytest.mark.parametrize("name", ["EPERM", "EACCES", "ENETUNREACH", "ECONNREFUSED", "ETIMEDOUT", "econnreset", "111"])
def test_errno_option_picks_the_error(lan, fixtures, name):
    [result] = probe(lan, fixtures, "deny", "connect", "tcp", "10.77.0.2", "8080", options=["--errno", name])
    expected = {"111": "ECONNREFUSED", "econnreset": "ECONNRESET"}.get(name, name)
    assert result["errno"] == expected


def test_sendmsg_is_gated(lan, fixtures, audit):
    [denied] = probe(lan, fixtures, "deny", "sendmsg", "10.77.0.2", "9999", audit=audit)
    [allowed] = probe(lan, fixtures, "allow", "sendmsg", "fd77::2", "9999")
    assert denied["errno"] == "EHOSTUNREACH" and allowed["result"] == 5
    assert audit.records()[0]["op"] == "sendmsg"


def test_sendmmsg_sends_messages_before_the_first_local_one(lan, fixtures, audit):
    [partial] = probe(lan, fixtures, "deny", "sendmmsg", "9999", "203.0.113.5", "203.0.113.5", "10.77.0.2",
                      "203.0.113.5", audit=audit)
    assert partial == {"call": "sendmmsg", "result": 2, "errno": None}
    [record] = audit.records()
    assert (record["op"], record["address"], record["decision"]) == ("sendmmsg", "10.77.0.2", "deny")


def test_sendmmsg_fails_when_its_first_message_is_local(lan, fixtures):
    [result] = probe(lan, fixtures, "deny", "sendmmsg", "9999", "10.77.0.2", "203.0.113.5")
    assert (result["result"], result["errno"]) == (-1, "EHOSTUNREACH")


def test_sendmmsg_allowed_records_every_local_message(lan, fixtures, audit):
    [result] = probe(lan, fixtures, "allow", "sendmmsg", "9999", "10.77.0.2", "203.0.113.5", "10.77.0.2",
                     audit=audit)
    assert result["result"] == 3
    assert [r["address"] for r in audit.records()] == ["10.77.0.2", "10.77.0.2"]


def test_tcp_fast_open_is_a_connect(lan, fixtures, audit):
    [denied] = probe(lan, fixtures, "deny", "fastopen", "10.77.0.2", "8080", audit=audit)
    [public] = probe(lan, fixtures, "deny", "fastopen", "203.0.113.5", "8080")
    assert denied["errno"] == "EHOSTUNREACH"
    assert public["result"] == 5
    assert (audit.records()[0]["op"], audit.records()[0]["transport"]) == ("sendto", "tcp")


@pytest.mark.parametrize("form,group", [("ip", "239.1.2.3"), ("source", "239.1.2.3"), ("mcast", "239.1.2.3"),
                                        ("mcast-source", "239.1.2.3"), ("ipv6", "ff05::1:3"), ("mcast", "ff05::1:3")])
def test_joining_a_multicast_group_is_gated(lan, fixtures, audit, form, group):
    [denied] = probe(lan, fixtures, "deny", "join", form, group, audit=audit)
    [allowed] = probe(lan, fixtures, "allow", "join", form, group)
    assert denied["errno"] == "EHOSTUNREACH"
    assert allowed["result"] == 0
    [record] = audit.records()
    assert (record["op"], record["address"], record["reason"]) == ("join", group, "multicast")


@pytest.mark.parametrize("address,gated", [("239.1.2.3", True), ("255.255.255.255", True), ("10.77.0.255", True),
                                           ("0.0.0.0", False), ("10.77.0.1", False), ("127.0.0.1", False)])
def test_bind_is_gated_only_for_multicast_and_broadcast(lan, fixtures, audit, address, gated):
    [result] = probe(lan, fixtures, "deny", "bind", address, "0", audit=audit)
    if gated:
        assert result["errno"] == "EHOSTUNREACH"
        assert audit.records()[0]["op"] == "bind"
    else:
        assert result == {"call": "bind", "result": 0, "errno": None}
        assert audit.records() == []


def test_bind_to_an_ipv6_broadcast_route_is_gated(lan, fixtures, audit):
    """IPv6 has no broadcast, but the kernel takes a route of that type; a bind to its address
    is decided as the subnet broadcast it routes like, in a process whose cache is cold too."""
    run(["ip", "-n", lan.client_ns, "-6", "route", "add", "broadcast", "fd77::ff/128", "dev", "c0"], check=True)
    try:
        [result] = probe(lan, fixtures, "deny", "bind", "fd77::ff", "0", audit=audit)
    finally:
        run(["ip", "-n", lan.client_ns, "-6", "route", "del", "broadcast", "fd77::ff/128", "dev", "c0"])
    assert result["errno"] == "EHOSTUNREACH"
    [record] = audit.records()
    assert (record["op"], record["reason"]) == ("bind", "subnet broadcast via c0")


def test_denied_local_name_fails_as_a_name_that_does_not_exist(lan, fixtures, audit):
    results = probe(lan, fixtures, "deny", "resolve", "printer.local", audit=audit)
    assert results == [
        {"call": "getaddrinfo", "status": -2, "message": "Name or service not known"},  # EAI_NONAME
        {"call": "gethostbyname", "found": False, "h_errno": 1},  # HOST_NOT_FOUND
        {"call": "gethostbyname_r", "result": 0, "found": False, "h_errno": 1},
    ]
    assert [(r["op"], r["host"], r["reason"]) for r in audit.records()] == [("resolve", "printer.local", ".local name")] * 3


@pytest.mark.parametrize("name,policy", [("printer.local", "allow"), ("PRINTER.LOCAL.", "allow"),
                                         ("peer.lan", "deny"), ("nosuch.local", "allow")])
def test_allowed_or_not_local_names_resolve_exactly_as_without_lnp(lan, fixtures, name, policy):
    plain = json_lines(lan.client([fixtures.probe, "resolve", name]).stdout)
    assert len(plain) == 3
    assert probe(lan, fixtures, policy, "resolve", name) == plain


def test_resolved_name_is_attached_to_the_connection_record(lan, fixtures, audit):
    [result] = probe(lan, fixtures, "allow", "resolve-connect", "printer.local", "8080", audit=audit)
    assert result["result"] == 0
    resolve, connect = audit.records()
    assert (resolve["op"], connect["op"]) == ("resolve", "connect")
    assert connect["host"] == "printer.local"


@pytest.mark.parametrize("form", ["connect", "sendto", "sendmsg", "sendmmsg"])
def test_socket_calls_through_syscall_are_gated(lan, fixtures, audit, form):
    [result] = probe(lan, fixtures, "deny", "syscall", form, "10.77.0.2", "9999", audit=audit)
    assert (result["result"], result["errno"]) == (-1, "EHOSTUNREACH")
    assert audit.records()[0]["op"] == form


@pytest.mark.parametrize("form,address", [("bind", "239.1.2.3"), ("setsockopt", "239.1.2.3")])
def test_bind_and_join_through_syscall_are_gated(lan, fixtures, form, address):
    [result] = probe(lan, fixtures, "deny", "syscall", form, address, "9999")
    assert result["errno"] == "EHOSTUNREACH"


def test_other_system_calls_pass_through_syscall_untouched(lan, fixtures):
    results = probe(lan, fixtures, "deny", "syscall-passthrough")
    assert results == [
        {"call": "getpid", "result": 0, "errno": None},
        {"call": "write", "result": 0, "errno": None},
        {"call": "mmap", "result": 0, "errno": None},
        {"call": "close", "result": -1, "errno": "EBADF"},
    ]


@pytest.mark.parametrize("kind,address", [("udp", "10.77.0.2"), ("raw", "10.77.0.2"), ("raw", "fd77::2")])
def test_destinations_in_af_unspec_are_gated(lan, fixtures, audit, kind, address):
    """UDP and raw IPv4 sockets take a zero family as IPv4, raw IPv6 sockets as IPv6."""
    results = probe(lan, fixtures, "deny", "unspec", kind, address, "9999", audit=audit)
    assert [r["errno"] for r in results] == ["EHOSTUNREACH", "EHOSTUNREACH"]
    assert [r["op"] for r in audit.records()] == ["sendto", "sendmsg"]
    assert audit.records()[0]["address"] == address


def test_a_proxy_variable_set_by_the_program_later_exempts_nothing(lan, fixtures):
    code = ("import os, socket\n"
            "os.environ['http_proxy'] = 'http://proxy.lan:8080'\n"
            "address = socket.getaddrinfo('proxy.lan', 8080, type=socket.SOCK_STREAM)[0][4]\n"
            "s = socket.socket()\n"
            "try: s.connect(address); print('connected')\n"
            "except OSError as e: print(e.errno)\n")
    result = lan.lnp_run(["--deny"], ["python3", "-c", code])
    assert result.stdout.strip() == "113", result.stderr


def test_proxy_named_by_address_is_exempt(lan, fixtures, audit):
    [result] = probe(lan, fixtures, "deny", "connect", "tcp", "10.77.0.2", "8080", audit=audit,
                     env=["http_proxy=http://10.77.0.2:8080/"])
    assert result["result"] == 0
    assert audit.records() == []


@pytest.mark.parametrize("variable", ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "HTTP_PROXY"])
def test_proxy_named_by_name_is_exempt_once_the_program_resolves_it(lan, fixtures, variable):
    [exempt] = probe(lan, fixtures, "deny", "resolve-connect", "proxy.lan", "8080",
                     env=[f"{variable}=http://user:secret@proxy.lan:8080"])
    [control] = probe(lan, fixtures, "deny", "resolve-connect", "proxy.lan", "8080")
    assert exempt["result"] == 0
    assert control["errno"] == "EHOSTUNREACH"


def test_curl_through_a_local_proxy_works_under_deny(lan, build):
    result = lan.client(["env", "http_proxy=http://proxy.lan:8080", build.lnp_run, "--deny", "--", "curl", "-sS",
                         "-o", "/dev/null", "-w", "%{http_code}", "http://public.example/"])
    # The peer's http.server answers a proxy request with 404: the connection was made.
    assert result.stdout == "404", result.stderr


def test_routes_added_and_removed_take_effect_within_a_second(lan, fixtures):
    """A program keeps connecting a UDP socket to 10.55.0.9 (which sends nothing) every 50 ms
    while the test makes 10.55.0.0/24 on-link, then removes it again."""
    assert_route_changes_within_a_second(lan, ["ip", "netns", "exec", lan.client_ns, lan.build.lnp_run, "--deny", "--",
                                               fixtures.probe, "watch", "10.55.0.9", "9", "100", "50"])
