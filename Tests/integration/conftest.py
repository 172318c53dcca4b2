"""Fixtures for lnp's integration tests.

Every test host lives in network namespaces these fixtures create and remove: a client
namespace (where programs run under lnp-run) and a peer namespace (the "LAN" host, with
servers), joined by a veth pair. Nothing here sends a packet anywhere else.

    client  c0 10.77.0.1/24 fd77::1/64 ──veth── p0 10.77.0.2/24 fd77::2/64  peer
            10.66.0.0/16 on-link (an extra route without gateway)      10.77.0.53 (DNS)
            10.99.0.0/24 via 10.77.0.2 (routed)                        203.0.113.5, 2001:db8::5 on lo
            10.44.0.0/24 multipath: via 10.77.0.2, and on-link
            default via 10.77.0.2 / fd77::2 (the "internet")
            tun0 10.88.0.1 peer 10.88.0.2 (point-to-point, like a VPN)
            198.51.100.0/24 via tun0                                   198.51.100.7 on p0
            192.0.2.1/24 (on-link, not a private range)               192.0.2.2/24
"""

import contextlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "Tests" / "fixtures"
IN_CI = os.environ.get("CI") == "true"


def require(condition, reason):
    """Skip when a local run lacks what a test needs; in CI, fail instead: there a test
    that needs root or namespaces must run."""
    if condition:
        return
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


def run(command, *, check=False, timeout=120, env=None, input=None):
    return subprocess.run(
        command, capture_output=True, text=True, check=check, timeout=timeout, env=env, input=input
    )


def stop_all(processes, *, timeout):
    """Terminates the test's daemons, then kills those still there after `timeout` seconds."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


class Build:
    """The release build under test (scripts/test builds it first)."""

    def __init__(self):
        directory = pathlib.Path(os.environ.get("LNP_BUILD_DIR", ROOT / ".build" / "release"))
        self.directory = directory
        self.lnp_run = directory / "lnp-run"
        self.lnp = directory / "bin" / "lnp"
        self.liblnp = directory / "liblnp.so"
        for path in (self.lnp_run, self.lnp, self.liblnp):
            if not path.exists():
                pytest.fail(f"{path} is missing: run `swift build -c release` (scripts/test does)")


@pytest.fixture(scope="session")
def build():
    return Build()


@pytest.fixture(scope="session")
def workdir():
    directory = pathlib.Path(tempfile.mkdtemp(prefix="lnp-tests-"))
    directory.chmod(0o755)  # tests run some programs as nobody
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


class Fixtures:
    """Test programs compiled once per session."""

    def __init__(self, workdir):
        self.dir = workdir / "fixtures"
        self.dir.mkdir()
        self.dir.chmod(0o755)
        include = str(ROOT / "CShim" / "include")
        self.probe = self._cc("probe", ["probe.c", "-I", include, "-lpthread"])
        self.probe_static = self._cc("probe-static", ["probe.c", "-I", include, "-lpthread", "-static"])
        self.early = self._cc("libearly.so", ["early.c", "-shared", "-fPIC"])
        self.racer = self._cc("racer", ["racer.c", "-lpthread"])
        self.racer_static = self._cc("racer-static", ["racer.c", "-lpthread", "-static"])
        self.doors = self._cc("doors", ["doors.c", "-lresolv"])
        self.escapes = self._cc("escapes", ["escapes.c"])
        self.escapes_static = self._cc("escapes-static", ["escapes.c", "-static"])

    def _cc(self, name, arguments):
        output = self.dir / name
        sources = [str(FIXTURES / a) if a.endswith(".c") else a for a in arguments]
        result = run(["gcc", "-O2", "-Wall", "-o", str(output)] + sources)
        assert result.returncode == 0, result.stderr
        output.chmod(0o755)
        return output

    def swift_program(self):
        output = self.dir / "swift-connect"
        if not output.exists():
            result = run(["swiftc", "-O", "-o", str(output), str(FIXTURES / "connect.swift")], timeout=600)
            assert result.returncode == 0, result.stderr
        return output

    def go_program(self):
        """Tests/fixtures/goclient, built as a static Go program (CGO_ENABLED=0: the Go
        runtime's own system calls, no C library, no loader) with no network access."""
        output = self.dir / "goclient"
        if not output.exists():
            require(shutil.which("go") is not None, "go is not installed (scripts/deps test installs golang-go)")
            home = self.dir / "go-home"
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "GOPATH": str(home / "go"),
                   "GOCACHE": str(home / "cache"), "GOPROXY": "off", "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local",
                   "CGO_ENABLED": "0"}
            result = run(["go", "build", "-trimpath", "-o", str(output), str(FIXTURES / "goclient" / "main.go")],
                         env=env, timeout=600)
            assert result.returncode == 0, result.stderr
            headers = run(["readelf", "-lW", str(output)], check=True).stdout
            assert "INTERP" not in headers, "the Go client is not static"
            output.chmod(0o755)
        return output


@pytest.fixture(scope="session")
def fixtures(workdir):
    return Fixtures(workdir)


