"""The seccomp supervisor: what the preload cannot see — static programs, raw system calls,
a dlopen'ed C library, children without the preload — is decided by lnp-run, in the kernel's
path, with the same rules and the same records."""

import os
import pathlib
import re
import shutil
import subprocess
import time

import pytest

from conftest import ByteSink, Capture, json_lines

TO_PEER = "src host 10.77.0.1 and dst host 10.77.0.2 and (tcp port 8080 or udp port 9999)"
DENIED = {"result": -1, "errno": "EHOSTUNREACH"}


def calls(result):
    return [{k: v for k, v in line.items() if k != "call"} for line in json_lines(result.stdout)]


def escapes(fixtures, kind):
    return fixtures.escapes_static if kind == "static" else fixtures.escapes


@pytest.mark.parametrize("user", [None, "65534"])
@pytest.mark.parametrize("command", [
    ["static", "raw", "connect", "10.77.0.2", "8080"],
    ["static", "raw", "sendto", "10.77.0.2", "9999"],
    ["dynamic", "raw", "connect", "10.77.0.2", "8080"],
    ["dynamic", "dlopen", "10.77.0.2", "8080"],
    ["static", "send", "10.77.0.2", "8080", "5"],
    ["static", "batch", "10.77.0.2", "9999", "3"],
])
def test_calls_past_the_preload_are_denied_and_recorded_by_the_supervisor(lan, fixtures, audit, command, user):
    kind, *arguments = command
    capture = lan.capture(TO_PEER)
    audit.path.touch()
    audit.path.chmod(0o666)  # written by lnp-run, as the user the test runs it as
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], [escapes(fixtures, kind)] + arguments, user=user)
    assert calls(result)[0] == DENIED, result.stderr
    assert capture.packets() == []
    [record] = audit.records()
    assert record["by"] == "supervisor"
    assert record["decision"] == "deny" and record["address"] == "10.77.0.2"
    assert record["exe"] == str(escapes(fixtures, kind))


@pytest.mark.parametrize("user", [None, "65534"])
def test_a_process_that_hides_its_memory_is_denied_and_named(lan, fixtures, audit, user):
    """A non-dumpable process's memory and descriptors are closed to an unprivileged
    supervisor: its calls cannot be decided, so they are denied, never let through."""
    capture = lan.capture(TO_PEER)
    audit.path.touch()
    audit.path.chmod(0o666)
    result = lan.lnp_run(["--allow", "--audit", str(audit.path)],
                         [fixtures.escapes_static, "undumpable", "connect", "10.77.0.2", "8080"], user=user)
    if user is None:  # root's supervisor may read any process: decided as usual
        assert calls(result) == [{"result": 0, "errno": None}], result.stderr
        return
    assert calls(result) == [DENIED], result.stderr
    assert capture.packets() == []
    assert "(named escapes-static): cannot read it" in result.stderr, result.stderr


@pytest.mark.parametrize("child", [["env", "-u", "LD_PRELOAD"], ["env", "-i"]])
def test_a_child_without_the_preload_is_still_gated(lan, fixtures, audit, child):
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         child + [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    assert calls(result) == [DENIED], result.stderr
    assert capture.packets() == []
    assert [r["by"] for r in audit.records()] == ["supervisor"]


def test_a_forged_policy_in_the_environment_widens_nothing(lan, fixtures, audit):
    forged = ["env", "-u", "LD_PRELOAD", "LNP_POLICY=allow,113,app,run-option,none", "LNP_RUN=1"]
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         forged + [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    assert calls(result) == [DENIED], result.stderr
    assert capture.packets() == []


def test_the_preload_decides_what_it_sees_and_says_so(lan, fixtures, audit):
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    assert calls(result) == [DENIED]
    assert [r["by"] for r in audit.records()] == ["preload"]


@pytest.mark.parametrize("kind", ["static", "dynamic"])
def test_io_uring_is_refused(lan, fixtures, kind):
    result = lan.lnp_run(["--allow"], [escapes(fixtures, kind), "io-uring"])
    assert calls(result) == [{"result": -1, "errno": "EPERM"}]


def test_io_uring_works_without_the_supervisor(lan, fixtures):
    """The refusal is the supervisor's, not the machine's."""
    result = lan.lnp_run(["--allow", "--preload-only"], [fixtures.escapes, "io-uring"])
    assert calls(result)[0]["errno"] is None


@pytest.mark.parametrize("kind, family", [("static", "packet"), ("static", "xdp"), ("dynamic", "xdp")])
def test_a_packet_socket_is_a_local_operation(lan, fixtures, audit, kind, family):
    """AF_PACKET and AF_XDP sockets send frames onto the link itself."""
    program = [escapes(fixtures, kind), "packet", family]
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], program)
    assert calls(result) == [DENIED]
    [record] = audit.records()
    assert (record["op"], record["transport"]) == ("socket", "packet")
    assert record["by"] == ("supervisor" if kind == "static" else "preload")
    allowed = lan.lnp_run(["--allow"], program)
    assert calls(allowed) == [{"result": 0, "errno": None}]


