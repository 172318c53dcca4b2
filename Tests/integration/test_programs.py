"""Real programs under lnp-run: each is denied with Apple's errno in its own words, works when
allowed, and runs normally otherwise. Programs lnp cannot observe are named as such."""

import shutil

import pytest

from conftest import FIXTURES, IN_CI, json_lines, require, run

PYTHON = ("import socket, sys\n"
          "try:\n"
          "    socket.create_connection((sys.argv[1], 8080), 5).close(); print('connected')\n"
          "except OSError as e:\n"
          "    print(e.strerror)\n")
NODE = ("require('net').connect(8080, process.argv[1])"
        ".on('error', e => console.log(e.code)).on('connect', function () { console.log('connected'); this.end() })")
PERL = 'use IO::Socket::INET; my $s = IO::Socket::INET->new(PeerAddr => "$ARGV[0]:8080") or do { print "$!\\n"; exit }; print "connected\\n"'

# (name, command for an address, what a denied run prints, what an allowed one prints)
CLIENTS = [
    ("curl", lambda a: ["curl", "-sS", f"http://{a}:8080/"], "Couldn't connect to server", "lnp-peer-ok"),
    ("python3", lambda a: ["python3", "-c", PYTHON, a], "No route to host", "connected"),
    ("node", lambda a: ["node", "-e", NODE, a], "EHOSTUNREACH", "connected"),
    ("perl", lambda a: ["perl", "-e", PERL, a], "No route to host", "connected"),
    ("bash", lambda a: ["bash", "-c", f"exec 3<>/dev/tcp/{a}/8080 && echo connected"], "No route to host", "connected"),
    ("java", lambda a: ["java", str(FIXTURES / "Connect.java"), a, "8080"], "java.net.NoRouteToHostException",
     "connected"),
]


@pytest.mark.parametrize("name,command,denied,allowed", CLIENTS, ids=[c[0] for c in CLIENTS])
def test_clients_are_denied_and_allowed(lan, name, command, denied, allowed):
    require(shutil.which(name) is not None, f"{name} is not installed")
    out = lan.lnp_run(["--deny"], command("10.77.0.2"), timeout=180)
    assert denied in out.stdout + out.stderr
    out = lan.lnp_run(["--allow"], command("10.77.0.2"), timeout=180)
    assert allowed in out.stdout, out.stderr
    out = lan.lnp_run(["--deny"], command("203.0.113.5"), timeout=180)
    assert allowed in out.stdout, out.stderr


def test_a_swift_program_runs_under_the_preload(lan, fixtures):
    program = fixtures.swift_program()
    assert lan.lnp_run(["--deny"], [program, "10.77.0.2", "8080"]).stdout.strip() == "No route to host"
    assert lan.lnp_run(["--deny"], [program, "203.0.113.5", "8080"]).stdout.strip() == "connected"


def test_lnp_itself_a_swift_program_runs_under_the_preload(lan):
    result = lan.lnp_run(["--deny"], [lan.build.lnp, "check", "10.77.0.2"])
    assert result.returncode == 0, result.stderr
    assert "on-link 10.77.0.0/24 via c0" in result.stdout


def test_shell_pipelines_and_children_are_gated(lan, fixtures, audit):
    script = (f"for i in 1 2 3; do echo $i; done | xargs -I{{}} {fixtures.probe} sendto 10.77.0.2 9999 "
              "| grep -c EHOSTUNREACH")
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["sh", "-c", script])
    assert result.stdout.strip() == "3"
    assert len(audit.records()) == 3


def test_static_binary_is_gated_and_named_when_only_the_preload_runs(lan, fixtures):
    supervised = lan.lnp_run(["--deny"], [fixtures.probe_static, "connect", "tcp", "10.77.0.2", "8080"])
    assert supervised.stderr == ""
    assert json_lines(supervised.stdout) == [{"call": "connect", "result": -1, "errno": "EHOSTUNREACH"}]
    result = lan.lnp_run(["--deny", "--preload-only"], [fixtures.probe_static, "connect", "tcp", "10.77.0.2", "8080"])
    assert result.stderr.splitlines() == [
        f"lnp-run: warning: cannot observe {fixtures.probe_static}: static binary (the loader that applies "
        "LD_PRELOAD never runs); running it unobserved"]
    assert json_lines(result.stdout) == [{"call": "connect", "result": 0, "errno": None}]


