"""Bonjour through the system's mDNS daemon (Avahi): browsing, resolving and advertising are
local-network operations at the API a program uses — Apple's dns_sd.h (Avahi's libdns_sd),
libavahi-client (avahi-browse, avahi-resolve, avahi-publish) and D-Bus calls to Avahi made
with libdbus (dbus-python) — decided, recorded, and refused with each API's own error.

A private network (bonjour_lab.sh): a client and a peer namespace, each with its own /run, its
own D-Bus system bus and an avahi-daemon on its veth alone; the peer advertises "peer printer"
(_ipp._tcp 631) and "peer web" (_http._tcp 80) as peer.local."""

import os
import shutil
import subprocess
import time

import pytest

from conftest import FIXTURES, ROOT, require, run
from test_prompt import Terminal

LAB = ROOT / "Tests" / "integration" / "bonjour_lab.sh"
PYTHON = "/usr/bin/python3"  # the system's, which has dbus-python
REASON = "Bonjour, through the system's mDNS daemon"


class BonjourLab:
    def __init__(self, build, workdir):
        self.build = build
        self.state = workdir / "bonjour-lab"
        self.dnssd_client = workdir / "dnssd_client"
        flags = run(["pkg-config", "--cflags", "--libs", "avahi-compat-libdns_sd"], check=True).stdout.split()
        compiled = run(["gcc", "-O2", "-Wall", "-o", self.dnssd_client, FIXTURES / "dnssd_client.c", *flags])
        assert compiled.returncode == 0, compiled.stderr
        started = run([LAB, "up", self.state], timeout=60)
        assert started.returncode == 0, started.stderr

    def close(self):
        run([LAB, "down", self.state], timeout=60)

    def client(self, command, *, timeout=60, env=None):
        """`command` in the client's namespaces, with its private bus."""
        extra = [f"{key}={value}" for key, value in (env or {}).items()]
        return run([LAB, "exec", self.state, "env", *extra, *[str(c) for c in command]], timeout=timeout)

    def lnp_run(self, options, command, **kwargs):
        return self.client([self.build.lnp_run, *options, "--", *command], **kwargs)

    def peer(self, command, *, timeout=60):
        return run([LAB, "peer", self.state, *[str(c) for c in command]], timeout=timeout)

    def terminal(self, options, command, env):
        """lnp-run in the client's namespaces on a pseudo-terminal, the program's output in files."""
        out = self.state / f"terminal-{time.monotonic_ns()}.out"
        shell = 'exec "$@" < /dev/null > "$OUT" 2>&1'
        full = [str(LAB), "exec", str(self.state), "sh", "-c", shell, "sh", str(self.build.lnp_run), *options, "--",
                *[str(c) for c in command]]
        return Terminal(full, dict(os.environ, OUT=str(out), **env)), out


@pytest.fixture(scope="module")
def bonjour(build, workdir):
    for tool in ("avahi-daemon", "avahi-browse", "dbus-daemon", "pkg-config"):
        require(shutil.which(tool) is not None, f"{tool} is not installed (scripts/deps test installs it)")
    lab = BonjourLab(build, workdir)
    yield lab
    lab.close()


@pytest.fixture
def state(workdir):
    directory = workdir / f"bonjour-state-{time.monotonic_ns()}"
    directory.mkdir()
    return {"XDG_STATE_HOME": str(directory)}


def records(audit):
    return [(r["op"], r["host"], r["decision"], r["because"]) for r in audit.records()]