def test_not_local_destinations_pass_under_deny(lan, fixtures):
    """Loopback and a routed host are no local-network operation."""
    for host, port in [("127.0.0.1", "1"), ("10.99.0.1", "1")]:
        result = lan.lnp_run(["--deny"], [fixtures.escapes_static, "raw", "sendto", host, port])
        assert calls(result) == [{"result": 7, "errno": None}], result.stderr


@pytest.mark.parametrize("user", [None, "65534"])
def test_allowed_calls_of_a_static_program_are_made_for_it(lan, fixtures, user):
    program = fixtures.escapes_static
    sent = lan.lnp_run(["--allow"], [program, "send", "10.77.0.2", "8080", "5"], user=user)
    assert calls(sent) == [{"result": 0, "errno": None}, {"result": 5, "errno": None}], sent.stderr
    before = len(lan.udp_received())
    batch = lan.lnp_run(["--allow"], [program, "batch", "10.77.0.2", "9999", "5"], user=user)
    assert calls(batch) == [{"result": 5, "errno": None}, {"result": 0, "errno": None}], batch.stderr
    nonblocking = lan.lnp_run(["--allow"], [program, "nonblocking", "10.77.0.2", "8080"], user=user)
    assert calls(nonblocking) == [{"result": -1, "errno": "EINPROGRESS"}, {"result": 0, "errno": None}]
    raw = lan.lnp_run(["--allow"], [program, "raw", "sendto", "10.77.0.2", "9999"], user=user)
    assert calls(raw) == [{"result": 7, "errno": None}]
    deadline = time.time() + 5
    while len(lan.udp_received()) < before + 6 and time.time() < deadline:
        time.sleep(0.05)
    assert len(lan.udp_received()) == before + 6


def test_a_megabyte_reaches_the_peer_whole(lan, fixtures, workdir):
    """A send larger than 64 KiB, made by the supervisor, arrives complete."""
    sink = ByteSink(lan, workdir, 7001)
    result = lan.lnp_run(["--allow"], [fixtures.escapes_static, "send", "10.77.0.2", "7001", str(1 << 20)])
    assert calls(result) == [{"result": 0, "errno": None}, {"result": 1 << 20, "errno": None}], result.stderr
    assert sink.received() == 1 << 20


@pytest.mark.parametrize("address", ["10.77.0.1", "224.0.0.1"])
def test_a_program_that_drops_to_nobody_keeps_nobodys_rights(lan, fixtures, address):
    """lnp-run as root makes allowed calls for the program: with the program's credentials,
    never its own. Nobody may not bind a port below 1024."""
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    result = lan.lnp_run(["--allow"], drop + [fixtures.escapes_static, "bind", address, "80"])
    assert calls(result) == [{"result": -1, "errno": "EACCES"}], result.stderr
    as_root = lan.lnp_run(["--allow"], [fixtures.escapes_static, "bind", address, "80"])
    assert calls(as_root) == [{"result": 0, "errno": None}], as_root.stderr


@pytest.mark.parametrize("kernel", [None, "6.1", "5.15"])
def test_older_kernels_paths_decide_the_same(lan, fixtures, audit, kernel):
    """LNP_SUPERVISOR_AS_KERNEL makes lnp-run do without what 6.1 and 5.15 lack (pidfds of
    threads, synchronous wake-up): a call from a second thread is still read and decided."""
    env = {"PATH": "/usr/bin:/bin"} | ({"LNP_SUPERVISOR_AS_KERNEL": kernel} if kernel else {})
    denied = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         [fixtures.escapes_static, "threaded", "connect", "10.77.0.2", "8080"], env=env)
    assert calls(denied) == [DENIED], denied.stderr
    allowed = lan.lnp_run(["--allow"], [fixtures.escapes_static, "threaded", "sendto", "10.77.0.2", "9999"], env=env)
    assert calls(allowed) == [{"result": 7, "errno": None}], allowed.stderr
    assert [r["by"] for r in audit.records()] == ["supervisor"]


