"""The record can be trusted: a record that cannot be written is counted and said, never
silently dropped; writing the audit never kills the program, tears a line, or holds it up —
whatever the disk, the file size limit or a pipe's reader does."""

import json
import sys
import os
import shutil
import subprocess
import time

import pytest

from conftest import json_lines


def sends(fixtures, count, address="10.77.0.2"):
    """A shell command: `count` denied datagrams, each from a process of its own."""
    return ["sh", "-c", f"for i in $(seq {count}); do {fixtures.probe} sendto {address} 9999 >/dev/null; done; echo done"]


def lost_lines(result):
    return [line for line in result.stderr.splitlines() if "were lost" in line]


def whole_records(path):
    """Every line of the file, each a whole JSON record."""
    lines = path.read_text().splitlines()
    return [json.loads(line) for line in lines]


def in_a_small_filesystem(lan, workdir, script, size="16k"):
    """Runs `script` (sh) in the client namespace with a private tmpfs of `size` at
    `workdir/small`, in a mount namespace of its own."""
    mount = workdir / f"small-{time.monotonic_ns()}"
    mount.mkdir()
    return lan.client(["unshare", "-m", "sh", "-ec", f"mount -t tmpfs -o size={size} tmpfs {mount}; cd {mount}; {script}"])


def test_a_full_device_loses_records_and_says_how_many(lan, fixtures):
    result = lan.lnp_run(["--deny", "--audit", "/dev/full"], sends(fixtures, 3))
    assert result.stdout.strip() == "done"
    assert lost_lines(result) == [
        "lnp-run: 3 record(s) of this run were lost: the audit file could not be written: No space left on device"]


def test_a_full_disk_loses_records_the_next_one_notes_the_gap(lan, fixtures, workdir):
    """The disk fills up, two records are lost; space comes back, and the next record says so."""
    lnp_run = lan.build.lnp_run
    probe = f"{fixtures.probe} sendto 10.77.0.2 9999 >/dev/null"
    script = (f"dd if=/dev/zero of=filler bs=1k count=64 2>/dev/null || true; "
              f"{lnp_run} --deny --audit audit.jsonl --summary -- sh -c '{probe}; {probe}; rm filler; {probe}'; "
              "cat audit.jsonl")
    result = in_a_small_filesystem(lan, workdir, script)
    assert lost_lines(result) == [
        "lnp-run: 2 record(s) of this run were lost: the audit file could not be written: No space left on device"]
    [record] = json_lines(result.stdout)
    assert record["lost"] == {"count": 2, "because": "the audit file could not be written: No space left on device"}
    assert "lnp: 3 local-network operations: 0 allowed, 3 denied" in result.stderr, "--summary counts what was lost too"


def test_a_removed_audit_file_is_said(lan, fixtures, workdir):
    directory = workdir / f"removed-{time.monotonic_ns()}"
    directory.mkdir()
    probe = f"{fixtures.probe} sendto 10.77.0.2 9999 >/dev/null"
    result = lan.lnp_run(["--deny", "--audit", str(directory / "audit.jsonl")],
                         ["sh", "-c", f"{probe}; rm -r {directory}; {probe}"])
    assert lost_lines(result) == ["lnp-run: 1 record(s) of this run were lost: the audit file was removed"]


def test_the_file_size_limit_never_kills_the_program_nor_tears_a_line(lan, fixtures, audit):
    result = lan.client(["prlimit", "--fsize=2000", lan.build.lnp_run, "--deny", "--audit", str(audit.path), "--"]
                        + sends(fixtures, 12))
    assert (result.returncode, result.stdout.strip()) == (0, "done")
    records = whole_records(audit.path)
    assert 0 < len(records) < 12
    assert lost_lines(result) == [
        f"lnp-run: {12 - len(records)} record(s) of this run were lost: the file size limit (RLIMIT_FSIZE) was reached"]


def test_a_pipe_without_a_reader_is_refused_at_once(lan, workdir):
    fifo = workdir / f"fifo-{time.monotonic_ns()}"
    os.mkfifo(fifo)
    marker = workdir / f"ran-{time.monotonic_ns()}"
    result = lan.lnp_run(["--deny", "--audit", str(fifo)], ["touch", marker], timeout=10)
    assert result.returncode == 125
    assert result.stderr == f"lnp-run: --audit {fifo}: no process reads this pipe; start its reader first\n"
    assert not marker.exists()


@pytest.mark.parametrize("path,message", [("", "--audit needs a file"), ("/", "it is a directory"),
                                          ("/nonexistent/directory/audit.jsonl", "No such file or directory")])
def test_an_audit_that_cannot_be_written_stops_lnp_run_before_the_program(lan, workdir, path, message):
    marker = workdir / f"ran-{time.monotonic_ns()}"
    result = lan.lnp_run(["--deny", "--audit", path], ["touch", marker])
    assert result.returncode == 125
    assert message in result.stderr and len(result.stderr.splitlines()) == 1
    assert not marker.exists()


def test_records_on_stderr(lan, fixtures):
    result = lan.lnp_run(["--deny", "--audit", "/dev/stderr"], sends(fixtures, 2))
    records = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    assert [(r["op"], r["decision"]) for r in records] == [("sendto", "deny")] * 2


