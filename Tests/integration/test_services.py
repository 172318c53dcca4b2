"""A systemd service run under lnp-run (docs/services.md), without systemd: the descriptors and
environment systemd gives a service's main process come from Tests/fixtures/service_manager.py,
and the service's side is libsystemd's own code (Tests/fixtures/sd_daemon.py, through ctypes).

Under systemd, lnp-run is the main process and the program its grandchild (lnp-run, the keeper,
the program): what systemd hands the main process must reach the program as if it were it.
"""

import json
import os
import select
import socket
import subprocess
import time

from conftest import FIXTURES

SD_DAEMON = FIXTURES / "sd_daemon.py"
MANAGER = FIXTURES / "service_manager.py"


class Service:
    """service_manager.py, in the client namespace, starting `command`; its JSON lines and the
    program's, read as they come."""

    def __init__(self, lan, manager_options, command):
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", lan.client_ns, "python3", str(MANAGER)] + [str(o) for o in manager_options]
            + ["--"] + [str(c) for c in command],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []

    def line(self, key, timeout=20):
        """The next line with `key` (lines before it are kept in `lines`)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0, deadline - time.time()))
            if not ready:
                break
            text = self.process.stdout.readline()
            if not text:
                break
            entry = json.loads(text)
            self.lines.append(entry)
            if key in entry:
                return entry
        raise AssertionError(f"no {key!r} line; got {self.lines}; stderr: {self.stop()}")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        _, stderr = self.process.communicate(timeout=10)
        return stderr


def peer_reads(lan, address, port):
    """What the peer reads from a connection to ADDRESS:PORT, until the end of the stream."""
    result = lan.peer(["python3", "-c",
                       "import socket, sys; c = socket.create_connection((sys.argv[1], int(sys.argv[2])), 5); "
                       "c.settimeout(5); print(c.makefile().read(), end='')", address, str(port)])
    assert result.returncode == 0, result.stderr
    return result.stdout


def unix_reads(lan, path):
    result = lan.client(["python3", "-c",
                         "import socket, sys; c = socket.socket(socket.AF_UNIX); c.settimeout(5); c.connect(sys.argv[1]); "
                         "print(c.makefile().read(), end='')", path])
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_sockets_systemd_passes_are_the_programs(lan, workdir):
    """LISTEN_PID names the main process, lnp-run: the program (its grandchild) must find its
    own pid there, or sd_listen_fds gives it nothing. The sockets keep their numbers and names,
    and they work: the peer's connection over the veth and a local Unix client are served."""
    path = workdir / "service-unix.sock"
    path.unlink(missing_ok=True)
    service = Service(lan, ["--tcp", "10.77.0.1:7301", "--unix", path],
                      [lan.build.lnp_run, "--deny", "--", "python3", SD_DAEMON, "listen"])
    try:
        main_pid = service.line("main_pid")["main_pid"]
        report = service.line("sockets")
        assert report["pid"] != main_pid
        assert (report["count"], report["LISTEN_PID"], report["LISTEN_FDS"]) == (2, str(report["pid"]), "2"), report
        tcp, unix = report["sockets"]
        assert (tcp["fd"], tcp["name"], tcp["family"], tcp["address"], tcp["listening"]) == \
            (3, "tcp", "AF_INET", ["10.77.0.1", 7301], True)
        assert (unix["fd"], unix["name"], unix["family"], unix["address"], unix["listening"]) == \
            (4, "unix", "AF_UNIX", str(path), True)
        assert peer_reads(lan, "10.77.0.1", 7301) == "tcp\n"
        assert unix_reads(lan, path) == "unix\n"
        assert service.line("exit")["exit"] == 0
    finally:
        service.stop()


def test_a_connection_the_program_closes_is_closed(lan):
    """With `Accept=yes`, systemd passes one connection (LISTEN_FDNAMES=connection): when the
    program closes it, the client must see the end of the stream, while the program still runs.
    lnp-run's two processes must hold no copy of it."""
    service = Service(lan, ["--tcp", "10.77.0.1:7302", "--accept"],
                      [lan.build.lnp_run, "--deny", "--", "python3", SD_DAEMON, "close"])
    try:
        service.line("listening")
        client = subprocess.Popen(
            ["ip", "netns", "exec", lan.peer_ns, "python3", "-c",
             "import socket, time; c = socket.create_connection(('10.77.0.1', 7302), 5); c.settimeout(5)\n"
             "try:\n    print(repr(c.recv(10)))\nexcept socket.timeout:\n    print('no end of stream')"],
            stdout=subprocess.PIPE, text=True)
        report = service.line("closed")
        assert report["closed"] == [3]
        output, _ = client.communicate(timeout=10)
        assert output == "b''\n", "the client saw no end of the stream the program closed"
        assert service.process.poll() is None  # the program is still running
        service.process.stdin.close()
        assert service.line("exit")["exit"] == 0
    finally:
        service.stop()


def test_the_watchdog_is_the_programs(lan):
    """WATCHDOG_PID names the main process, as LISTEN_PID does: sd_watchdog_enabled must find
    the program's own pid there, or the program never sends WATCHDOG=1 and systemd kills the
    service when WatchdogSec= runs out."""
    service = Service(lan, ["--watchdog-usec", "30000000"],
                      [lan.build.lnp_run, "--deny", "--", "python3", SD_DAEMON, "watchdog"])
    try:
        report = service.line("enabled")
        assert (report["enabled"], report["usec"], report["WATCHDOG_PID"]) == (1, 30_000_000, str(report["pid"])), report
        assert service.line("exit")["exit"] == 0
    finally:
        service.stop()