@pytest.mark.parametrize("kernel,expected", [
    (None, {"thread pidfd": True, "synchronous wake-up": True, "killable wait": True}),
    ("6.1", {"thread pidfd": False, "synchronous wake-up": False, "killable wait": True}),
    ("5.15", {"thread pidfd": False, "synchronous wake-up": False, "killable wait": False}),
])
def test_the_older_kernel_switch_leaves_out_what_those_kernels_lack(lan, build, fixtures, workdir, kernel, expected):
    """What lnp-run asks of the kernel, as strace shows it: a pidfd of the second thread
    (PIDFD_THREAD, 0x80), synchronous wake-up (SECCOMP_IOCTL_NOTIF_SET_FLAGS, '!' 4), the
    killable wait (a filter flag)."""
    trace = workdir / f"kernel-{kernel}.trace"
    env = {"PATH": "/usr/bin:/bin"} | ({"LNP_SUPERVISOR_AS_KERNEL": kernel} if kernel else {})
    lan.client(["strace", "-f", "-qq", "-e", "trace=pidfd_open,ioctl,seccomp", "-o", trace, build.lnp_run, "--deny", "--",
                fixtures.escapes_static, "threaded", "connect", "10.77.0.2", "8080"], env=env)
    text = trace.read_text()
    used = {
        "thread pidfd": re.search(r"pidfd_open\(\d+, (PIDFD_THREAD|0x80)", text) is not None,
        "synchronous wake-up": re.search(r"ioctl\(\d+, (SECCOMP_IOCTL_NOTIF_SET_FLAGS|_IOC\(_IOC_WRITE, 0x21, 0x4,)", text) is not None,
        "killable wait": "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV" in text,
    }
    assert used == expected


def test_an_unknown_kernel_to_behave_as_is_refused(lan, fixtures):
    env = {"PATH": "/usr/bin:/bin", "LNP_SUPERVISOR_AS_KERNEL": "4.19"}
    result = lan.lnp_run(["--deny"], [fixtures.escapes_static, "raw", "sendto", "127.0.0.1", "1"], env=env)
    assert (result.returncode, result.stderr) == (125, "lnp-run: LNP_SUPERVISOR_AS_KERNEL takes 6.1 or 5.15, not '4.19'\n")


def test_a_nested_run_cannot_widen_what_the_outer_denies(lan, build, fixtures, audit):
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         [build.lnp_run, "--allow", "--", fixtures.escapes_static, "raw", "connect", "10.77.0.2", "8080"])
    assert calls(result) == [DENIED], result.stderr
    assert capture.packets() == []
    assert [r["by"] for r in audit.records()] == ["supervisor"]


@pytest.mark.parametrize("kind,command,by", [
    ("static", ["raw", "sendto", "10.77.0.2", "9999"], "supervisor"),
    ("dynamic", ["batch", "10.77.0.2", "9999", "1"], "preload"),
])
def test_a_nested_run_narrows_what_the_outer_allows_and_records_it(lan, build, fixtures, audit, workdir, kind, command, by):
    """The inner run has no filter of its own below the outer's: the outer supervisor decides
    its static program's calls, held to the inner run's policy, and the inner run's audit
    has the record too (the preload decides a dynamic program's with the inner policy)."""
    inner = workdir / "inner.jsonl"
    inner.unlink(missing_ok=True)
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--allow", "--audit", str(audit.path)],
                         [build.lnp_run, "--deny", "--errno", "ECONNREFUSED", "--audit", inner, "--",
                          escapes(fixtures, kind), *command])
    assert calls(result)[0] == {"result": -1, "errno": "ECONNREFUSED"}, result.stderr
    assert capture.packets() == []
    [record] = json_lines(inner.read_text())
    assert (record["decision"], record["because"], record["by"]) == ("deny", "run-option", by)
    assert [(r["decision"], r["by"]) for r in audit.records()] == [("deny", by)]