def test_records_to_a_process_substitution(lan, fixtures, workdir):
    out = workdir / f"substituted-{time.monotonic_ns()}.jsonl"
    probe = f"{fixtures.probe} sendto 10.77.0.2 9999"
    result = lan.client(["bash", "-c", f"{lan.build.lnp_run} --deny --audit >(cat > {out}) -- {probe}; sleep 0.5"])
    assert result.returncode == 0, result.stderr
    assert [r["address"] for r in whole_records(out)] == ["10.77.0.2"]


def test_a_slow_reader_never_holds_the_program_up(lan, fixtures, workdir):
    """The collector reads nothing for 30 s; the program's 3,000 records (more than lnp-run
    holds back) must not wait for it: lnp-run ends within seconds and says what was lost."""
    fifo = workdir / f"slow-{time.monotonic_ns()}"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["sh", "-c", f"exec 3<{fifo}; sleep 30; cat <&3 >/dev/null"])
    try:
        started = time.monotonic()
        result = lan.lnp_run(["--deny", "--audit", str(fifo)],
                             [fixtures.probe, "many", "1", "1", "3000", "10.77.0.2", "8080"], timeout=25)
        assert time.monotonic() - started < 20
        assert result.returncode == 0
        [line] = lost_lines(result)
        assert line.endswith("record(s) of this run were lost: the pipe's reader did not keep up")
    finally:
        reader.kill()


FORGER = r"""
import os, socket, struct, subprocess, sys
me = os.getpid()
victim = subprocess.Popen(["sleep", "3"])  # another process of the same run
rest = (',"program":"/usr/bin/curl","exe":"/usr/bin/curl","op":"connect","fd":3,"transport":"tcp",'
        '"address":"10.77.0.9","port":22,"host":null,"domains":[],"reason":"on-link","decision":"allow",'
        '"because":"remembered","attribution":"app","local":true}')
forged = [
    '{"time":"2026-01-01T00:00:00.000000Z","pid":%d,"op":"connect","local":true}\n{"time":"2026-01-01T00:00:00.000000Z","pid":1,"program":"/usr/bin/firefox","decision":"allow","local":true}' % me,
    '{"time":"2026-01-01T00:00:00.000000Z","pid":%d,"op":"connect","pid":4242,"local":true}' % me,
    '{"time":"2026-01-01T00:00:00.000000Z","pid":%d,"p\\u0069d":31337,"local":true}' % me,
    # my pid first, inside an object; the record's own pid is another process's
    '{"time":"2026-01-01T00:00:00.000000Z","x":{"pid":%d},"pid":%d' % (me, victim.pid) + rest,
    # not JSON: a bare word, a mismatched bracket, an unknown escape
    '{"time":"t","pid":%d,"op":@@@}' % me,
    '{"time":"t","pid":%d,"a":{]}' % me,
    '{"time":"t\\q","pid":%d}' % me,
    # lnp-run's own keys
    '{"time":"t","pid":%d,"lost":{"count":0,"because":"none"}}' % me,
    '{"time":"t","pid":%d,"by":"supervisor"}' % me,
]
raw = [
    b'{"time":"t\xff\xfe","pid":%d}' % me,   # not UTF-8
    b'{"time":"t\xc2\x9b2J","pid":%d}' % me,   # a C1 control (CSI) in UTF-8
]
honest = '{"time":"2026-01-01T00:00:00.000000Z","pid":%d' % me + rest
with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
    s.connect(b"\0lnp-run/" + os.environ["LNP_RUN"].encode() + b"/records")
    def send(line, severity=5):
        s.send(b"lnp1" + struct.pack("<I", 0) + bytes([severity, 0, 0, 0]) + line)
    for line in forged:
        send(line.encode())
    for line in raw:
        send(line)
    send(honest.encode(), severity=0)   # an emergency in the system log: no
    send(b"not a record at all")
    send(honest.encode())   # its exe is its own, whatever it says
victim.wait()
"""


def test_records_a_process_makes_up_are_not_written(lan, audit):
    """A process of the run sends record datagrams of its own making: one that smuggles a
    second line, one that names another pid under a second "pid" key, one that hides a key
    behind an escape, one that names another process of the run after its own pid inside an
    object, lines that are not JSON or not UTF-8, lnp-run's own keys, a severity lnp never
    gives, and one that is no record at all. None is written; each is counted. A record in
    the preload's form about itself is written, with the executable the kernel names."""
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], ["python3", "-c", FORGER])
    [line] = audit.path.read_text().splitlines()
    record = json.loads(line)
    assert record["exe"] == os.path.realpath(sys.executable), record
    assert "lnp-run: 13 record(s) refused" in result.stderr, result.stderr


def test_a_program_whose_path_holds_control_characters_is_recorded(lan, fixtures, audit, workdir):
    """A program named with a C1 control (U+009B, a terminal's CSI) and DEL: the preload
    escapes them in its record, which lnp-run's strict check takes, so the program cannot
    keep its operations out of the audit by its name."""
    program = workdir / "probe\u009b2J\u007fx"
    shutil.copy(fixtures.probe, program)
    result = lan.lnp_run(["--deny", "--audit", str(audit.path)], [program, "connect", "tcp", "10.77.0.2", "8080"])
    assert "refused" not in result.stderr, result.stderr
    [record] = audit.records()
    assert record["program"] == str(program) and record["decision"] == "deny"
    assert "\\u009b" in audit.path.read_text() and "\\u007f" in audit.path.read_text()