def test_allowed_clients_of_every_api_find_the_peer(bonjour, audit, state):
    options = ["--allow", "--audit", audit.path]
    browse = bonjour.lnp_run(options, ["avahi-browse", "-t", "-r", "-p", "_ipp._tcp"], env=state)
    assert "peer.local;10.79.0.2;631;" in browse.stdout, browse.stderr
    resolve = bonjour.lnp_run(options, ["avahi-resolve", "-4", "-n", "peer.local"], env=state)
    assert resolve.returncode == 0 and "10.79.0.2" in resolve.stdout, resolve.stderr
    dnssd = bonjour.lnp_run(options, [bonjour.dnssd_client, "browse", "_ipp._tcp"], env=state)
    assert dnssd.returncode == 0 and "host=peer.local. port=631" in dnssd.stdout, dnssd.stdout + dnssd.stderr
    python = bonjour.lnp_run(options, [PYTHON, FIXTURES / "avahi_bus_client.py", "_ipp._tcp", "peer.local"], env=state)
    assert python.returncode == 0 and "resolved peer.local 10.79.0.2" in python.stdout, python.stdout + python.stderr

    seen = records(audit)
    # avahi-browse -r: the browse, then a resolve of each service found (both families); each
    # call once, though libdbus's blocking call makes its send through another hooked function.
    assert seen[0] == ("browse", "_ipp._tcp", "allow", "run-option") != seen[1]
    resolver = [r for r in audit.records() if r["exe"] == "/usr/bin/avahi-resolve"]
    assert [(r["op"], r["host"]) for r in resolver] == [("resolve", "peer.local")]
    assert ("resolve-service", "peer printer._ipp._tcp", "allow", "run-option") in seen
    assert ("resolve", "peer.local", "allow", "run-option") in seen
    # The dns_sd program's calls are recorded once each, by the dns_sd hook: not again for the
    # D-Bus calls libdns_sd makes for them.
    dnssd_records = [r for r in audit.records() if r["exe"] == str(bonjour.dnssd_client)]
    assert [(r["op"], r["host"]) for r in dnssd_records] == [("browse", "_ipp._tcp"),
                                                             ("resolve-service", "peer printer._ipp._tcp.")]
    assert all(r["reason"] == REASON and r["address"] is None and r["fd"] is None for r in audit.records())
    report = run([bonjour.build.lnp, "report", audit.path])
    assert report.returncode == 0, report.stderr
    assert "_ipp._tcp" in report.stdout and "browse" in report.stdout


def test_under_strict_an_allowed_bonjour_operation_is_still_recorded(bonjour, audit, state):
    """--strict drops the preload's records of socket calls (the supervisor makes and records
    each); a Bonjour operation is no socket call, and only the preload sees it."""
    browse = bonjour.lnp_run(["--strict", "--allow", "--audit", audit.path], ["avahi-browse", "-t", "-p", "_ipp._tcp"],
                             env=state)
    assert "peer" in browse.stdout.replace("\\032", " "), browse.stderr
    assert ("browse", "_ipp._tcp", "allow", "run-option") in records(audit)


def test_denied_clients_find_nothing_and_get_each_apis_error(bonjour, audit, state):
    options = ["--deny", "--audit", audit.path]
    browse = bonjour.lnp_run(options, ["avahi-browse", "-t", "-r", "-p", "_ipp._tcp"], env=state)
    assert "avahi_service_browser_new() failed: Access denied" in browse.stderr
    assert "peer" not in browse.stdout
    every = bonjour.lnp_run(options, ["avahi-browse", "-a", "-t", "-p"], env=state)
    assert "avahi_service_type_browser_new() failed: Access denied" in every.stderr
    resolve = bonjour.lnp_run(options, ["avahi-resolve", "-4", "-n", "peer.local"], env=state)
    assert resolve.returncode == 1 and "Failed to create host name resolver: Access denied" in resolve.stderr
    assert "10.79.0.2" not in resolve.stdout
    dnssd = bonjour.lnp_run(options, [bonjour.dnssd_client, "browse", "_ipp._tcp"], env=state)
    assert (dnssd.returncode, dnssd.stdout.strip()) == (2, "DNSServiceBrowse: error -65570")  # PolicyDenied
    python = bonjour.lnp_run(options, [PYTHON, FIXTURES / "avahi_bus_client.py", "_ipp._tcp", "peer.local"], env=state)
    assert python.returncode == 2, python.stdout + python.stderr
    assert "D-Bus error org.freedesktop.DBus.Error.AccessDenied: lnp: local network access denied" in python.stdout

    assert records(audit) == [
        ("browse", "_ipp._tcp", "deny", "run-option"),
        ("browse", "(service types)", "deny", "run-option"),
        ("resolve", "peer.local", "deny", "run-option"),
        ("browse", "_ipp._tcp", "deny", "run-option"),
        ("browse", "_ipp._tcp", "deny", "run-option"),
    ]
    # The bus connection stays up after a refused call: the same client's next call is made.
    assert "ResolveHostName" not in python.stderr


# D-Bus clients that are not libdbus: GDBus, sd-bus, and jeepney (pure Python).
GDBUS_BROWSE = ["gdbus", "call", "--system", "--dest", "org.freedesktop.Avahi", "--object-path", "/", "--method",
                "org.freedesktop.Avahi.Server.ServiceBrowserNew", "--", "-1", "-1", "_ipp._tcp", "local", "0"]
