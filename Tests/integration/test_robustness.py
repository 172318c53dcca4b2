"""lnp never breaks the program: bad arguments get the kernel's own answers, and the hooks
work before the library's constructor, in threads, signal handlers, fork and vfork."""

import pytest

from conftest import json_lines


@pytest.mark.parametrize("address", ["10.77.0.2", "fd77::2", "203.0.113.5"])
@pytest.mark.parametrize("policy", ["deny", "allow"])
def test_malformed_calls_get_the_kernels_own_errors(lan, fixtures, address, policy):
    plain = lan.client([fixtures.probe, "malformed", address, "9"])
    wrapped = lan.lnp_run([f"--{policy}"], [fixtures.probe, "malformed", address, "9"])
    assert json_lines(wrapped.stdout) == json_lines(plain.stdout)
    errors = {c["call"]: c["errno"] for c in json_lines(plain.stdout)}
    # What the kernel says, for the record: lnp must not change any of it.
    assert errors["connect-null"] == "EFAULT"
    assert errors["connect-short"] == "EINVAL"
    assert errors["connect-notsock"] == "ENOTSOCK"
    assert errors["connect-badfd"] == "EBADF"
    assert errors["connect-unspec"] is None  # AF_UNSPEC dissolves a UDP association


def test_hooks_work_before_the_librarys_constructor(lan, fixtures, audit):
    """libearly's constructor runs before liblnp's (it comes later in LD_PRELOAD)."""
    result = lan.client(["env", f"LD_PRELOAD={lan.build.liblnp}:{fixtures.early}", "LNP_POLICY=deny",
                         f"LNP_AUDIT={audit.path}", "EARLY_TARGET=10.77.0.2", "true"])
    assert json_lines(result.stdout) == [{"call": "early-connect", "result": -1, "errno": "EHOSTUNREACH"}]
    assert len(audit.records()) == 1


def test_a_connect_in_a_signal_handler(lan, fixtures):
    result = lan.lnp_run(["--deny"], [fixtures.probe, "signal", "10.77.0.2", "8080"])
    assert json_lines(result.stdout) == [{"call": "signal-connect", "result": -1, "errno": "EHOSTUNREACH"}]


def test_a_connect_in_a_vfork_child(lan, fixtures, audit):
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "vfork", "10.77.0.2", "8080"])
    assert json_lines(result.stdout) == [{"call": "vfork-connect", "result": -1, "errno": "EHOSTUNREACH"}]
    assert len(audit.records()) == 1


def test_allowed_calls_return_the_kernels_result(lan, fixtures):
    """Allowed, a connect to a closed port is refused by the peer, as it would be without lnp."""
    plain = lan.client([fixtures.probe, "connect", "tcp", "10.77.0.2", "1"])
    wrapped = lan.lnp_run(["--allow"], [fixtures.probe, "connect", "tcp", "10.77.0.2", "1"])
    assert json_lines(wrapped.stdout) == json_lines(plain.stdout) == [
        {"call": "connect", "result": -1, "errno": "ECONNREFUSED"}]


def test_unconfigured_preload_fails_closed(lan, fixtures):
    """Loaded without lnp-run's settings (no LNP_POLICY), the preload denies."""
    result = lan.client(["env", f"LD_PRELOAD={lan.build.liblnp}", fixtures.probe, "connect", "tcp", "10.77.0.2",
                         "8080"])
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"


def test_settings_are_read_at_start_not_when_the_program_changes_its_environment(lan, fixtures):
    code = ("import os, socket\n"
            "os.environ['LNP_POLICY'] = 'allow'\n"
            "s = socket.socket()\n"
            "try: s.connect(('10.77.0.2', 8080)); print('connected')\n"
            "except OSError as e: print(e.errno)\n")
    result = lan.lnp_run(["--deny", "--errno", "EPERM"], ["python3", "-c", code])
    assert result.stdout.strip() == "1"  # EPERM


def test_preload_keeps_no_descriptor_of_its_own(lan, fixtures, audit):
    code = ("import os, socket\n"
            "before = sorted(os.listdir('/proc/self/fd'))\n"
            "for _ in range(3):\n"
            "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "    try: s.connect(('10.77.0.2', 9))\n"
            "    except OSError: pass\n"
            "    s.close()\n"
            "print(before == sorted(os.listdir('/proc/self/fd')))\n")
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["python3", "-c", code])
    assert result.stdout.strip() == "True"
    assert len(audit.records()) == 3
