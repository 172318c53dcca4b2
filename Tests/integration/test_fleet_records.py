"""Records from many machines, as docs/services.md sets it up with rsyslog: on each machine
rsyslog forwards lnp's messages to a collector, which keeps one file per machine, and
`lnp report` reads those files as they are.

Three parties in network namespaces of the test's own making: two "machines" (two rsyslogd in
one namespace, each with a host name of its own, each taking lnp-run's records on a socket
mounted at /dev/log for that run) and a collector, joined by a veth pair. The rsyslog files are
docs/services.md's own, with the collector's address and the test's directories put in.
"""

import json
import os
import re
import shutil
import subprocess
import time
import types

import pytest

from conftest import ROOT, dev_log_command, json_lines, require, run, stop_all

DOCS = ROOT / "docs" / "services.md"
COLLECTED_LINE = re.compile(r"([A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (\S+) lnp\[(\d+)\]: @cee: (\{.*\})")


def documented_file(path):
    """The text of the fenced block in docs/services.md whose first line names `path`."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", DOCS.read_text(), re.S)
    [block] = [b for b in blocks if b.startswith(f"# {path}\n")]
    return block


class Fleet:
    def __init__(self, workdir):
        require(os.geteuid() == 0, "network namespaces need root")
        require(shutil.which("rsyslogd") is not None, "rsyslog is not installed (scripts/deps test installs it)")
        tag = f"lnpks{os.getpid()}"
        self.machines_ns, self.collector_ns = f"{tag}m", f"{tag}c"
        self.directory = workdir / f"fleet-{time.monotonic_ns()}"
        self.directory.mkdir()
        self.collected = self.directory / "collected"
        self.daemons = []
        result = run(["sh", "-ec", f"""
            ip netns add {self.machines_ns}; ip netns add {self.collector_ns}
            ip link add lnpks-m0 netns {self.machines_ns} type veth peer name lnpks-c0 netns {self.collector_ns}
            ip -n {self.machines_ns} link set lo up; ip -n {self.collector_ns} link set lo up
            ip -n {self.machines_ns} link set lnpks-m0 up; ip -n {self.collector_ns} link set lnpks-c0 up
            ip -n {self.machines_ns} addr add 10.78.0.1/24 dev lnpks-m0
            ip -n {self.collector_ns} addr add 10.78.0.2/24 dev lnpks-c0
        """])
        assert result.returncode == 0, result.stderr

    def rsyslogd(self, namespace, name, configuration):
        """rsyslogd in `namespace`, in the foreground, with a work directory of its own."""
        work = self.directory / name
        work.mkdir()
        conf = work / "rsyslog.conf"
        conf.write_text(f'global(workDirectory="{work}")\n' + configuration)
        check = run(["rsyslogd", "-N1", "-f", str(conf)])
        assert check.returncode == 0, check.stdout + check.stderr
        log = open(work / "stderr", "w")
        daemon = subprocess.Popen(["ip", "netns", "exec", namespace, "rsyslogd", "-n", "-f", str(conf),
                                   "-i", str(work / "rsyslogd.pid")], stdout=log, stderr=log)
        self.daemons.append(daemon)
        return work

    def collector(self):
        configuration = documented_file("/etc/rsyslog.d/60-lnp-collect.conf")
        configuration = configuration.replace("/var/log/lnp/", f"{self.collected}/")
        bound = configuration.replace('input(type="imtcp" port="514"', 'input(type="imtcp" address="10.78.0.2" port="514"')
        assert bound != configuration
        self.rsyslogd(self.collector_ns, "collector", bound)
        self.wait_for(lambda: run(["ip", "netns", "exec", self.collector_ns, "ss", "-Htln", "src", "10.78.0.2:514"]).stdout,
                      "the collector does not listen")

    def machine(self, host):
        """A machine's rsyslogd (named `host`): its /dev/log, a socket, is returned."""
        forward = documented_file("/etc/rsyslog.d/60-lnp-forward.conf")
        pointed = forward.replace('target="collector.example.net"', 'target="10.78.0.2"')
        assert pointed != forward
        socket_path = self.directory / f"{host}.sock"
        configuration = (f'global(localHostname="{host}")\n'
                         'module(load="imuxsock" SysSock.Use="off")\n'
                         f'input(type="imuxsock" Socket="{socket_path}")\n' + pointed)
        self.rsyslogd(self.machines_ns, host, configuration)
        self.wait_for(socket_path.exists, f"{host}'s rsyslogd made no socket")
        return socket_path

    @staticmethod
    def wait_for(condition, failure, seconds=15):
        deadline = time.time() + seconds
        while not condition():
            assert time.time() < deadline, failure
            time.sleep(0.1)

    def on_machine(self, dev_log, command):
        """`command` in the machines' namespace with `dev_log` at /dev/log."""
        holder = types.SimpleNamespace(workdir=self.directory)
        return run(["ip", "netns", "exec", self.machines_ns] + dev_log_command(holder, dev_log, command))

    def close(self):
        stop_all(self.daemons, timeout=10)
        run(["ip", "netns", "del", self.machines_ns])
        run(["ip", "netns", "del", self.collector_ns])