BUSCTL_RESOLVE = ["busctl", "call", "org.freedesktop.Avahi", "/", "org.freedesktop.Avahi.Server", "ResolveHostName",
                  "iisiu", "--", "-1", "0", "peer.local", "0", "0"]
JEEPNEY = [PYTHON, FIXTURES / "jeepney_bus_client.py", "_ipp._tcp"]
NOBODY = 'org.freedesktop.DBus.Error.NameHasNoOwner: Name "lnp.LocalNetworkAccessDenied" does not exist'


@pytest.fixture(scope="module")
def bus_tools():
    for tool in ("gdbus", "busctl"):
        require(shutil.which(tool) is not None, f"{tool} is not installed")
    require(run([PYTHON, "-c", "import jeepney"]).returncode == 0, "jeepney is not installed (scripts/deps test)")


def test_dbus_clients_that_are_not_libdbus_are_gated_on_their_stream(bonjour, bus_tools, audit, state):
    """GDBus, sd-bus and jeepney write D-Bus themselves: their calls are read on the stream to
    the system bus. A refused one never reaches the daemon; the bus answers it with an error
    naming lnp, and the connection goes on (jeepney's next call is answered)."""
    denied = ["--deny", "--audit", audit.path]
    gdbus = bonjour.lnp_run(denied, GDBUS_BROWSE, env=state)
    assert gdbus.returncode != 0 and NOBODY in gdbus.stderr, gdbus.stdout + gdbus.stderr
    busctl = bonjour.lnp_run(denied, BUSCTL_RESOLVE, env=state)
    assert busctl.returncode != 0 and 'Name "lnp.LocalNetworkAccessDenied" does not exist' in busctl.stderr
    assert "10.79.0.2" not in busctl.stdout
    jeepney = bonjour.lnp_run(denied, JEEPNEY, env=state)
    assert jeepney.stdout.splitlines() == [f"browse error {NOBODY}",
                                           "version reply ('avahi 0.8',)"], jeepney.stdout + jeepney.stderr
    assert records(audit) == [
        ("browse", "_ipp._tcp", "deny", "run-option"),
        ("resolve", "peer.local", "deny", "run-option"),
        ("browse", "_ipp._tcp", "deny", "run-option"),
    ]
    assert all(r["exe"] != "/usr/bin/dbus-daemon" and r["by"] == "preload" for r in audit.records())

    allowed = ["--allow", "--audit", audit.path]
    gdbus = bonjour.lnp_run(allowed, GDBUS_BROWSE, env=state)
    assert gdbus.returncode == 0 and "ServiceBrowser" in gdbus.stdout, gdbus.stderr
    busctl = bonjour.lnp_run(allowed, BUSCTL_RESOLVE, env=state)
    assert busctl.returncode == 0 and '"10.79.0.2"' in busctl.stdout, busctl.stderr
    jeepney = bonjour.lnp_run(allowed, JEEPNEY, env=state)
    assert jeepney.stdout.startswith("browse reply ('/Client"), jeepney.stdout + jeepney.stderr
    assert [r[2] for r in records(audit)] == ["deny"] * 3 + ["allow"] * 3


@pytest.mark.parametrize("mode", ["pieces", "fault", "reconnect", "sendto-empty-address", "sendmsg-empty-name",
                                  "sendmsg-null-name"])
def test_a_call_written_in_pieces_or_badly_is_read_before_it_goes(bonjour, bus_tools, audit, state, mode):
    """A call written a few bytes at a time, through write, send, writev and sendmsg, is held
    until it can be read, then decided once; a write from a pointer to nothing fails as the
    kernel fails it (EFAULT), and the stream goes on. A second connection after a first one
    closed (its descriptor number again) is watched afresh; an address the kernel takes as none
    (of length 0, or a NULL name with a length) does not take a call past the gate."""
    denied = bonjour.lnp_run(["--deny", "--audit", audit.path], [*JEEPNEY, mode], env=state)
    expected = [f"browse error {NOBODY}", "version reply ('avahi 0.8',)"]
    if mode == "fault":
        expected.insert(0, "write of nothing: -1 Bad address")
    assert denied.stdout.splitlines() == expected, denied.stdout + denied.stderr
    allowed = bonjour.lnp_run(["--allow", "--audit", audit.path], [*JEEPNEY, mode], env=state)
    assert "browse reply ('/Client" in allowed.stdout, allowed.stdout + allowed.stderr
    assert records(audit) == [("browse", "_ipp._tcp", "deny", "run-option"), ("browse", "_ipp._tcp", "allow", "run-option")]