def test_an_unprivileged_nested_run_passes_its_records_up_to_a_strict_outer_run(lan, build, fixtures, audit, workdir):
    """The outer run's listener is closed to the program (its keeper is not dumpable); the
    inner keeper, with no listener of its own, must stay readable to the outer supervisor, which
    decides its calls under --strict: the records the preload sent it, passed up, were lost
    when it was not."""
    inner = workdir / "inner-unprivileged.jsonl"
    for path in (audit.path, inner):
        path.unlink(missing_ok=True)
        path.touch()
        path.chmod(0o666)
    result = lan.lnp_run(["--strict", "--allow", "--audit", str(audit.path)],
                         [build.lnp_run, "--deny", "--audit", inner, "--", fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"],
                         user="65534")
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH", result.stdout + result.stderr
    assert "cannot read it" not in result.stderr, result.stderr
    assert [r["decision"] for r in json_lines(inner.read_text())] == ["deny"]
    assert [r["decision"] for r in audit.records()] == ["deny"]


def test_a_nested_run_allows_what_both_allow(lan, build, fixtures, workdir):
    inner = workdir / "inner-allow.jsonl"
    inner.unlink(missing_ok=True)
    result = lan.lnp_run(["--allow"], [build.lnp_run, "--allow", "--audit", inner, "--",
                                       fixtures.escapes_static, "raw", "sendto", "10.77.0.2", "9999"])
    assert calls(result) == [{"result": 7, "errno": None}], result.stderr
    assert [(r["decision"], r["by"]) for r in json_lines(inner.read_text())] == [("allow", "supervisor")]


def test_preload_only_leaves_static_programs_unobserved(lan, fixtures):
    result = lan.lnp_run(["--deny", "--preload-only"], [fixtures.escapes_static, "raw", "sendto", "10.77.0.2", "9999"])
    assert calls(result) == [{"result": 7, "errno": None}]
    assert "running it unobserved" in result.stderr


def test_a_static_program_is_not_warned_about_when_supervised(lan, fixtures):
    result = lan.lnp_run(["--deny"], [fixtures.escapes_static, "raw", "sendto", "127.0.0.1", "1"])
    assert result.stderr == ""


@pytest.mark.parametrize("options, expected", [([], '"result":-1,"errno":"EPERM"'), (["--preload-only"], '"result":0')])
def test_typing_into_the_terminal_is_refused(lan, fixtures, options, expected):
    """On a terminal (script makes one) the kernel would take it — the terminal is the
    program's own — and the filter refuses it."""
    command = " ".join([str(lan.build.lnp_run), "--allow", *options, "--", str(fixtures.escapes_static), "tiocsti"])
    script = lan.client(["script", "-qec", command, "/dev/null"])
    assert expected in script.stdout, script.stdout


@pytest.mark.parametrize("kind", ["static", "dynamic"])
def test_a_daemon_that_outlives_the_program_stays_gated(lan, fixtures, audit, workdir, kind):
    """lnp-run returns the program's status at once; what the program left running is still
    supervised (its calls would otherwise fail with ENOSYS) and recorded."""
    out = workdir / f"daemon-{kind}.out"
    out.unlink(missing_ok=True)
    client = fixtures.escapes_static if kind == "static" else fixtures.escapes
    script = f"({{ sleep 1; {client} raw connect 10.77.0.2 8080; }} > {out} 2>&1 < /dev/null &) ; exit 7"
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["sh", "-c", script])
    assert result.returncode == 7, result.stderr
    assert not out.exists() or out.read_text() == "", "lnp-run waited for the daemon"
    deadline = time.time() + 10
    while (not out.exists() or not out.read_text()) and time.time() < deadline:
        time.sleep(0.05)
    assert calls(type("R", (), {"stdout": out.read_text()})) == [DENIED]
    assert capture.packets() == []
    time.sleep(0.3)
    assert [(r["by"], r["decision"]) for r in audit.records()] == [("supervisor", "deny")]


def test_a_run_started_without_standard_streams_still_records_what_the_program_left(lan, fixtures, audit, workdir):
    """lnp-run started with its standard streams closed (a service manager's, `<&- >&- 2>&-`):
    its own descriptors took their numbers, and the keeper, which puts /dev/null on its
    standard streams once the program's status is sent, replaced its audit there (the
    daemon's record was lost) and its signalfd (it spun at full CPU while the daemon ran)."""
    out = workdir / "closed-streams.out"
    out.unlink(missing_ok=True)
    script = f"({{ sleep 1; {fixtures.escapes_static} raw connect 10.77.0.2 8080; }} > {out} 2>&1 < /dev/null &) ; exit 7"
    result = lan.client(["sh", "-c", 'exec "$@" <&- >&- 2>&-', "sh", lan.build.lnp_run, "--deny", "--audit", audit.path,
                         "--", "sh", "-c", script])
    assert result.returncode == 7
    deadline = time.time() + 10
    while (not out.exists() or not out.read_text()) and time.time() < deadline:
        time.sleep(0.05)
    assert calls(type("R", (), {"stdout": out.read_text()})) == [DENIED]
    time.sleep(0.3)
    assert [(r["by"], r["decision"]) for r in audit.records()] == [("supervisor", "deny")]


def test_a_daemon_of_an_allowed_program_keeps_working(lan, fixtures, workdir):
    out = workdir / "daemon-allowed.out"
    out.unlink(missing_ok=True)
    script = f"({{ sleep 1; {fixtures.escapes_static} raw connect 10.77.0.2 8080; }} > {out} 2>&1 < /dev/null &) ; exit 0"
    result = lan.lnp_run(["--allow"], ["sh", "-c", script])
    assert result.returncode == 0, result.stderr
    deadline = time.time() + 10
    while (not out.exists() or not out.read_text()) and time.time() < deadline:
        time.sleep(0.05)
    assert '"result":0' in out.read_text()