@pytest.fixture
def installed(workdir, build):
    """lnp installed under a prefix nobody can read: bin/lnp-run and lib/lnp/liblnp.so."""
    prefix = workdir / "prefix"
    if not prefix.exists():
        (prefix / "bin").mkdir(parents=True)
        (prefix / "lib" / "lnp").mkdir(parents=True)
        shutil.copy2(build.lnp_run, prefix / "bin" / "lnp-run")
        shutil.copy2(build.liblnp, prefix / "lib" / "lnp" / "liblnp.so")
        for path in [prefix, *prefix.rglob("*")]:
            path.chmod(0o755)
    return prefix / "bin" / "lnp-run"


def privileged_copy(fixtures, name):
    path = fixtures.dir / name
    shutil.copy2(fixtures.probe, path)
    return path


def test_setuid_binary_is_gated_without_its_privileges_or_named_and_unobserved(lan, fixtures, installed):
    program = privileged_copy(fixtures, "probe-setuid")
    program.chmod(0o4755)  # owned by root; run by nobody, the loader ignores LD_PRELOAD
    supervised = lan.lnp_run(["--deny"], [program, "connect", "tcp", "10.77.0.2", "8080"], lnp_run=installed,
                             user="65534")
    assert supervised.stderr.splitlines() == [
        f"lnp-run: warning: {program} is setuid (uid 0): under the supervisor it starts without those privileges "
        "(no_new_privs); --preload-only keeps them, and leaves it unobserved"]
    assert json_lines(supervised.stdout) == [{"call": "connect", "result": -1, "errno": "EHOSTUNREACH"}]
    result = lan.lnp_run(["--deny", "--preload-only"], [program, "connect", "tcp", "10.77.0.2", "8080"],
                         lnp_run=installed, user="65534")
    assert result.stderr.splitlines() == [
        f"lnp-run: warning: cannot observe {program}: setuid (runs as uid 0; the loader ignores LD_PRELOAD); "
        "running it unobserved"]
    assert json_lines(result.stdout) == [{"call": "connect", "result": 0, "errno": None}]


def test_file_capabilities_are_named_and_run_unobserved(lan, fixtures, installed):
    require(shutil.which("setcap") is not None, "setcap (libcap2-bin) is not installed")
    program = privileged_copy(fixtures, "probe-caps")
    assert run(["setcap", "cap_net_bind_service+ep", program]).returncode == 0
    supervised = lan.lnp_run(["--deny"], [program, "connect", "tcp", "10.77.0.2", "8080"], lnp_run=installed,
                             user="65534")
    assert f"{program} has file capabilities: under the supervisor it starts without" in supervised.stderr
    assert json_lines(supervised.stdout) == [{"call": "connect", "result": -1, "errno": "EHOSTUNREACH"}]
    result = lan.lnp_run(["--deny", "--preload-only"], [program, "connect", "tcp", "10.77.0.2", "8080"],
                         lnp_run=installed, user="65534")
    assert "file capabilities (the loader ignores LD_PRELOAD)" in result.stderr
    assert json_lines(result.stdout) == [{"call": "connect", "result": 0, "errno": None}]


def test_an_unprivileged_user_is_gated_by_the_installed_layout(lan, fixtures, installed):
    result = lan.lnp_run(["--deny"], [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"], lnp_run=installed,
                         user="65534")
    assert result.stderr == ""
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"


def test_setuid_binary_of_ones_own_is_observed(lan, fixtures):
    """A setuid bit that changes nothing (root running a root-owned file) keeps LD_PRELOAD."""
    program = privileged_copy(fixtures, "probe-setuid-own")
    program.chmod(0o4755)
    result = lan.lnp_run(["--deny"], [program, "connect", "tcp", "10.77.0.2", "8080"])
    assert result.stderr == ""
    assert json_lines(result.stdout)[0]["errno"] == "EHOSTUNREACH"
