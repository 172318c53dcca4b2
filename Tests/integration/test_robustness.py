"""lnp never breaks the program: bad arguments get the kernel's own answers, and the hooks
work before the library's constructor, in threads, signal handlers, fork and vfork."""

import pytest

from conftest import FIXTURES, json_lines, run


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
    """libearly's constructor runs before liblnp's (it comes later in LD_PRELOAD): the call
    comes before lnp has read which lnp-run to ask, and finds it among its ancestors."""
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         ["env", f"LD_PRELOAD={lan.build.liblnp}:{fixtures.early}", "EARLY_TARGET=10.77.0.2", "true"])
    assert json_lines(result.stdout) == [{"call": "early-connect", "result": -1, "errno": "EHOSTUNREACH"}]
    assert [(r["op"], r["because"]) for r in audit.records()] == [("connect", "run-option")]


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


@pytest.mark.parametrize("supervision", [[], ["--preload-only"], ["--strict"]], ids=["page", "preload-only", "strict"])
@pytest.mark.parametrize("address", ["10.77.0.2", "fd77::2"])
def test_pointers_the_kernel_refuses_get_its_efault(lan, fixtures, address, supervision):
    """Without the gadget page the preload calls the C library's next definitions, whose int
    results (connect, sendmmsg) must be read as ints: a failed sendmmsg read as a count of
    4294967295 ran off the program's array, and syscall(SYS_connect) gave 4294967295."""
    plain = json_lines(lan.client([fixtures.probe, "bad-pointers", address, "9"]).stdout)
    wrapped = json_lines(lan.lnp_run(["--deny", *supervision], [fixtures.probe, "bad-pointers", address, "9"]).stdout)
    assert wrapped == plain
    assert {c["errno"] for c in plain[:-1]} == {"EFAULT"}
    assert plain[-1] == {"call": "sendmmsg-name-unmapped-refused-length", "result": -1, "errno": "EINVAL"}
    assert len(plain) == 31


def test_a_handler_on_an_8_kib_alternate_stack_keeps_within_it(lan, fixtures, audit):
    """With an audit, the deepest path: decide and record, from a signal handler."""
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "altstack", "224.0.0.251", "5353"])
    assert json_lines(result.stdout) == [{"call": "altstack-send", "result": -1, "errno": "EHOSTUNREACH"},
                                         {"call": "guard", "changed": 0}]
    assert len(audit.records()) == 1


def test_a_program_that_makes_the_time_stamp_counter_fault_still_runs(lan, fixtures):
    for address, errno in [("203.0.113.5", None), ("10.77.0.2", "EHOSTUNREACH")]:
        result = lan.lnp_run(["--deny"], [fixtures.probe, "notsc", address, "9"])
        assert result.returncode == 0, result.stderr
        assert [c["errno"] for c in json_lines(result.stdout)] == [None, errno, errno, errno]


def test_sendmmsg_with_a_huge_count_sends_what_the_kernel_would(lan, fixtures):
    plain = json_lines(lan.client([fixtures.probe, "huge-vlen"]).stdout)
    assert plain == [{"call": "sendmmsg-huge-vlen", "result": 1024, "errno": None}]
    assert json_lines(lan.lnp_run(["--allow"], [fixtures.probe, "huge-vlen"]).stdout) == plain


def test_at_the_descriptor_limit_routes_are_still_learned_and_records_written(lan, fixtures, audit):
    results = json_lines(lan.lnp_run(["--deny", "--audit", str(audit.path)],
                                     [fixtures.probe, "emfile", "soft", "10.77.0.99", "9"]).stdout)
    assert results == [{"call": "no-more-descriptors", "result": 0, "errno": None},
                       {"call": "sendto", "result": -1, "errno": "EHOSTUNREACH"}]
    assert [r["reason"] for r in audit.records()] == ["on-link 10.77.0.0/24 via c0"]




@pytest.mark.parametrize("signal", ["SYS", "SEGV", "ABRT", "TRAP"])
def test_a_signal_the_program_sends_lnp_run_does_not_end_it(lan, signal):
    """A signal whose default would end lnp-run (and leave the person's terminal raw), or
    print a crash report, sent by the program: taken in and dropped. The program's own status
    comes back."""
    result = lan.lnp_run(["--deny"], ["sh", "-c", f"kill -{signal} $PPID; sleep 0.3; exit 3"])
    assert result.returncode == 3, result.stderr
    assert "crash" not in result.stderr.lower(), result.stderr


GADGET_PROBE = """
import socket
page = [line for line in open("/proc/self/maps") if line.startswith("%s-")]
print(page[0].split()[1] if page else "none")
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    s.bind(("127.0.0.1", 0))
    s.sendto(b"x", s.getsockname())
    print(s.recv(1).decode())
"""


@pytest.mark.parametrize("given, mapped", [("100000000000", "r-xp"), ("100000000001", "none"), ("10000000000g", "none")])
def test_the_gadget_page_is_mapped_where_lnp_run_says_and_calls_go_through_it(lan, given, mapped):
    """`LNP_GADGET` names the page the preload makes its socket calls from (lnp_gadget.h): it
    is mapped there, read and execute only, and the calls made from it work; an address that
    is not a page's, or not hexadecimal, maps nothing and the calls go to the C library."""
    result = lan.lnp_run(["--allow"], ["env", f"LNP_GADGET={given}", "python3", "-c", GADGET_PROBE % given.lstrip("0")])
    assert result.stdout.split() == [mapped, "x"], result.stderr


@pytest.mark.parametrize("supervision", [[], ["--preload-only"]], ids=["page", "preload-only"])
def test_a_later_preload_whose_bind_is_syscall_does_not_recurse(lan, fixtures, supervision):
    """syscall(SYS_bind) is made as the system call, not through the next bind(): a preload
    after liblnp whose bind() is syscall(SYS_bind) came back to lnp's syscall() without end
    (SIGSEGV) once the page was not there to make the call."""
    library = fixtures.dir / "libbind_by_syscall.so"
    if not library.exists():
        built = run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(library), str(FIXTURES / "bind_by_syscall.c")])
        assert built.returncode == 0, built.stderr
    code = ("import socket\n"
            "for address in ('127.0.0.1', '203.0.113.5', '224.0.0.251'):\n"
            "    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "    try: s.bind((address, 0)); print(address, 'bound')\n"
            "    except OSError as e: print(address, e.errno)\n")
    preload = f"{lan.build.liblnp} {library}"
    result = lan.lnp_run(["--deny", *supervision], ["env", f"LD_PRELOAD={preload}", "python3", "-c", code])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["127.0.0.1 bound", "203.0.113.5 99", "224.0.0.251 113"]