def test_a_thread_with_its_own_descriptors_is_denied_on_older_kernels(lan, fixtures):
    """Before Linux 6.9 lnp-run reaches a thread through its process, whose descriptor table
    a thread may have left (unshare): such a call cannot be read, so it is denied."""
    env = {"PATH": "/usr/bin:/bin", "LNP_SUPERVISOR_AS_KERNEL": "6.1"}
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny"], [fixtures.escapes_static, "unshared", "10.77.0.2", "9999"], env=env)
    assert calls(result) == [DENIED], result.stderr
    assert "descriptor table of its own" in result.stderr
    assert capture.packets() == []
    # With thread pidfds, the thread's own table is read, and the call decided as any other.
    allowed = lan.lnp_run(["--allow"], [fixtures.escapes_static, "unshared", "10.77.0.2", "9999"])
    assert calls(allowed) == [{"result": 7, "errno": None}], allowed.stderr


def test_a_send_interrupted_by_signals_arrives_once(lan, fixtures, workdir):
    """A timer interrupts the sending thread every millisecond: lnp-run's call for it is never
    made twice nor abandoned halfway, so the peer receives each byte exactly once. (Without
    the killable wait, as on 5.15, lnp-run resumes such a send past what went, but the kernel's
    own race between an answer and a signal can still have a piece go twice: README.)"""
    sink = ByteSink(lan, workdir, 7002)
    size = 16 << 20
    result = lan.lnp_run(["--allow"], [fixtures.escapes_static, "interrupted", "10.77.0.2", "7002", str(size)])
    assert calls(result) == [{"result": 0, "errno": None}, {"result": size, "errno": None}], result.stderr
    assert sink.received() == size


@pytest.mark.parametrize("kernel", [None, "5.15"])
@pytest.mark.parametrize("handler", ["interrupt", "restart"])
def test_a_signal_interrupts_a_blocking_connect_as_without_lnp(lan, fixtures, handler, kernel):
    """A static program's blocking connect is made on lnp-run's worker while the program's
    thread waits, and a timer's signal must reach it as it would: a handler without
    SA_RESTART ends the connect with EINTR (a timeout made with alarm()), one with it runs
    while the connect goes on. 10.77.0.66 is on the link, but no host has it: the connect
    waits about three seconds for its neighbour, then fails with EHOSTUNREACH."""
    command = [fixtures.escapes_static, "alarm-connect", "10.77.0.66", "8080", handler]
    plain = lan.client(command)
    env = {"LNP_SUPERVISOR_AS_KERNEL": kernel} if kernel else None
    supervised = lan.lnp_run(["--allow"], command, env=env)
    assert calls(supervised) == calls(plain), supervised.stderr
    expected = "EINTR" if handler == "interrupt" else "EHOSTUNREACH"
    assert calls(plain) == [{"result": -1, "errno": expected}, {"result": 1 if handler == "interrupt" else 3, "errno": None}]


@pytest.mark.parametrize("kind", ["static", "dynamic"])
def test_a_thread_blocked_in_connect_can_be_cancelled(lan, fixtures, kind):
    """connect is a cancellation point. The supervisor's call for a static program is
    interrupted by the cancellation's signal as by any other; the preload's, made from lnp's
    page, where glibc cannot act on it, is cancelled as it returns (10.77.0.66 has no host:
    about three seconds)."""
    result = lan.lnp_run(["--allow"], [escapes(fixtures, kind), "cancel-connect", "10.77.0.66", "8080"])
    cancelled, took = calls(result)
    assert cancelled == {"result": 1, "errno": None}, result.stderr
    assert took["result"] < (1000 if kind == "static" else 5000)


def test_blocking_calls_past_the_workers_limit_fail_and_others_go_on(lan, fixtures):
    """Each blocking call lnp-run makes for a program holds a worker thread (at most 128): 200
    connects that wait three seconds each for a neighbour that does not answer leave 72
    refused with ENOBUFS — and another program's calls are answered meanwhile."""
    slow = lan.lnp_run(["--allow"], ["sh", "-c", f"{fixtures.escapes_static} many-connects 10.77.0.66 8080 200 & "
                                     f"sleep 1; {fixtures.escapes_static} raw sendto 127.0.0.1 9; wait"])
    lines = calls(slow)
    assert lines[0] == {"result": 7, "errno": None}, slow.stderr  # the other program, while the connects wait
    assert lines[1:] == [{"result": 72, "errno": None}, {"result": 128, "errno": None}], slow.stderr


def test_zero_copy_sends_arrive_intact(lan, fixtures):
    """lnp-run sends its own copy, which it frees once the call returns: MSG_ZEROCOPY would
    have the kernel read it later."""
    result = lan.lnp_run(["--allow"], [fixtures.escapes_static, "zerocopy"])
    assert calls(result) == [{"result": 8 << 20, "errno": None}, {"result": 0, "errno": None}], result.stderr