class Capture:
    """tcpdump on an interface of a namespace: proves what did, or did not, go on the wire."""

    def __init__(self, namespace, interface, expression, path):
        self.path = path
        # --immediate-mode: without it, packets wait in the capture ring's open block (retired
        # after a second) and those of the last second are lost when tcpdump is stopped.
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", namespace, "tcpdump", "--immediate-mode", "-i", interface, "-U", "-n", "-w",
             str(path), expression],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        ready = threading.Event()

        def watch():
            for line in self.process.stderr:
                if "listening on" in line:
                    ready.set()

        threading.Thread(target=watch, daemon=True).start()
        assert ready.wait(10), "tcpdump did not start"

    def packets(self, settle=0.5):
        """Stops the capture and returns one text line per packet."""
        time.sleep(settle)
        self.process.send_signal(signal.SIGINT)
        self.process.wait(10)
        result = run(["tcpdump", "-nn", "-r", str(self.path)])
        return [line for line in result.stdout.splitlines() if line.strip()]


class Lan:
    """The client and peer namespaces, their servers, and ways to run things in them."""

    def __init__(self, build, workdir):
        require(os.geteuid() == 0, "network namespaces need root")
        require(shutil.which("tcpdump") is not None, "tcpdump is not installed")
        tag = f"lnpt{os.getpid()}"
        self.client_ns, self.peer_ns = f"{tag}c", f"{tag}p"
        self.build = build
        self.workdir = workdir
        self.servers = []
        self.etc = pathlib.Path("/etc/netns") / self.client_ns
        self._up()

    def _sh(self, command):
        result = run(["sh", "-ec", command])
        assert result.returncode == 0, f"{command}\n{result.stderr}"

    def _up(self):
        c, p = self.client_ns, self.peer_ns
        self._sh(f"""
            ip netns add {c}; ip netns add {p}
            ip link add c0 netns {c} type veth peer name p0 netns {p}
            ip -n {c} link set lo up; ip -n {p} link set lo up
            ip -n {c} link set c0 up; ip -n {p} link set p0 up
            ip -n {c} addr add 10.77.0.1/24 dev c0; ip -n {c} addr add fd77::1/64 dev c0 nodad
            ip -n {p} addr add 10.77.0.2/24 dev p0; ip -n {p} addr add fd77::2/64 dev p0 nodad
            ip -n {p} addr add 10.77.0.53/24 dev p0
            ip -n {p} addr add 203.0.113.5/32 dev lo; ip -n {p} addr add 2001:db8::5/128 dev lo
            ip -n {c} route add 10.66.0.0/16 dev c0
            ip -n {c} route add 10.99.0.0/24 via 10.77.0.2
            ip -n {c} route add 10.44.0.0/24 nexthop via 10.77.0.2 dev c0 nexthop dev c0
            ip -n {c} route add default via 10.77.0.2
            ip -n {c} -6 route add default via fd77::2
            ip -n {p} route add 10.66.0.0/16 dev p0
            ip -n {c} tuntap add tun0 mode tun; ip -n {c} link set tun0 up
            ip -n {c} addr add 10.88.0.1 peer 10.88.0.2 dev tun0
            ip -n {c} route add 198.51.100.0/24 dev tun0
            ip -n {p} addr add 198.51.100.7/32 dev p0
            ip -n {c} addr add 192.0.2.1/24 dev c0; ip -n {p} addr add 192.0.2.2/24 dev p0
        """)
        # `ip netns exec` mounts these over /etc for programs in the client namespace.
        self.etc.mkdir(parents=True, exist_ok=True)
        (self.etc / "resolv.conf").write_text("nameserver 10.77.0.53\n")
        (self.etc / "hosts").write_text(
            "127.0.0.1 localhost\n10.77.0.2 printer.local peer.lan proxy.lan\n203.0.113.5 public.example\n"
        )
        (self.etc / "nsswitch.conf").write_text("hosts: files\n")
        self._servers()

    def _servers(self):
        www = self.workdir / "www"
        www.mkdir(exist_ok=True)
        (www / "index.html").write_text("lnp-peer-ok\n")
        self.udp_log = self.workdir / "udp.log"
        self.udp_log.write_text("")
        self.servers.append(self.peer(
            ["python3", "-m", "http.server", "8080", "--bind", "::", "--directory", str(www)], background=True))
        self.servers.append(self.peer(
            ["python3", str(FIXTURES / "udp_logger.py"), "9999", str(self.udp_log)], background=True))
        deadline = time.time() + 15
        while time.time() < deadline:
            probe = self.peer(["python3", "-c", "import socket; socket.create_connection(('10.77.0.2', 8080), 1)"])
            if probe.returncode == 0 and "ready" in self.udp_log.read_text():
                return
            time.sleep(0.1)
        pytest.fail("the peer's servers did not start")

    def close(self):
        stop_all(self.servers, timeout=5)
        run(["ip", "netns", "del", self.client_ns])
        run(["ip", "netns", "del", self.peer_ns])
        shutil.rmtree(self.etc, ignore_errors=True)

    def peer(self, command, background=False):
        full = ["ip", "netns", "exec", self.peer_ns] + [str(c) for c in command]
        if background:
            return subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return run(full)

    def client(self, command, *, env=None, user=None, timeout=120, input=None):
        """Runs `command` in the client namespace (as `user`, if given)."""
        prefix = ["ip", "netns", "exec", self.client_ns]
        if user:
            prefix += ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"]
        if env is not None:
            prefix += ["env", "-i"] + [f"{k}={v}" for k, v in env.items()]
        return run(prefix + [str(c) for c in command], timeout=timeout, input=input)

    def lnp_run(self, options, command, *, lnp_run=None, env=None, user=None, timeout=120):
        """`lnp-run OPTIONS -- COMMAND` in the client namespace."""
        program = lnp_run or self.build.lnp_run
        return self.client([program] + list(options) + ["--"] + [str(c) for c in command], env=env, user=user,
                           timeout=timeout)

    @contextlib.contextmanager
    def without_default_route(self):
        """The client with no IPv4 default route, for the while: an address off every route
        is then sent straight out of an interface a socket forces (the kernel takes it as
        on-link)."""
        self._sh(f"ip -n {self.client_ns} route del default")
        try:
            yield
        finally:
            self._sh(f"ip -n {self.client_ns} route add default via 10.77.0.2")

    def capture(self, expression, interface="p0"):
        path = self.workdir / f"capture-{time.monotonic_ns()}.pcap"
        return Capture(self.peer_ns, interface, expression, path)

    def udp_received(self):
        return [line for line in self.udp_log.read_text().splitlines() if line != "ready"]