def test_bus_writes_are_read_as_the_kernel_reads_them_where_process_vm_readv_is_refused(bonjour, bus_tools, workdir,
                                                                                         audit, state):
    """lnp reads a program's bytes with process_vm_readv; where a seccomp filter refuses it (as
    systemd's @system-service does) it reads them through /proc/self/mem. Either way a write
    that runs into an unmapped page fails with EFAULT, as the kernel fails it — no fault in
    the program, no bytes held — and gdbus's calls still go, and are still gated."""
    program = workdir / "bus_writes"
    compiled = run(["gcc", "-O2", "-Wall", "-o", program, FIXTURES / "bus_writes.c"])
    assert compiled.returncode == 0, compiled.stderr
    assert bonjour.client([program, "straddle"]).stdout.strip() == "write -1 Bad address"
    denied = ["--deny", "--audit", audit.path]
    for command in ([program, "straddle"], [program, "no-vm-read", program, "straddle"]):
        result = bonjour.lnp_run(denied, command, env=state)
        assert (result.returncode, result.stdout.strip()) == (0, "write -1 Bad address"), result.stdout + result.stderr
    version = [*GDBUS_BROWSE[:8], "org.freedesktop.Avahi.Server.GetVersionString"]
    allowed = bonjour.lnp_run(denied, [program, "no-vm-read", *version], env=state)
    assert allowed.stdout.strip() == "('avahi 0.8',)", allowed.stdout + allowed.stderr
    refused = bonjour.lnp_run(denied, [program, "no-vm-read", *GDBUS_BROWSE], env=state)
    assert NOBODY in refused.stderr, refused.stdout + refused.stderr
    assert records(audit) == [("browse", "_ipp._tcp", "deny", "run-option")]


def test_an_undeclared_type_is_refused_on_the_stream(bonjour, bus_tools, audit, state):
    options = ["--allow", "--bonjour-services", "_http._tcp", "--audit", audit.path]
    gdbus = bonjour.lnp_run(options, GDBUS_BROWSE, env=state)
    assert 'Name "lnp.UndeclaredBonjourServiceType" does not exist' in gdbus.stderr, gdbus.stdout + gdbus.stderr
    assert records(audit) == [("browse", "_ipp._tcp", "deny", "undeclared")]


EVASIONS = FIXTURES / "avahi_bus_evasions.py"


@pytest.mark.parametrize("mode", ["extra-argument", "send-only", "async"])
def test_a_denied_browse_cannot_slip_past_the_gate(bonjour, audit, state, mode):
    """One argument too many (Avahi ignores it), a call sent without waiting for its reply, a
    call with a reply handler: each is recorded and finds nothing; a caller that wants a reply
    gets a D-Bus error reply."""
    result = bonjour.lnp_run(["--deny", "--audit", audit.path], [PYTHON, EVASIONS, mode], env=state)
    assert "found" not in result.stdout, result.stdout
    assert result.returncode == (1 if mode == "send-only" else 2), result.stdout + result.stderr
    if mode != "send-only":
        assert "D-Bus error org.freedesktop." in result.stdout
    assert records(audit) == [("browse", "_ipp._tcp", "deny", "run-option")]