def test_a_broken_pipe_is_reported_as_the_kernel_reports_it(lan, fixtures):
    """Each send on a reset connection fails with EPIPE and raises one SIGPIPE, never EINTR
    (the signal must not interrupt the program's wait for lnp-run's answer)."""
    plain = lan.client([fixtures.escapes_static, "broken-pipe", "300"])
    supervised = lan.lnp_run(["--allow"], [fixtures.escapes_static, "broken-pipe", "300"])
    assert calls(supervised) == calls(plain), supervised.stderr


@pytest.mark.parametrize("kind", ["dynamic", "static"])
def test_a_program_that_knows_lnp_can_call_through_the_page_by_default(lan, fixtures, kind):
    """What --strict is for, and what the README says of the default: the filter lets the
    page's calls through, and a program that knows where it is (LNP_GADGET) can use it."""
    capture = lan.capture(TO_PEER)
    result = lan.lnp_run(["--deny"], [escapes(fixtures, kind), "gadget", "10.77.0.2", "8080"])
    assert calls(result)[0] == {"result": 0, "errno": None}, result.stderr
    assert capture.packets()


@pytest.mark.parametrize("user", [None, "65534"])
@pytest.mark.parametrize("kind", ["dynamic", "static"])
def test_strict_leaves_no_page_to_call_through(lan, fixtures, audit, kind, user):
    capture = lan.capture(TO_PEER)
    audit.path.touch()
    audit.path.chmod(0o666)
    result = lan.lnp_run(["--strict", "--deny", "--audit", str(audit.path)],
                         [escapes(fixtures, kind), "gadget", "10.77.0.2", "8080"], user=user)
    assert calls(result)[0] == DENIED, result.stderr
    assert capture.packets() == []
    [record] = audit.records()
    assert (record["by"], record["op"], record["address"]) == ("supervisor", "connect", "10.77.0.2")


def test_strict_gives_the_program_no_page(lan):
    result = lan.lnp_run(["--strict", "--allow"], ["env"])
    assert result.returncode == 0
    assert not [line for line in result.stdout.splitlines() if line.startswith("LNP_GADGET=")]


def test_strict_records_each_call_once(lan, fixtures, audit):
    """The preload decides first, and its allowed calls go on to the supervisor, which makes
    and records them: one record each, the supervisor's. A denial stops at the preload."""
    sink = ByteSink(lan, lan.workdir, 7101)
    result = lan.lnp_run(["--strict", "--allow", "--audit", str(audit.path)],
                         [fixtures.escapes, "send", "10.77.0.2", "7101", "100000"])
    assert calls(result)[-1] == {"result": 100000, "errno": None}, result.stderr
    assert sink.received() == 100000
    assert [(r["op"], r["decision"], r["by"]) for r in audit.records()] == [("connect", "allow", "supervisor")]
    audit.path.unlink()
    lan.lnp_run(["--strict", "--deny", "--audit", str(audit.path)], [fixtures.escapes, "batch", "10.77.0.2", "9999", "3"])
    assert [(r["op"], r["decision"], r["by"]) for r in audit.records()] == [("sendmmsg", "deny", "preload")]


@pytest.mark.parametrize("outer", [["--deny"], ["--deny", "--strict"]])
@pytest.mark.parametrize("kind", ["static", "dynamic"])
def test_strict_nested_in_another_run_keeps_allowed_calls_working(lan, build, fixtures, outer, kind):
    """The inner run has no supervisor of its own (the outer's filter is first): socket hooks
    of its own would refuse the calls the outer supervisor makes."""
    result = lan.lnp_run(outer, [build.lnp_run, "--strict", "--deny", "--", escapes(fixtures, kind), "send", "203.0.113.5", "8080", "5"])
    assert calls(result) == [{"result": 0, "errno": None}, {"result": 5, "errno": None}], result.stderr
    assert "socket hooks" not in result.stderr


def test_strict_and_preload_only_exclude_each_other(lan):
    result = lan.lnp_run(["--strict", "--preload-only", "--allow"], ["true"])
    assert result.returncode != 0
    assert result.stderr.strip() == "lnp-run: --strict and --preload-only cannot be given together: --strict needs the supervisor"


@pytest.fixture
def other_namespace(lan):
    """A network namespace of the program's own making (here `ip netns exec`): 10.55.0.2 is
    on its link, while in lnp-run's namespace that address goes out through the gateway."""
    tag = f"{lan.client_ns}x"
    a, b = f"{tag}a", f"{tag}b"
    lan._sh(f"""
        ip netns add {a}; ip netns add {b}
        ip link add xa0 netns {a} type veth peer name xb0 netns {b}
        ip -n {a} link set lo up; ip -n {a} link set xa0 up; ip -n {b} link set xb0 up
        ip -n {a} addr add 10.55.0.1/24 dev xa0; ip -n {b} addr add 10.55.0.2/24 dev xb0
    """)
    yield a, b
    lan._sh(f"ip netns del {a}; ip netns del {b}")


