"""A systemd service run under lnp-run (docs/services.md), without systemd: the descriptors and
environment systemd gives a service's main process come from Tests/fixtures/service_manager.py,
and the service's side is libsystemd's own code (Tests/fixtures/sd_daemon.py, through ctypes).

Under systemd, lnp-run is the main process and the program its grandchild (lnp-run, the keeper,
the program): what systemd hands the main process must reach the program as if it were it.
"""

import contextlib
import json
import os
import pathlib
import select
import signal
import shutil
import subprocess
import time

import pytest

from conftest import FIXTURES, dev_log_command, json_lines, require, run
from test_lnp_decisions import etc_lnp  # noqa: F401 (a fixture)
from test_syslog import HEADER, listener  # noqa: F401 (a fixture)

SD_DAEMON = FIXTURES / "sd_daemon.py"
MANAGER = FIXTURES / "service_manager.py"


class Service:
    """service_manager.py, in the client namespace, starting `command`; its JSON lines and the
    program's, read as they come."""

    def __init__(self, lan, manager_options, command, dev_log=None):
        manager = ["python3", str(MANAGER)] + [str(o) for o in manager_options] + ["--"] + [str(c) for c in command]
        if dev_log:
            manager = dev_log_command(lan, dev_log, manager)
        self.process = subprocess.Popen(
            ["ip", "netns", "exec", lan.client_ns] + manager,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = []
        self.taken = set()
        self.pending = b""

    def line(self, key, timeout=20):
        """The first line with `key` not taken yet (the manager's and the program's lines
        come in either order)."""
        deadline = time.time() + timeout
        while True:
            for index, entry in enumerate(self.lines):
                if key in entry and index not in self.taken:
                    self.taken.add(index)
                    return entry
            if b"\n" in self.pending:
                text, self.pending = self.pending.split(b"\n", 1)
                self.lines.append(json.loads(text))
                continue
            ready, _, _ = select.select([self.process.stdout], [], [], max(0, deadline - time.time()))
            read = os.read(self.process.stdout.fileno(), 65536) if ready else b""
            if not read:
                raise AssertionError(f"no {key!r} line; got {self.lines}; stderr: {self.stop()}")
            self.pending += read

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        if not self.process.stdin.closed:
            self.process.stdin.close()
        return self.process.stderr.read().decode(errors="replace")


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


@pytest.mark.parametrize("options", [["--deny"], ["--deny", "--usage-description", "a", "--usage-description", "b"]],
                         ids=["read-by-hand", "read-by-argumentparser"])
def test_sockets_systemd_passes_are_the_programs(lan, workdir, options):
    """LISTEN_PID names the main process, lnp-run: the program (its grandchild) must find its
    own pid there, or sd_listen_fds gives it nothing. The sockets keep their numbers and names,
    and they work: the peer's connection over the veth and a local Unix client are served.
    (A command line lnp-run leaves to lnp-run-arguments is run again in the same process.)"""
    path = workdir / "service-unix.sock"
    path.unlink(missing_ok=True)
    service = Service(lan, ["--tcp", "10.77.0.1:7301", "--unix", path],
                      [lan.build.lnp_run] + options + ["--", "python3", SD_DAEMON, "listen"])
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


def test_systemd_socket_activate_starts_the_program_with_its_sockets(lan, workdir):
    """systemd's own socket activator (systemd-socket-activate, from the systemd package): it
    listens, and at the first connection starts lnp-run with the sockets and LISTEN_PID set to
    lnp-run's pid; the program behind lnp-run serves that connection on them."""
    require(shutil.which("systemd-socket-activate") is not None,
            "systemd-socket-activate is not installed (scripts/deps test installs systemd)")
    path = workdir / "activate-unix.sock"
    path.unlink(missing_ok=True)
    report_path = workdir / "activate-report.json"
    activator = subprocess.Popen(
        ["ip", "netns", "exec", lan.client_ns, "systemd-socket-activate", "-l", "10.77.0.1:7303", "-l", str(path),
         "--fdname=web:control", str(lan.build.lnp_run), "--deny", "--", "sh", "-c",
         f'exec python3 {SD_DAEMON} listen > {report_path}'],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 10
        while not path.exists() and time.time() < deadline:
            time.sleep(0.05)
        assert path.exists(), "systemd-socket-activate did not listen"
        assert peer_reads(lan, "10.77.0.1", 7303) == "web\n"
        assert unix_reads(lan, path) == "control\n"
        report = json.loads(report_path.read_text())
        assert (report["count"], report["LISTEN_PID"]) == (2, str(report["pid"])), report
        assert [(s["fd"], s["name"], s["family"]) for s in report["sockets"]] == \
            [(3, "web", "AF_INET"), (4, "control", "AF_UNIX")]
    finally:
        activator.terminate()
        activator.wait(10)


def test_a_listen_pid_naming_another_process_is_left_as_it_is(lan):
    """Sockets meant for another process (a LISTEN_PID inherited from further up) are not the
    program's: lnp-run hands on nothing that was not meant for it, as sd_listen_fds would."""
    result = lan.client(["env", "LISTEN_FDS=1", "LISTEN_PID=1", "WATCHDOG_USEC=1000000", "WATCHDOG_PID=1",
                         lan.build.lnp_run, "--deny", "--", "sh", "-c",
                         f'echo "$LISTEN_PID $WATCHDOG_PID"; exec python3 {SD_DAEMON} watchdog'])
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.splitlines()
    assert first == "1 1"
    assert json.loads(second)["enabled"] == 0


def test_an_inetd_connection_the_program_closes_is_closed(lan):
    """`Accept=yes` with `StandardInput=socket`: the connection is the program's standard input
    and output. When the program closes them, the client sees the end of the stream, while the
    program still runs: lnp-run's processes hold no copy of its standard streams."""
    service = Service(lan, ["--tcp", "10.77.0.1:7304", "--inetd"],
                      [lan.build.lnp_run, "--deny", "--", "sh", "-c", "echo served; exec >&- <&-; exec sleep 30"])
    try:
        service.line("listening")
        client = lan.peer(["python3", "-c",
                           "import socket; c = socket.create_connection(('10.77.0.1', 7304), 5); c.settimeout(5)\n"
                           "try:\n    print(repr(c.makefile('rb').read()))\nexcept socket.timeout:\n    print('no end of stream')"])
        assert client.stdout == "b'served\\n'\n", "the client saw no end of the stream the program closed"
        main_pid = service.line("main_pid")["main_pid"]
        assert service.process.poll() is None  # the program is still running
        os.kill(main_pid, signal.SIGTERM)  # systemctl stop, as KillMode=mixed sends it
        assert service.line("exit")["exit"] == -signal.SIGTERM
    finally:
        service.stop()


@pytest.fixture(scope="module")
def static_notify(workdir):
    """Tests/fixtures/notify.c, static: its sd_notify is seen by the supervisor alone."""
    output = workdir / "notify-static"
    result = run(["gcc", "-O2", "-Wall", "-static", "-o", str(output), str(FIXTURES / "notify.c")])
    assert result.returncode == 0, result.stderr
    return output


NOTIFIERS = {
    "libsystemd": (["--deny"], ["python3", SD_DAEMON, "notify"]),
    "libsystemd-strict": (["--deny", "--strict"], ["python3", SD_DAEMON, "notify"]),
    "libsystemd-preload-only": (["--deny", "--preload-only"], ["python3", SD_DAEMON, "notify"]),
    "static": (["--deny"], None),
}


@pytest.mark.parametrize("notifier", NOTIFIERS)
def test_a_notification_reaches_the_service_manager_unchanged(lan, workdir, audit, static_notify, notifier):
    """Type=notify: the program's sd_notify goes to NOTIFY_SOCKET, a Unix datagram socket, which
    is not the network: the preload and the supervisor let it through as it is, unrecorded even
    with --audit-all. It comes from the program's pid, not the main pid (lnp-run's): the unit
    needs NotifyAccess=all, or systemd drops it and the start times out."""
    options, command = NOTIFIERS[notifier]
    command = command or [static_notify]
    socket_path = workdir / f"notify-{notifier}.sock"
    socket_path.unlink(missing_ok=True)
    text = "READY=1\nSTATUS=serving 3 clients"
    service = Service(lan, ["--notify", socket_path],
                      [lan.build.lnp_run] + options + ["--audit", audit.path, "--audit-all", "--"] + command + [text])
    try:
        main_pid = service.line("main_pid")["main_pid"]
        program = service.line("sent")
        assert program["sent"] > 0, program
        message = service.line("notify")
        assert (message["notify"], message["pid"], message["fds"]) == (text, program["pid"], [])
        assert message["pid"] != main_pid
        assert service.line("exit")["exit"] == 0
        assert audit.records() == []
    finally:
        service.stop()


def test_a_descriptor_for_the_store_reaches_the_service_manager(lan, workdir):
    """FDSTORE=1: a descriptor sent with the notification (SCM_RIGHTS) arrives with it."""
    socket_path = workdir / "notify-store.sock"
    socket_path.unlink(missing_ok=True)
    service = Service(lan, ["--notify", socket_path],
                      [lan.build.lnp_run, "--deny", "--", "python3", SD_DAEMON, "store", "FDSTORE=1\nFDNAME=cache"])
    try:
        message = service.line("notify")
        assert (message["notify"], message["fds"]) == ("FDSTORE=1\nFDNAME=cache", ["pipe"])
        assert service.line("exit")["exit"] == 0
    finally:
        service.stop()


def parent(pid):
    status = pathlib.Path(f"/proc/{pid}/status").read_text()
    return int(status.split("\nPPid:")[1].split()[0])


@pytest.mark.parametrize("kill_mode", ["mixed", "control-group"])
def test_stopping_the_service(lan, listener, kill_mode):
    """systemctl stop, as systemd does it for each KillMode=, on a service recording to the
    system log. `mixed`: SIGTERM to the main process (lnp-run) alone, which passes it on: the
    program gets it once, from the keeper. `control-group` (the default): SIGTERM to the main
    process, then to every other process of the service's cgroup, the keeper and the program:
    the program gets the manager's, and may get lnp-run's too (a second one that arrives while
    the first is pending is merged with it). Either way the program's last operation, after
    its SIGTERM, reaches the logger before the main process exits with the program's status;
    then systemd kills what is left (at once under `mixed`), the keeper with it."""
    service = Service(lan, [], [lan.build.lnp_run, "--deny", "--audit", "syslog", "--", "python3", SD_DAEMON, "stop",
                                "10.77.0.2", "8080"], dev_log=listener.path)
    try:
        main = service.line("main_pid")["main_pid"]
        program = service.line("ready")["ready"]
        keeper = parent(program)
        assert parent(keeper) == main
        for pid in [main] if kill_mode == "mixed" else [main, keeper, program]:
            os.kill(pid, signal.SIGTERM)
        last = service.line("sigterm_from")
        assert last["connect"] == "EHOSTUNREACH"
        assert service.line("exit")["exit"] == 0
        with contextlib.suppress(ProcessLookupError):
            os.kill(keeper, signal.SIGKILL)
        if kill_mode == "mixed":
            assert last["sigterm_from"] == [keeper]
        else:
            assert 1 <= len(last["sigterm_from"]) <= 3 and set(last["sigterm_from"]) <= {os.getpid(), keeper}, last
        [message] = listener.messages()
        record = json.loads(HEADER.fullmatch(message).group(4))
        assert (record["pid"], record["address"], record["port"], record["decision"]) == (program, "10.77.0.2", 8080, "deny")
    finally:
        service.stop()


# User=: the service runs as that user, with the environment systemd gives it (HOME from the
# password database, no XDG_STATE_HOME), in a session of its own without a terminal.

def as_service_user(lan, command, *, state=None, administrator=None, user="nobody", uid=65534):
    """`command` as systemd runs a unit's ExecStart= with User=`user`: that user's environment,
    no controlling terminal (setsid), /dev/null on standard input; `state` as XDG_STATE_HOME;
    `administrator` as the text of /etc/lnp/decisions.conf (a tmpfs this command alone sees)."""
    environment = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/nonexistent",
                   "USER": user, "LOGNAME": user, "SHELL": "/usr/sbin/nologin", "INVOCATION_ID": "0" * 32}
    if state:
        environment["XDG_STATE_HOME"] = str(state)
    full = (["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "env", "-i"]
            + [f"{k}={v}" for k, v in environment.items()] + ["setsid", "--wait"] + [str(c) for c in command])
    if administrator is not None:
        script = ('mount -t tmpfs -o mode=0755,size=1m lnp-test /etc/lnp\n'
                  'printf "%s" "$0" > /etc/lnp/decisions.conf\nexec "$@"')
        full = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-ec", script, administrator] + full
    return subprocess.run(["ip", "netns", "exec", lan.client_ns] + full, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)


CONNECT = ["connect", "tcp", "10.77.0.2", "8080"]


def test_a_service_user_with_deny_is_asked_nothing(lan, fixtures):
    """`--deny` decides for the run: no store is read (nobody's home does not exist) and
    nothing is said; the local connect fails at once."""
    result = as_service_user(lan, [lan.build.lnp_run, "--deny", "--", fixtures.probe] + CONNECT)
    assert (result.returncode, result.stderr) == (0, "")
    assert [(r["call"], r["errno"]) for r in json_lines(result.stdout)] == [("connect", "EHOSTUNREACH")]
    assert not os.path.exists("/nonexistent")


def test_a_service_without_a_decision_is_denied_and_says_so(lan, fixtures):
    """Neither option and nothing decided: no terminal to ask on, so denied, with one line for
    the journal that says how to decide."""
    result = as_service_user(lan, [lan.build.lnp_run, "--", fixtures.probe] + CONNECT)
    assert [(r["call"], r["errno"]) for r in json_lines(result.stdout)] == [("connect", "EHOSTUNREACH")]
    assert result.stderr == (f"lnp-run: denied local-network access: {fixtures.probe} is undetermined and there is no "
                             f"terminal to ask on; decide with 'lnp allow {fixtures.probe}' (or 'lnp deny')\n")
    assert not os.path.exists("/nonexistent")


def test_a_service_users_own_store_decides(lan, fixtures, workdir):
    """A store of the service's own (`StateDirectory=`, given as XDG_STATE_HOME), decided by
    `lnp allow` run as that user: the service runs under that decision, without an option."""
    state = workdir / f"service-state-{time.monotonic_ns()}"
    state.mkdir()
    os.chown(state, 65534, 65534)
    decided = as_service_user(lan, [lan.build.lnp, "allow", fixtures.probe], state=state)
    assert decided.returncode == 0, decided.stderr
    result = as_service_user(lan, [lan.build.lnp_run, "--", fixtures.probe] + CONNECT, state=state)
    assert (result.returncode, result.stderr) == (0, "")
    assert [(r["call"], r["result"]) for r in json_lines(result.stdout)] == [("connect", 0)]
    assert (state / "lnp" / "decisions.sqlite").stat().st_uid == 65534


def test_the_administrators_file_decides_over_the_drop_ins_deny(lan, fixtures, etc_lnp):
    """One drop-in for the fleet (`--deny`) and, per machine, /etc/lnp/decisions.conf for the
    programs that may: the administrator's word comes first, and lnp-run says so."""
    result = as_service_user(lan, [lan.build.lnp_run, "--deny", "--", fixtures.probe] + CONNECT,
                             administrator=f"allow {fixtures.probe}\n")
    assert [(r["call"], r["result"]) for r in json_lines(result.stdout)] == [("connect", 0)]
    assert result.stderr == (f"lnp-run: warning: the administrator has allowed {fixtures.probe} "
                             f"(/etc/lnp/decisions.conf:1); --deny does not apply\n")
