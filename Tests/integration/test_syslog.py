"""--audit syslog: each record one datagram to /dev/log, received here by a test listener.

The listener's socket is mounted over /dev/log in a private mount namespace (on a tmpfs
over /dev, with the few device nodes programs need), so the machine's own logger, if any,
never sees the test's records.
"""

import json
import re
import socket
import subprocess
import time

import pytest

from conftest import dev_log_command, json_lines

HEADER = re.compile(r"<(\d+)>([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) lnp\[(\d+)\]: @cee: (\{.*\})")


def with_dev_log(lan, socket_path, command):
    """Runs `command` in the client namespace with `socket_path` mounted at /dev/log."""
    return lan.client(dev_log_command(lan, socket_path, command))


@pytest.fixture
def listener(workdir):
    path = workdir / f"log-{id(object())}.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(str(path))
    server.settimeout(5)

    class Listener:
        def __init__(self):
            self.path = path

        def messages(self):
            received = []
            server.settimeout(0.5)
            try:
                while True:
                    received.append(server.recv(65536).decode())
            except socket.timeout:
                return received

    yield Listener()
    server.close()
    path.unlink()


def test_each_record_is_one_structured_message(lan, fixtures, listener):
    script = f"{fixtures.probe} connect tcp 10.77.0.2 8080; {fixtures.probe} connect tcp 203.0.113.5 8080"
    result = with_dev_log(lan, listener.path, [lan.build.lnp_run, "--deny", "--audit", "syslog", "--audit-all",
                                               "--", "sh", "-c", script])
    assert result.returncode == 0, result.stderr
    assert [line["result"] for line in json_lines(result.stdout)] == [-1, 0]
    messages = listener.messages()
    assert len(messages) == 2, messages
    parsed = [HEADER.fullmatch(message) for message in messages]
    assert all(parsed), messages
    denied, activity = [json.loads(match.group(4)) for match in parsed]
    assert (denied["address"], denied["decision"], denied["local"]) == ("10.77.0.2", "deny", True)
    assert (activity["address"], activity["decision"], activity["local"]) == ("203.0.113.5", "allow", False)
    # facility user (1); warning (4) for a denial, info (6) for activity off the local network
    assert [int(match.group(1)) for match in parsed] == [12, 14]
    assert [int(match.group(3)) for match in parsed] == [denied["pid"], activity["pid"]]
    assert denied["program"] == "/usr/bin/sh" and denied["exe"] == str(fixtures.probe)


def test_lnp_report_reads_the_records_the_logger_received(lan, fixtures, listener, workdir):
    """The datagrams lnp-run sent, kept one a line as a capture of /dev/log keeps them and as
    rsyslog writes them to a file among other programs' lines: `lnp report --json` gives back
    each record, field for field and byte for byte, the denial included."""
    script = (f"{fixtures.probe} connect tcp 10.77.0.2 8080; {fixtures.probe} sendto 10.77.0.2 9999; "
              f"{fixtures.probe} connect tcp 203.0.113.5 8080")
    result = with_dev_log(lan, listener.path, [lan.build.lnp_run, "--deny", "--audit", "syslog", "--audit-all",
                                               "--", "sh", "-c", script])
    assert result.returncode == 0, result.stderr
    messages = listener.messages()
    assert len(messages) == 3, messages
    matches = [HEADER.fullmatch(message) for message in messages]
    records = [match.group(4) for match in matches]
    assert [json.loads(r)["decision"] for r in records] == ["deny", "deny", "allow"]

    captured = workdir / "syslog-captured.log"
    captured.write_text("".join(message + "\n" for message in messages))
    rsyslog = workdir / "syslog-rsyslog.log"
    rsyslog.write_text("".join(f"Nov 21 05:09:20 host cron[9]: (root) CMD (run-parts /etc/cron.hourly)\n"
                               f"{match.group(2)} host lnp[{match.group(3)}]: @cee: {match.group(4)}\n"
                               for match in matches))
    for log in (captured, rsyslog):
        report = subprocess.run([lan.build.lnp, "report", "--json", log], capture_output=True, text=True, timeout=60)
        assert (report.returncode, report.stderr) == (0, ""), log
        assert report.stdout.splitlines() == records, log
        assert [json.loads(line) for line in report.stdout.splitlines()] == [json.loads(r) for r in records]


def test_an_allowed_operation_is_a_notice(lan, fixtures, listener):
    with_dev_log(lan, listener.path, [lan.build.lnp_run, "--allow", "--audit", "syslog", "--",
                                      fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    [message] = listener.messages()
    match = HEADER.fullmatch(message)
    assert int(match.group(1)) == 13
    assert json.loads(match.group(4))["decision"] == "allow"


def test_no_logger_listening_stops_lnp_run_before_the_program_runs(lan, fixtures, workdir):
    dead = workdir / "dead.sock"
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listening.bind(str(dead))
    listening.close()  # the file stays; nothing receives on it
    marker = workdir / "ran-without-logger"
    result = with_dev_log(lan, dead, [lan.build.lnp_run, "--allow", "--audit", "syslog", "--", "touch", marker])
    assert result.returncode == 125
    assert "no system logger listens on /dev/log" in result.stderr
    assert not marker.exists()
    dead.unlink()


def test_a_stalled_logger_never_holds_the_program(lan, fixtures, workdir):
    """A logger that reads nothing, with a queue of 2 (the limit belongs to the receiving
    socket's namespace): the program still makes all its calls, each record waiting at most
    100 ms before it is dropped."""
    path = workdir / "stalled.sock"
    assert lan.client(["sysctl", "-qw", "net.unix.max_dgram_qlen=2"]).returncode == 0
    holder = subprocess.Popen(
        ["ip", "netns", "exec", lan.client_ns, "python3", "-c",
         "import socket, sys, time\n"
         f"s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind({str(path)!r})\n"
         "print('bound', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "bound"
        started = time.monotonic()
        result = with_dev_log(lan, path, [lan.build.lnp_run, "--deny", "--audit", "syslog", "--",
                                          fixtures.probe, "many", "1", "1", "10", "10.77.0.2", "8080"])
        elapsed = time.monotonic() - started
        assert json_lines(result.stdout) == [{"call": "many", "result": 0, "errno": None}], result.stderr
        assert elapsed < 10, f"the run took {elapsed:.1f} s"
    finally:
        holder.kill()
        holder.wait()
        path.unlink()