def test_a_call_is_decided_in_its_sockets_network_namespace(lan, fixtures, audit, other_namespace):
    program_namespace, peer_namespace = other_namespace
    capture = Capture(peer_namespace, "xb0", "dst host 10.55.0.2 and not arp", lan.workdir / "other.pcap")
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         ["ip", "netns", "exec", program_namespace, fixtures.escapes_static, "raw", "sendto", "10.55.0.2", "9999"])
    assert calls(result)[0] == DENIED, result.stderr
    assert capture.packets() == []
    [record] = audit.records()
    assert (record["by"], record["address"], record["reason"]) == ("supervisor", "10.55.0.2", "on-link 10.55.0.0/24 via xa0")
    # The same address from lnp-run's own namespace: through the gateway, not local.
    allowed = lan.lnp_run(["--deny"], [fixtures.escapes_static, "raw", "sendto", "10.55.0.2", "9999"])
    assert calls(allowed)[0] == {"result": 7, "errno": None}



TAKE_THE_LISTENER = r'''
import ctypes, os, socket, struct, sys, threading, time
if "LD_PRELOAD" in os.environ:  # without the preload, every gated call goes to the supervisor
    del os.environ["LD_PRELOAD"]
    os.execv(sys.executable, [sys.executable] + sys.argv)
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(int(os.environ["LNP_RUN"]))  # the keeper, this program's parent
listener = -1
for number in range(256):
    fd = libc.syscall(438, pidfd, number, 0)  # pidfd_getfd
    if fd >= 0 and "seccomp" in os.readlink(f"/proc/self/fd/{fd}"):
        listener = fd
        break
    if fd >= 0:
        os.close(fd)
print("listener taken" if listener >= 0 else "listener not taken", flush=True)
if listener < 0:
    sys.exit(0)

def answer():  # every notification this thread receives is let through (CONTINUE)
    notification = ctypes.create_string_buffer(80)
    while True:
        ctypes.memset(notification, 0, 80)
        if libc.ioctl(listener, ctypes.c_ulong(0xc0502100), notification) == 0:  # SECCOMP_IOCTL_NOTIF_RECV
            response = struct.pack("QqiI", struct.unpack_from("Q", notification.raw)[0], 0, 0, 1)
            libc.ioctl(listener, ctypes.c_ulong(0xc0182101), ctypes.create_string_buffer(response, 24))  # _SEND

threading.Thread(target=answer, daemon=True).start()
time.sleep(0.2)
for attempt in range(50):
    try:
        socket.create_connection(("10.77.0.2", 8080), timeout=2).close()
        print("reached the peer", flush=True)
        break
    except OSError:
        pass
'''


def test_the_program_cannot_take_the_keepers_listener(lan, workdir):
    """The keeper runs as the program's user. Where the kernel lets a process take another's
    descriptors, or trace it, as the same user (no Yama, or ptrace_scope 0), the program must
    still not get the filter's listener from the keeper and answer its own calls with it:
    under --strict --deny, a connect made past the preload reached the peer.
    Yama's ptrace_scope 1 (many distributions' default) keeps a program from its parent's
    descriptors whatever the keeper does: the test would show nothing there, so it lowers the
    scope to 0 while it runs."""
    yama = pathlib.Path("/proc/sys/kernel/yama/ptrace_scope")
    scope = yama.read_text().strip() if yama.exists() else "0"
    if scope != "0":
        try:
            yama.write_text("0")
        except OSError as error:
            if os.environ.get("CI") == "true":
                raise
            pytest.skip(f"Yama's ptrace_scope is {scope} and cannot be lowered ({error}): the keeper's guard is not tested")
    try:
        take_the_listener(lan, workdir)
    finally:
        if scope != "0":
            yama.write_text(scope)


def take_the_listener(lan, workdir):
    program = workdir / "take-the-listener.py"
    program.write_text(TAKE_THE_LISTENER)
    program.chmod(0o644)
    capture = lan.capture("src host 10.77.0.1 and dst host 10.77.0.2 and tcp port 8080")
    result = lan.lnp_run(["--strict", "--deny"], ["python3", program], user="65534", timeout=60)
    assert "listener not taken" in result.stdout, result.stdout + result.stderr
    assert capture.packets() == []