def test_an_undeclared_type_cannot_be_browsed_or_advertised_by_its_records(bonjour, audit, state):
    """A PTR query of `_http._tcp.local` is a browse for `_http._tcp`; a PTR record added there
    advertises it."""
    options = ["--allow", "--bonjour-services", "_ipp._tcp", "--audit", audit.path]
    browse = bonjour.lnp_run(options, [PYTHON, EVASIONS, "record-browse", "_http._tcp.local"], env=state)
    assert (browse.returncode, browse.stdout.split(":")[0]) == (2, "D-Bus error org.freedesktop.Avahi.NotPermittedError")
    query = bonjour.lnp_run(options, [bonjour.dnssd_client, "query", "_http._tcp.local", "12"], env=state)
    assert query.stdout.strip() == "DNSServiceQueryRecord: error -65555"
    added = bonjour.lnp_run(options, [PYTHON, EVASIONS, "add-record", "_http._tcp.local"], env=state)
    assert added.stdout.startswith("D-Bus error org.freedesktop.Avahi.NotPermittedError"), added.stdout
    extra = bonjour.lnp_run(options, [PYTHON, EVASIONS, "add-service-extra"], env=state)
    assert extra.stdout.startswith("D-Bus error org.freedesktop.Avahi.NotPermittedError"), extra.stdout
    assert records(audit) == [("browse", "_http._tcp.local", "deny", "undeclared"),
                              ("browse", "_http._tcp.local", "deny", "undeclared"),
                              ("register", "_http._tcp.local", "deny", "undeclared"),
                              ("register", "client extra._http._tcp", "deny", "undeclared")]
    # A declared type's records may be asked for.
    declared = bonjour.lnp_run(options, [bonjour.dnssd_client, "query", "_ipp._tcp.local", "12"], env=state)
    assert declared.returncode == 0 and "answer _ipp._tcp.local" in declared.stdout, declared.stdout


def test_a_reverse_lookup_by_multicast_is_gated(bonjour, audit, state):
    query = bonjour.lnp_run(["--deny", "--audit", audit.path],
                            [bonjour.dnssd_client, "query", "2.0.79.10.in-addr.arpa", "12"], env=state)
    assert query.stdout.strip() == "DNSServiceQueryRecord: error -65570"
    assert records(audit) == [("resolve", "2.0.79.10.in-addr.arpa", "deny", "run-option")]


