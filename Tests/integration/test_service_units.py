"""A systemd unit's own settings around lnp-run, without systemd: its sandboxing directives
(SystemCallFilter=, RestrictAddressFamilies=, MemoryDenyWriteExecute=), applied with seccomp
and prctl by Tests/fixtures/sandbox.c as systemd applies them, and the unit files
docs/services.md shows, as `systemd-analyze verify` reads them."""

import os
import re
import shutil
import time

import pytest

from conftest import FIXTURES, ROOT, json_lines, require, run


# A unit's sandboxing directives, as Tests/fixtures/sandbox.c applies them without systemd.

@pytest.fixture(scope="module")
def sandbox(workdir):
    output = workdir / "sandbox"
    result = run(["gcc", "-O2", "-Wall", "-o", str(output), str(FIXTURES / "sandbox.c")])
    assert result.returncode == 0, result.stderr
    return output


PIDFD_GETFD_REFUSED = ("lnp-run: warning: pidfd_getfd is refused here (Operation not permitted: a seccomp filter, as "
                       "systemd's SystemCallFilter=@system-service, which leaves out pidfd_getfd): the supervisor cannot take the "
                       "socket of a call it is notified of, and denies each one (the C library's own DNS queries, static "
                       "programs, raw system calls); allow pidfd_getfd, or run with --preload-only\n")


def test_a_unit_that_refuses_pidfd_getfd_is_told_so(lan, fixtures, sandbox):
    """SystemCallFilter=@system-service leaves out pidfd_getfd, without which the supervisor
    cannot decide a call: each notified call is denied, lnp failing closed (here a static
    program's connect to a host off the local network, and the C library's own connects).
    lnp-run says why when it starts, and what to do; with --preload-only nothing is notified."""
    result = lan.client([sandbox, "--refuse", "pidfd_getfd", "--", lan.build.lnp_run, "--deny", "--",
                         fixtures.probe_static, "connect", "tcp", "203.0.113.5", "8080"])
    assert [(r["call"], r["errno"]) for r in json_lines(result.stdout)] == [("connect", "EHOSTUNREACH")]
    assert result.stderr.startswith(PIDFD_GETFD_REFUSED), result.stderr
    plain = lan.client([sandbox, "--refuse", "pidfd_getfd", "--", lan.build.lnp_run, "--deny", "--preload-only", "--",
                        fixtures.probe, "connect", "tcp", "203.0.113.5", "8080"])
    assert [(r["call"], r["result"]) for r in json_lines(plain.stdout)] == [("connect", 0)]
    assert plain.stderr == ""