def dev_log_command(lan, socket_path, command):
    """`command` with `socket_path` mounted at /dev/log, in a private mount namespace (on a
    tmpfs over /dev, with the few device nodes programs need), so the machine's own logger,
    if any, never sees a test's records."""
    old = lan.workdir / "old-dev"
    old.mkdir(exist_ok=True)
    script = f"""
        set -e
        mount --make-rprivate /
        mount --rbind /dev {old}
        mount -t tmpfs -o mode=755 tmpfs /dev
        for node in null zero full random urandom; do touch /dev/$node; mount --bind {old}/$node /dev/$node; done
        touch /dev/log
        mount --bind {socket_path} /dev/log
        exec "$@"
    """
    return ["unshare", "--mount", "sh", "-c", script, "sh"] + [str(c) for c in command]


@pytest.fixture(scope="session")
def lan(build, workdir):
    network = Lan(build, workdir)
    yield network
    network.close()


SINK = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("10.77.0.2", int(sys.argv[2]))); s.listen()
open(sys.argv[1], "w").write("ready")
c, _ = s.accept(); n = 0
while True:
    d = c.recv(65536)
    if not d: break
    n += len(d)
open(sys.argv[1], "w").write(str(n))
"""


class ByteSink:
    """A TCP server on the peer that counts the bytes of one connection."""

    def __init__(self, lan, workdir, port):
        self.path = workdir / f"sink-{port}.log"
        self.path.unlink(missing_ok=True)
        self.process = lan.peer(["python3", "-c", SINK, str(self.path), str(port)], background=True)
        deadline = time.time() + 10
        while (not self.path.exists() or self.path.read_text() != "ready") and time.time() < deadline:
            time.sleep(0.05)

    def received(self):
        self.process.wait(20)
        return int(self.path.read_text())


@pytest.fixture
def audit(workdir):
    """A fresh audit file path, and a reader of its records."""

    class Audit:
        def __init__(self):
            self.path = workdir / f"audit-{time.monotonic_ns()}.jsonl"

        def records(self):
            if not self.path.exists():
                return []
            return [json.loads(line) for line in self.path.read_text().splitlines()]

    return Audit()


def assert_route_changes_within_a_second(lan, command):
    """Runs `command` (a probe `watch` of 10.55.0.9 in the client namespace) while
    10.55.0.0/24 is made on-link, then removed again: not local before, local from at most a
    second after the route came, not local again at most a second after it went."""
    watcher = subprocess.Popen([str(c) for c in command], stdout=subprocess.PIPE, text=True)
    time.sleep(1.5)
    added = time.monotonic()
    run(["ip", "-n", lan.client_ns, "route", "add", "10.55.0.0/24", "dev", "c0"], check=True)
    time.sleep(2.0)
    removed = time.monotonic()
    run(["ip", "-n", lan.client_ns, "route", "del", "10.55.0.0/24", "dev", "c0"], check=True)
    output, _ = watcher.communicate(timeout=30)
    samples = [(r["ms"] / 1000.0, r["errno"]) for r in json_lines(output)]
    offset = time.clock_gettime(time.CLOCK_MONOTONIC) - time.monotonic()
    added += offset
    removed += offset

    before = [e for t, e in samples if t < added]
    assert before and all(e == "" for e in before), "not local before the route exists"
    assert min(t for t, e in samples if e == "EHOSTUNREACH") - added <= 1.1
    assert all(e == "EHOSTUNREACH" for t, e in samples if added + 1.1 < t < removed)
    assert min(t for t, e in samples if t > removed and e == "") - removed <= 1.1