@pytest.fixture
def fleet(workdir):
    network = Fleet(workdir)
    yield network
    network.close()


def test_records_forwarded_by_rsyslog_from_two_machines_reach_the_collector(build, fixtures, fleet):
    fleet.collector()
    shop = fleet.machine("lnpks-shop")
    office = fleet.machine("lnpks-office")
    probe = str(fixtures.probe)
    runs = {
        "lnpks-shop": fleet.on_machine(shop, [build.lnp_run, "--deny", "--audit", "syslog", "--", "sh", "-c",
                                              f"{probe} connect tcp 10.78.0.2 631; {probe} sendto 10.78.0.2 5353"]),
        "lnpks-office": fleet.on_machine(office, [build.lnp_run, "--allow", "--audit", "syslog", "--",
                                                  probe, "sendto", "10.78.0.2", "9999"]),
    }
    for host, result in runs.items():
        assert result.returncode == 0, (host, result.stderr)
    calls = {host: json_lines(result.stdout) for host, result in runs.items()}
    assert [c["errno"] for c in calls["lnpks-shop"]] == ["EHOSTUNREACH", "EHOSTUNREACH"]
    assert [c["result"] for c in calls["lnpks-office"]] == [5]

    files = {host: fleet.collected / f"{host}.log" for host in runs}
    expected = {"lnpks-shop": 2, "lnpks-office": 1}
    fleet.wait_for(lambda: all(f.exists() and len(f.read_text().splitlines()) == expected[h] for h, f in files.items()),
                   f"the collector did not write the records: {[(f, f.exists() and f.read_text()) for f in files.values()]}")

    for host, path in files.items():
        lines = [COLLECTED_LINE.fullmatch(line) for line in path.read_text().splitlines()]
        assert all(lines), path.read_text()
        assert {line.group(2) for line in lines} == {host}
        report = run([build.lnp, "report", "--json", path])
        assert (report.returncode, report.stderr) == (0, "")
        # The records as lnp-run sent them, byte for byte, and each sent by the process it is about.
        assert report.stdout.splitlines() == [line.group(4) for line in lines]
        records = [json.loads(text) for text in report.stdout.splitlines()]
        assert all(int(line.group(3)) == record["pid"] for line, record in zip(lines, records))
        if host == "lnpks-shop":
            assert [(r["op"], r["address"], r["port"], r["decision"]) for r in records] == \
                [("connect", "10.78.0.2", 631, "deny"), ("sendto", "10.78.0.2", 5353, "deny")]
            assert {r["program"] for r in records} == {"/usr/bin/sh"} and {r["exe"] for r in records} == {probe}
        else:
            assert [(r["op"], r["address"], r["port"], r["decision"], r["program"]) for r in records] == \
                [("sendto", "10.78.0.2", 9999, "allow", probe)]

    table = run([build.lnp, "report", files["lnpks-shop"]])
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith("/usr/bin/sh: 2 local-network operations (0 allowed, 2 denied)"), table.stdout
    both = run([build.lnp, "report", "--json", files["lnpks-shop"], files["lnpks-office"]])
    assert len(both.stdout.splitlines()) == 3