def test_a_unit_that_refuses_seccomp_runs_with_the_preload_alone(lan, fixtures, sandbox):
    """SystemCallFilter= without seccomp(2) (@system-service leaves it out too): lnp-run cannot
    install its filter, says so, and the preload alone decides."""
    result = lan.client([sandbox, "--refuse", "seccomp", "--", lan.build.lnp_run, "--deny", "--",
                         fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    assert [(r["call"], r["errno"]) for r in json_lines(result.stdout)] == [("connect", "EHOSTUNREACH")]
    assert result.stderr.startswith("lnp-run: warning: cannot supervise system calls (seccomp: Operation not permitted); "
                                    "only the preload decides"), result.stderr


def test_a_unit_without_af_netlink_fails_closed(lan, fixtures, sandbox, audit):
    """RestrictAddressFamilies= without AF_NETLINK: the preload cannot ask the kernel for a
    route, so every destination but loopback counts as local, and the record says why."""
    result = lan.client([sandbox, "--refuse-family", "AF_NETLINK", "--", lan.build.lnp_run, "--deny", "--audit",
                         audit.path, "--", fixtures.probe, "connect", "tcp", "203.0.113.5", "8080"])
    assert [(r["call"], r["errno"]) for r in json_lines(result.stdout)] == [("connect", "EHOSTUNREACH")]
    [record] = audit.records()
    assert (record["reason"], record["decision"]) == ("route could not be learned (EAFNOSUPPORT)", "deny")


def test_memory_deny_write_execute_leaves_the_decisions_as_they_were(lan, fixtures, sandbox, audit):
    """MemoryDenyWriteExecute=yes: the preload's page cannot be made executable, so its calls
    go to the supervisor too (as under --strict), which decides them alike, and records each
    operation once: the preload's record of a call the supervisor makes is a second one."""
    denied = lan.client([sandbox, "--mdwe", "--", lan.build.lnp_run, "--deny", "--audit", audit.path, "--",
                         fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    assert [(r["call"], r["errno"]) for r in json_lines(denied.stdout)] == [("connect", "EHOSTUNREACH")]
    assert [(r["address"], r["decision"]) for r in audit.records()] == [("10.77.0.2", "deny")]
    audit.path.unlink()
    allowed = lan.client([sandbox, "--mdwe", "--", lan.build.lnp_run, "--allow", "--audit", audit.path, "--",
                          fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert [(r["call"], r["result"]) for r in json_lines(allowed.stdout)] == [("sendto", 5)]
    assert [(r["op"], r["decision"], r["by"]) for r in audit.records()] == [("sendto", "allow", "supervisor")]
    assert (denied.stderr, allowed.stderr) == ("", "")


def system_call_numbers():
    """x86-64's system calls by name, from the kernel's headers."""
    defined = run(["gcc", "-dM", "-E", "-include", "asm/unistd_64.h", "-x", "c", "/dev/null"], check=True).stdout
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"#define __NR_(\w+) (\d+)", defined)}


def systemd_filter(entries):
    """The system calls a SystemCallFilter= allow list names, its groups expanded as systemd
    expands them (systemd-analyze syscall-filter)."""
    calls = set()
    for entry in entries:
        if not entry.startswith("@"):
            calls.add(entry)
            continue
        listed = run(["systemd-analyze", "syscall-filter", entry], check=True).stdout.splitlines()[1:]
        calls |= systemd_filter([line.strip() for line in listed if line.strip() and not line.strip().startswith("#")])
    return calls


@pytest.mark.parametrize("allowed,warned", [
    (["@system-service"], "lnp-run: warning: cannot supervise system calls (seccomp: Operation not permitted)"),
    (["@system-service", "seccomp"], "lnp-run: warning: pidfd_getfd is refused here"),
    (["@system-service", "seccomp", "pidfd_getfd"], None),
], ids=["system-service", "and-seccomp", "and-seccomp-and-pidfd_getfd"])
def test_the_system_call_filter_a_unit_needs(lan, fixtures, sandbox, audit, allowed, warned):
    """SystemCallFilter=@system-service, as systemd makes it (an allow list, EPERM for the
    rest), and the two lines docs/services.md adds: with both, the supervisor works whole (a
    static program's local connect denied and recorded, its connect off the local network
    made by lnp-run), and nothing is said; with less, lnp-run says what is missing."""
    require(shutil.which("systemd-analyze") is not None, "systemd-analyze is not installed (scripts/deps test installs systemd)")
    numbers = system_call_numbers()
    listed = ",".join(str(numbers[name]) for name in sorted(systemd_filter(allowed)) if name in numbers)
    local = lan.client([sandbox, "--allow-only", listed, "--", lan.build.lnp_run, "--deny", "--audit", audit.path, "--",
                        fixtures.probe_static, "connect", "tcp", "10.77.0.2", "8080"])
    off = lan.client([sandbox, "--allow-only", listed, "--", lan.build.lnp_run, "--deny", "--",
                      fixtures.probe_static, "connect", "tcp", "203.0.113.5", "8080"])
    if warned:
        assert local.stderr.startswith(warned) and local.stderr.count(warned) == 1, local.stderr
        return
    assert (local.stderr, off.stderr) == ("", "")
    assert [(r["call"], r["errno"]) for r in json_lines(local.stdout)] == [("connect", "EHOSTUNREACH")]
    assert [(r["address"], r["by"]) for r in audit.records()] == [("10.77.0.2", "supervisor")]
    assert [(r["call"], r["result"]) for r in json_lines(off.stdout)] == [("connect", 0)]


def test_strict_where_seccomp_is_refused_keeps_the_preloads_records(lan, fixtures, sandbox, audit):
    """--strict leaves the records of allowed calls to the supervisor, which makes them; where
    the filter is refused, the preload alone decides, and its records are the only ones."""
    result = lan.client([sandbox, "--refuse", "seccomp", "--", lan.build.lnp_run, "--strict", "--allow", "--audit",
                         audit.path, "--", fixtures.probe, "sendto", "10.77.0.2", "9999"])
    assert [(r["call"], r["result"]) for r in json_lines(result.stdout)] == [("sendto", 5)]
    assert [(r["op"], r["decision"], r["by"]) for r in audit.records()] == [("sendto", "allow", "preload")]


# The unit files docs/services.md shows, as systemd reads them.

def documented_units(directory, build, program):
    """docs/services.md's unit files (the fenced blocks that start with their path under
    /etc/systemd/system/), written into `directory` with lnp-run's and the program's paths put
    in; the paths of those written."""
    text = (ROOT / "docs" / "services.md").read_text()
    written = []
    for block in re.findall(r"```ini\n(.*?)```", text, re.S):
        first, _, body = block.partition("\n")
        assert first.startswith("# /etc/systemd/system/"), first
        path = directory / first.removeprefix("# /etc/systemd/system/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block.replace("/usr/local/bin/lnp-run", str(build.lnp_run))
                        .replace("/opt/agent/bin/printer-agent", str(program)))
        written.append(path)
    return written


def test_the_documented_units_verify(build, workdir):
    """`systemd-analyze verify` (which loads a unit and its drop-ins offline, and checks that
    each command exists) finds nothing to say of the drop-in on a unit of the test's own, nor
    of the documented unit and its socket."""
    require(shutil.which("systemd-analyze") is not None, "systemd-analyze is not installed (scripts/deps test installs systemd)")
    program = workdir / "printer-agent"
    shutil.copy("/bin/true", program)
    with_drop_in, whole = workdir / f"units-{time.monotonic_ns()}", workdir / f"units-whole-{time.monotonic_ns()}"
    written = documented_units(with_drop_in, build, program)
    names = sorted(p.relative_to(with_drop_in).as_posix() for p in written)
    assert names == ["printer-agent.service", "printer-agent.service.d/lnp.conf", "printer-agent.socket"], names
    # The drop-in alone, on a plain unit.
    (with_drop_in / "printer-agent.socket").unlink()
    (with_drop_in / "printer-agent.service").write_text(
        f"[Unit]\nDescription=Printer agent\n\n[Service]\nType=notify\nExecStart={program} --config /etc/agent.conf\n"
        "User=printer-agent\n")
    documented_units(whole, build, program)
    shutil.rmtree(whole / "printer-agent.service.d")
    for unit in [with_drop_in / "printer-agent.service", whole / "printer-agent.service", whole / "printer-agent.socket"]:
        result = run(["systemd-analyze", "verify", "--man=no", str(unit)])
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), unit
    shown = run(["systemd-analyze", "verify", "--man=no", str(with_drop_in / "printer-agent.service")],
                env=dict(os.environ, SYSTEMD_LOG_LEVEL="debug"))
    assert f"Command Line: {build.lnp_run} --deny --audit syslog -- {program} --config /etc/agent.conf" in shown.stdout + shown.stderr
