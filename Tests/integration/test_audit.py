"""The audit record: its fields, and whole lines under many processes and threads."""

import datetime
import os
import re

from conftest import json_lines, run

FIELDS = ["time", "pid", "program", "exe", "op", "fd", "transport", "address", "port", "host", "domains",
          "reason", "decision", "because", "attribution", "local", "by"]


def test_record_fields(lan, fixtures, audit):
    lan.lnp_run(["--deny", "--audit", str(audit.path)], [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    [record] = audit.records()
    assert list(record) == FIELDS
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", record["time"])
    when = datetime.datetime.strptime(record["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    assert abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) < 60
    assert record["pid"] > 1
    assert record["program"] == str(fixtures.probe)
    assert record["exe"] == str(fixtures.probe)
    assert (record["op"], record["fd"], record["transport"]) == ("connect", 3, "tcp")
    assert (record["address"], record["port"], record["host"], record["domains"]) == ("10.77.0.2", 8080, None, [])
    assert record["reason"] == "on-link 10.77.0.0/24 via c0"
    assert (record["decision"], record["because"], record["attribution"]) == ("deny", "run-option", "app")


def test_children_are_recorded_with_the_program_and_their_own_exe(lan, fixtures, audit):
    script = f"{fixtures.probe} connect tcp 10.77.0.2 8080; {fixtures.probe} sendto 10.77.0.2 9999"
    lan.lnp_run(["--deny", "--audit", str(audit.path)], ["sh", "-c", script])
    records = audit.records()
    assert [r["op"] for r in records] == ["connect", "sendto"]
    assert {r["program"] for r in records} == {"/usr/bin/sh"}
    assert {r["exe"] for r in records} == {str(fixtures.probe)}
    assert records[0]["pid"] != records[1]["pid"]


def test_relative_audit_path_is_made_absolute(lan, fixtures, workdir):
    directory = workdir / "relative"
    directory.mkdir()
    command = f"cd {directory} && {lan.build.lnp_run} --deny --audit sub.jsonl -- sh -c 'cd / && {fixtures.probe} connect tcp 10.77.0.2 8080'"
    lan.client(["sh", "-c", command])
    assert len((directory / "sub.jsonl").read_text().splitlines()) == 1


def test_many_processes_and_threads_give_whole_lines_and_an_exact_count(lan, fixtures, audit):
    processes, threads, calls = 16, 8, 40
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)],
                         [fixtures.probe, "many", processes, threads, calls, "10.77.0.2", "8080"])
    assert json_lines(result.stdout) == [{"call": "many", "result": 0, "errno": None}]
    text = audit.path.read_text()
    assert text.endswith("\n")
    records = audit.records()  # every line parses as JSON: none torn, none interleaved
    assert len(records) == processes * threads * calls, result.stderr
    assert len({r["pid"] for r in records}) == processes
    assert all(r["decision"] == "deny" and r["op"] == "connect" for r in records)


def test_audit_file_is_created_private(lan, fixtures, audit):
    lan.lnp_run(["--deny", "--audit", str(audit.path)], ["true"])
    assert audit.path.exists()
    assert oct(audit.path.stat().st_mode & 0o777) == "0o600"


def test_without_audit_nothing_is_written(lan, fixtures, workdir):
    """The preload opens nothing for writing when there is no --audit: traced with strace,
    the wrapped program's only opens are its own (/dev/null, read-only)."""
    trace = workdir / "strace.txt"
    lan.client(["strace", "-f", "-qq", "-e", "trace=open,openat,creat", "-o", trace, lan.build.lnp_run, "--deny",
                "--", fixtures.probe, "malformed", "10.77.0.2", "9"])
    lines = trace.read_text().splitlines()
    assert any('"/dev/null", O_RDONLY' in line for line in lines), "the probe's own open should be in the trace"
    opens = [line for line in lines if "O_WRONLY" in line or "O_RDWR" in line or "creat(" in line]
    # lnp-run's keeper lets go of the standard streams once the program has ended (RunKeeper).
    assert [line for line in opens if '"/dev/null", O_RDWR' not in line] == []


def test_unwritable_audit_file_stops_lnp_run_before_the_program_runs(lan, fixtures, workdir):
    result = lan.lnp_run(["--deny", "--audit", "/proc/nope/audit.jsonl"], ["touch", workdir / "ran"])
    assert result.returncode == 125
    assert "cannot write the audit file /proc/nope/audit.jsonl" in result.stderr
    assert not (workdir / "ran").exists()


def test_audit_lines_are_valid_json_whatever_the_program_path(lan, fixtures, workdir, audit):
    odd = workdir / "odd \"name\"\\ \t é"
    odd.mkdir()
    program = odd / "probe"
    run(["cp", fixtures.probe, program], check=True)
    lan.lnp_run(["--deny", "--audit", str(audit.path)], [program, "connect", "tcp", "10.77.0.2", "8080"])
    [record] = audit.records()
    assert record["exe"] == str(program)
    assert record["program"] == str(program)