def test_advertising_is_gated(bonjour, audit, state):
    def peer_sees(name):
        found = bonjour.peer(["avahi-browse", "-t", "-p", "_http._tcp"])
        return name in found.stdout.replace("\\032", " ")

    denied = bonjour.lnp_run(["--deny", "--audit", audit.path],
                             ["timeout", "3", "avahi-publish", "-s", "client denied", "_http._tcp", "8080"], env=state)
    assert "Access denied" in denied.stderr
    assert not peer_sees("client denied")
    dnssd = bonjour.lnp_run(["--deny", "--audit", audit.path],
                            [bonjour.dnssd_client, "register", "client dnssd", "_http._tcp", "8081"], env=state)
    assert (dnssd.returncode, dnssd.stdout.strip()) == (2, "DNSServiceRegister: error -65570")
    assert records(audit) == [("register", "client denied._http._tcp", "deny", "run-option"),
                              ("register", "client dnssd._http._tcp", "deny", "run-option")]

    published = subprocess.Popen(
        [LAB, "exec", bonjour.state, "env", *[f"{k}={v}" for k, v in state.items()], bonjour.build.lnp_run, "--allow",
         "--", "avahi-publish", "-s", "client allowed", "_http._tcp", "8082"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 10
        while not peer_sees("client allowed"):
            assert time.monotonic() < deadline, "the peer never saw the allowed advertisement"
    finally:
        published.terminate()
        published.wait(10)


def test_undeclared_service_types_fail_as_apples_do(bonjour, audit, state):
    options = ["--allow", "--bonjour-services", "_ipp._tcp", "--audit", audit.path]
    undeclared = bonjour.lnp_run(options, [bonjour.dnssd_client, "browse", "_http._tcp"], env=state)
    assert (undeclared.returncode, undeclared.stdout.strip()) == (2, "DNSServiceBrowse: error -65555")  # NoAuth
    declared = bonjour.lnp_run(options, [bonjour.dnssd_client, "browse", "_ipp._tcp"], env=state)
    assert declared.returncode == 0 and "host=peer.local. port=631" in declared.stdout, declared.stdout
    avahi = bonjour.lnp_run(options, ["avahi-browse", "-t", "-p", "_http._tcp"], env=state)
    assert "avahi_service_browser_new() failed: Not permitted" in avahi.stderr
    publish = bonjour.lnp_run(options, ["timeout", "3", "avahi-publish", "-s", "client", "_http._tcp", "80"], env=state)
    assert "Not permitted" in publish.stderr
    # The program's own declaration, and a subtype of an undeclared type.
    from_environment = bonjour.lnp_run(["--allow", "--audit", audit.path],
                                       [bonjour.dnssd_client, "browse", "_printer._sub._http._tcp"],
                                       env=dict(state, LNP_BONJOUR_SERVICES="_ipp._tcp"))
    assert from_environment.stdout.strip() == "DNSServiceBrowse: error -65555"

    assert [r for r in records(audit) if r[3] == "undeclared"] == [
        ("browse", "_http._tcp", "deny", "undeclared"),
        ("browse", "_http._tcp", "deny", "undeclared"),
        ("register", "client._http._tcp", "deny", "undeclared"),
        ("browse", "_printer._sub._http._tcp", "deny", "undeclared"),
    ]


@pytest.mark.parametrize("declared, message", [
    ("ipp", "lnp-run: --bonjour-services: 'ipp' is not a Bonjour service type such as _ipp._tcp or _http._tcp"),
    ("_ipp._tcp,_http._xyz", "lnp-run: --bonjour-services: '_http._xyz' is not a Bonjour service type"),
    (",".join(f"_service{n}._tcp" for n in range(80)), "lnp-run: --bonjour-services: the list is 1269 bytes long; at most 1000"),
], ids=["a bare name", "another protocol", "too long"])
def test_a_malformed_declaration_is_refused_in_one_line(build, declared, message):
    result = run([build.lnp_run, "--allow", "--bonjour-services", declared, "--", "true"])
    assert result.returncode != 0
    assert result.stderr.splitlines()[0].startswith(message), result.stderr


def test_libdbus_call_found_without_libdbus_answers_as_libdbus_would(build, workdir):
    """The preload exports libdbus's blocking call; a program that finds it by name where
    libdbus is not loaded must get an error it can read, not an empty one."""
    program = workdir / "no_libdbus"
    compiled = run(["gcc", "-O2", "-Wall", "-o", program, FIXTURES / "no_libdbus.c"])
    assert compiled.returncode == 0, compiled.stderr
    assert run([program]).stdout.strip() == "absent"
    result = run([build.lnp_run, "--allow", "--", program])
    assert result.stdout.strip() == "reply none, error org.freedesktop.DBus.Error.AccessDenied", result.stdout + result.stderr


def test_a_browse_waits_for_the_persons_answer(bonjour, audit, state):
    terminal, out = bonjour.terminal(["--audit", str(audit.path)], [bonjour.dnssd_client, "browse", "_ipp._tcp"], state)
    terminal.wait_for("Don't Allow")
    assert "reports   browse _ipp._tcp\r" in terminal.text
    assert f"which is  {REASON}" in terminal.text
    terminal.allow()
    assert terminal.finish() == 0
    assert "host=peer.local. port=631" in out.read_text()
    assert records(audit)[0] == ("browse", "_ipp._tcp", "allow", "answered")


def test_a_browse_while_the_person_is_asked_finds_nothing(bonjour, audit, state):
    """--deny-while-asking, Apple's way: while the question is up a dns_sd browse does not fail,
    it finds nothing (lnp's own reference, whose descriptor never becomes readable); an Avahi
    client's browser is refused as denied."""
    terminal, out = bonjour.terminal(["--deny-while-asking", "--audit", str(audit.path)],
                                     ["sh", "-c", f"{bonjour.dnssd_client} browse _ipp._tcp; echo status $?; "
                                      "avahi-browse -t -p _ipp._tcp; echo status $?"], state)
    terminal.wait_for("Don't Allow")
    deadline = time.monotonic() + 20
    while out.read_text().count("status") < 2:
        assert time.monotonic() < deadline, out.read_text()
        time.sleep(0.1)
    assert out.read_text().splitlines()[:2] == ["timeout", "status 1"]
    assert "avahi_service_browser_new() failed: Access denied" in out.read_text()
    terminal.type("d")
    terminal.finish()
    assert records(audit)[:2] == [("browse", "_ipp._tcp", "deny", "asking"), ("browse", "_ipp._tcp", "deny", "asking")]


def test_a_reverse_lookup_through_the_daemon_is_asked_about(bonjour, audit, state):
    """avahi-resolve -a asks the daemon for an address's name by multicast: lnp-run's own look at
    the ask finds a Bonjour operation, not a literal that needs no lookup."""
    terminal, out = bonjour.terminal(["--audit", str(audit.path)], ["avahi-resolve", "-a", "10.79.0.2"], state)
    terminal.wait_for("Don't Allow")
    assert "reports   resolve 10.79.0.2\r" in terminal.text
    terminal.allow()
    assert terminal.finish() == 0
    assert "peer.local" in out.read_text()
    assert records(audit) == [("resolve", "10.79.0.2", "allow", "answered")]