def test_a_script_whose_path_is_not_utf8_is_not_judged_as_another_file(lan, build, workdir, audit):
    """The program's words reach it byte for byte, but the script an interpreter is given is
    looked up as text: `python3 s-\\xff.py` ran s-\\xff.py under the decision remembered for
    s-\\ufffd.py, another file, and its records named that file (or the interpreter, when no
    such file exists)."""
    home = workdir / "home-not-utf8-script"
    home.mkdir(exist_ok=True)
    run_script = bytes(workdir) + b"/s-\xff.py"
    other = workdir / "s-\ufffd.py"
    other.write_text("print('the allowed script')\n")
    with open(run_script, "wb") as file:
        file.write(b"import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                   b"try:\n    s.sendto(b'x', ('10.77.0.2', 9999)); print('sent')\n"
                   b"except OSError as e:\n    print('refused', e.errno)\n")
    env = {b"PATH": b"/usr/bin:/bin:" + os.environb.get(b"PATH", b""), b"HOME": bytes(home)}
    python = shutil.which("python3")
    allowed = subprocess.run([bytes(build.lnp), b"allow", bytes(other)], capture_output=True, env=env)
    assert allowed.returncode == 0, allowed.stderr
    try:
        result = subprocess.run(["ip", "netns", "exec", lan.client_ns, bytes(build.lnp_run), b"--audit",
                                 bytes(audit.path), b"--", python.encode(), run_script], capture_output=True, env=env)
        if result.returncode == 125:
            return  # refused, as a program whose path is not UTF-8 is
        assert result.stdout != b"sent\n", "the script ran under another file's decision"
        for record in audit.records():
            assert record["program"] not in (str(other), os.path.realpath(python)), record
    finally:
        os.unlink(run_script)
        other.unlink()



def test_a_run_nested_in_a_strict_run_has_its_allowed_calls_made(lan, build, fixtures, audit, workdir):
    """Under an outer --strict run that records, a nested run's dynamic program's allowed local
    call was denied after two seconds ("its lnp-run did not answer"): the preload's record goes
    to the inner keeper, which passes it up with a sendto to an address (no page under --strict:
    the outer supervisor is notified) while that supervisor, notified of the program's call,
    waits on the inner run for its settings."""
    inner = workdir / "inner-strict-made.jsonl"
    inner.unlink(missing_ok=True)
    sink = ByteSink(lan, lan.workdir, 7103)
    result = lan.lnp_run(["--strict", "--allow", "--audit", str(audit.path)],
                         [build.lnp_run, "--allow", "--audit", inner, "--", fixtures.escapes, "send", "10.77.0.2", "7103", "5"])
    assert calls(result)[-1] == {"result": 5, "errno": None}, result.stderr
    assert sink.received() == 5


def test_a_run_nested_in_a_strict_run_records_each_call_once(lan, build, fixtures, audit, workdir):
    """Under an outer --strict run, the inner run's processes have no page: the outer
    supervisor decides and records each socket call the preload lets through, and sends its
    record to the inner run. The preload's record of the same call was kept by the inner run
    (no filter of its own) and passed up without its outsidePage flag (`RunRecords.forward`
    writes none), so the outer run kept it too: both audits held the call twice, an
    "allow" by the preload beside the supervisor's own decision (here even a "deny")."""
    inner = workdir / "inner-strict-once.jsonl"
    inner.unlink(missing_ok=True)
    lan.lnp_run(["--strict", "--allow", "--audit", str(audit.path)],
                [build.lnp_run, "--allow", "--audit", inner, "--", fixtures.escapes, "send", "10.77.0.2", "7104", "5"])
    for records in (audit.records(), json_lines(inner.read_text())):
        assert [(r["op"], r["by"]) for r in records] == [("connect", "supervisor")], records


def test_a_run_nested_in_a_strict_run_keeps_the_activity_only_it_records(lan, build, fixtures, audit, workdir):
    """The enclosing run's supervisor records a nested run's local calls for it, but the rest
    of its activity only when it records all activity itself: the nested run's --audit-all
    keeps the preload's record of a send to a routed host (and the enclosing audit, of local
    operations only, has none of it)."""
    inner = workdir / "inner-strict-all.jsonl"
    inner.unlink(missing_ok=True)
    result = lan.lnp_run(["--strict", "--allow", "--audit", str(audit.path)],
                         [build.lnp_run, "--allow", "--audit-all", "--audit", inner, "--",
                          fixtures.escapes, "send", "203.0.113.5", "7105", "5"])
    assert calls(result)[-1] == {"result": -1, "errno": "ECONNREFUSED"}, "made (no one listens there)"
    records = json_lines(inner.read_text())
    assert [(r["op"], r["address"], r["local"], r["by"]) for r in records] == [("connect", "203.0.113.5", False, "preload")]
    assert audit.records() == []
