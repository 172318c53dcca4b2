"""`lnp report`: audit files made by real runs, reported as a table, as Apple's App Privacy
Report records (NDJSON), as the records themselves (JSON, for scripts), and as an HTML page
checked in headless Chromium."""

import collections
import datetime
import html
import importlib.util
import json
import os
import pathlib
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import json_lines, require, run

APPLE_KEYS = ["domain", "firstTimeStamp", "context", "timeStamp", "domainType", "initiatedType", "hits", "type",
              "domainOwner", "bundleID"]
# The audit record's fields, in the order lnp-run writes them (`lost` only after a loss).
RECORD_KEYS = ["time", "pid", "program", "exe", "op", "fd", "transport", "address", "port", "host", "domains", "reason",
               "decision", "because", "attribution", "local", "by"]
TABLE_COLUMNS = ["DESTINATION", "HOW", "NETWORK", "ALLOWED", "DENIED", "APP", "USER", "FIRST (UTC)", "LAST (UTC)"]


class Made:
    """An audit file from real runs of two programs, and its records."""

    def __init__(self, path, probe, other, boundary):
        self.path = path
        self.probe = str(probe)
        self.other = str(other)
        self.records = [json.loads(line) for line in path.read_text().splitlines()]
        self.boundary = boundary  # the time of the first record made after a pause


@pytest.fixture(scope="module")
def made(lan, fixtures, workdir):
    path = workdir / "report-audit.jsonl"
    # A second program whose path needs escaping everywhere it is shown.
    odd = workdir / "report <i>odd & 'q'"
    odd.mkdir()
    other = odd / "probe-b"
    shutil.copy(fixtures.probe, other)
    audit = ["--audit", str(path)]

    def probe(options, *arguments, program=fixtures.probe):
        result = lan.lnp_run(options + audit, [program, *arguments])
        assert json_lines(result.stdout), result.stderr

    probe(["--allow"], "connect", "tcp", "10.77.0.2", "8080")
    probe(["--allow"], "connect", "tcp", "10.77.0.2", "8080")
    probe(["--deny"], "connect", "tcp", "10.77.0.2", "8080")
    probe(["--allow", "--attribution", "user"], "connect", "tcp", "10.77.0.2", "8080")
    probe(["--allow"], "sendto", "10.77.0.2", "9999")
    probe(["--allow"], "resolve-connect", "printer.local", "8080")
    before = len(path.read_text().splitlines())
    time.sleep(1.1)  # so that --since can be given a time between the two batches
    probe(["--deny"], "resolve", "printer.local")
    probe(["--allow"], "connect", "tcp", "10.77.0.2", "8080", program=other)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return Made(path, fixtures.probe, other, records[before]["time"])


def lnp_report(build, *arguments, input=None):
    return run([build.lnp, "report", *[str(a) for a in arguments]], env=dict(os.environ, TZ="UTC"), input=input)


def seconds(stamp):
    """An audit time cut to the second, as Apple writes it: 2026-11-21T10:00:00Z."""
    return stamp[:19] + "Z"


def expected_activity(records):
    """Apple's records, worked out here from the audit records: allowed operations by program,
    domain (the host when known, else the address) and initiation."""
    groups = collections.defaultdict(list)
    for record in records:
        if record["decision"] != "allow":
            continue
        domain = record["host"] if record["host"] is not None else record["address"]
        initiated = "AppInitiated" if record["attribution"] == "app" else "NonAppInitiated"
        groups[(record["program"], domain, initiated)].append(record["time"])
    return {key: (len(times), seconds(min(times)), seconds(max(times))) for key, times in groups.items()}


def ndjson_groups(text):
    """The output's records, checked for Apple's keys and types, by (bundleID, domain, initiatedType)."""
    groups = {}
    for line in text.splitlines():
        pairs = json.loads(line, object_pairs_hook=list)
        assert [key for key, _ in pairs] == APPLE_KEYS, line
        record = dict(pairs)
        assert (record["context"], record["domainOwner"], record["type"]) == ("", "", "networkActivity")
        assert record["domainType"] == 2 and type(record["domainType"]) is int
        assert type(record["hits"]) is int and record["hits"] > 0
        assert record["initiatedType"] in ("AppInitiated", "NonAppInitiated")
        for key in ("firstTimeStamp", "timeStamp"):
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record[key]), record[key]
        key = (record["bundleID"], record["domain"], record["initiatedType"])
        assert key not in groups, f"one record per program, domain and initiation: {line}"
        groups[key] = (record["hits"], record["firstTimeStamp"], record["timeStamp"])
    return groups


def table_sections(text):
    """Program heading -> rows (lists of cells) of the table output."""
    sections = {}
    heading = None
    for line in text.splitlines():
        if not line:
            continue
        if not line.startswith("  "):
            heading = line
            sections[heading] = []
        else:
            sections[heading].append(re.split(r" {2,}", line.strip()))
    return sections


def test_the_runs_made_what_the_report_tests_expect(made):
    ops = [(r["program"], r["op"], r["decision"], r["attribution"]) for r in made.records]
    assert ops.count((made.probe, "connect", "allow", "app")) == 3  # two, and the resolve-connect's
    assert ops.count((made.probe, "connect", "allow", "user")) == 1
    assert ops.count((made.probe, "connect", "deny", "app")) == 1
    assert ops.count((made.probe, "sendto", "allow", "app")) == 1
    assert ops.count((made.probe, "resolve", "allow", "app")) == 1
    assert ops.count((made.probe, "resolve", "deny", "app")) >= 1
    assert ops.count((made.other, "connect", "allow", "app")) == 1
    assert all(r.get("local", True) for r in made.records)


def test_ndjson_is_apples_network_activity_field_by_field(build, made):
    result = lnp_report(build, "--format", "ndjson", made.path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    groups = ndjson_groups(result.stdout)
    assert groups == expected_activity(made.records)
    # And what that means for these runs: denied operations contacted nothing and are left out.
    assert groups[(made.probe, "10.77.0.2", "AppInitiated")][0] == 3  # two connects and a datagram
    assert groups[(made.probe, "10.77.0.2", "NonAppInitiated")][0] == 1
    assert groups[(made.probe, "printer.local", "AppInitiated")][0] == 2  # the lookup and its connect
    assert groups[(made.other, "10.77.0.2", "AppInitiated")][0] == 1
    assert len(groups) == 4
    # Ordered by program, then domain, app-initiated first.
    assert [line for line in result.stdout.splitlines()] == sorted(
        result.stdout.splitlines(),
        key=lambda line: (json.loads(line)["bundleID"], json.loads(line)["domain"], json.loads(line)["initiatedType"]))


def test_table_shows_each_programs_destinations(build, made):
    result = lnp_report(build, made.path)
    assert result.returncode == 0, result.stderr
    sections = table_sections(result.stdout)
    mine = [r for r in made.records if r["program"] == made.probe]
    denied = sum(r["decision"] == "deny" for r in mine)
    users = sum(r["attribution"] == "user" for r in mine)
    heading = (f"{made.probe}: {len(mine)} local-network operations ({len(mine) - denied} allowed, {denied} denied); "
               f"{len(mine) - users} app-initiated, {users} user-initiated")
    assert list(sections) == [heading, f"{made.other}: 1 local-network operation (1 allowed, 0 denied); "
                                        "1 app-initiated, 0 user-initiated"]
    rows = {row[0]: row for row in sections[heading][1:]}
    assert sections[heading][0] == TABLE_COLUMNS

    connects = [r for r in mine if r["op"] == "connect" and r["host"] is None and r["port"] == 8080]
    first, last = (min(r["time"] for r in connects), max(r["time"] for r in connects))
    assert rows["10.77.0.2:8080"] == ["10.77.0.2:8080", "tcp connect", "local", "3", "1", "3", "1",
                                      first[:19].replace("T", " "), last[:19].replace("T", " ")]
    assert rows["10.77.0.2:9999"][1:7] == ["udp sendto", "local", "1", "0", "1", "0"]
    assert rows["printer.local:8080 (10.77.0.2)"][1:7] == ["tcp connect", "local", "1", "0", "1", "0"]
    lookups = [r for r in mine if r["op"] == "resolve"]
    assert rows["printer.local"][1:5] == ["resolve", "local", "1", str(len(lookups) - 1)]
    # Most hits first.
    hits = [int(row[3]) + int(row[4]) for row in sections[heading][1:]]
    assert hits == sorted(hits, reverse=True)


def test_since_keeps_later_records(build, made):
    later = [r for r in made.records if r["time"] >= made.boundary]
    assert 0 < len(later) < len(made.records)
    result = lnp_report(build, "--format", "ndjson", "--since", made.boundary, made.path)
    assert result.returncode == 0, result.stderr
    assert ndjson_groups(result.stdout) == expected_activity(later)
    sections = table_sections(lnp_report(build, "--since", made.boundary, made.path).stdout)
    lookups = sum(r["program"] == made.probe for r in later)
    plural = "" if lookups == 1 else "s"
    assert f"{made.probe}: {lookups} local-network operation{plural} (0 allowed, {lookups} denied); " \
           f"{lookups} app-initiated, 0 user-initiated" in sections

    everything = lnp_report(build, "--format", "ndjson", made.path).stdout
    for since in ("1h", "90m", "2d", "1970-01-01", "2000-01-01T00:00:00Z"):
        assert lnp_report(build, "--format", "ndjson", "--since", since, made.path).stdout == everything, since
    future = lnp_report(build, "--since", "2999-01-01", made.path)
    assert (future.returncode, future.stdout) == (0, "no operations to report\n")

    bad = lnp_report(build, "--since", "last tuesday", made.path)
    assert bad.returncode == 64
    assert 'not a time: "last tuesday"' in bad.stderr


def test_program_matches_a_path_or_its_last_component(build, made):
    def programs(*options):
        result = lnp_report(build, "--format", "ndjson", *options, made.path)
        assert result.returncode == 0, result.stderr
        return {json.loads(line)["bundleID"] for line in result.stdout.splitlines()}

    assert programs("--program", "probe") == {made.probe}
    assert programs("--program", made.other) == {made.other}
    assert programs("--program", "probe-b", "--program", made.probe) == {made.probe, made.other}
    assert programs("--program", "robe") == set()
    assert programs() == {made.probe, made.other}


def test_a_malformed_line_is_named_and_the_rest_reported(build, made, workdir):
    lines = made.path.read_text().splitlines()
    broken = workdir / "report-broken.jsonl"
    missing = json.dumps({k: v for k, v in made.records[0].items() if k != "program"})
    broken.write_text("\n".join(lines[:3] + ["this is not json", "", missing] + lines[3:]) + "\n")

    result = lnp_report(build, "--format", "ndjson", broken)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"lnp: {broken}:4: not JSON", f'lnp: {broken}:6: missing field "program"']
    assert result.stdout == lnp_report(build, "--format", "ndjson", made.path).stdout

    table = lnp_report(build, broken)
    assert table.returncode == 1
    assert table.stdout == lnp_report(build, made.path).stdout


def test_an_unreadable_file_is_named_and_the_others_reported(build, made, workdir):
    missing = workdir / "no-such-audit.jsonl"
    result = lnp_report(build, "--format", "ndjson", missing, made.path)
    assert result.returncode == 2
    assert result.stderr == f"lnp: {missing}: cannot read: No such file or directory\n"
    assert result.stdout == lnp_report(build, "--format", "ndjson", made.path).stdout


def test_standard_input(build, made):
    expected = lnp_report(build, "--format", "ndjson", made.path).stdout
    text = made.path.read_text()
    assert lnp_report(build, "--format", "ndjson", input=text).stdout == expected
    assert lnp_report(build, "--format", "ndjson", "-", input=text).stdout == expected
    broken = lnp_report(build, "-", input=text + "{\n")
    assert broken.returncode == 1
    assert broken.stderr == f"lnp: <stdin>:{len(text.splitlines()) + 1}: not JSON\n"


# --format json: the records themselves, one a line, for scripts.

def test_json_is_the_audit_record_by_record(build, made):
    result = lnp_report(build, "--format", "json", made.path)
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    written = made.path.read_text().splitlines()
    assert len(lines) == len(written) == len(made.records)
    for line, audit_line, record in zip(lines, written, made.records):
        pairs = json.loads(line, object_pairs_hook=list)
        assert [key for key, _ in pairs] == RECORD_KEYS, line
        assert dict(pairs) == record, line  # every field, in the order of the file
        assert line == audit_line  # and as lnp-run wrote it
    records = [json.loads(line) for line in lines]
    denied = [r for r in records if r["decision"] == "deny"]
    assert {(r["op"], r["because"]) for r in denied} == {("connect", "run-option"), ("resolve", "run-option")}
    assert all(r["pid"] > 0 and r["exe"] == r["program"] for r in records)
    # What a script does with it.
    assert [r for r in records if r["decision"] == "deny"] == [r for r in made.records if r["decision"] == "deny"]
    # --json, as the other commands spell it, is the same.
    assert lnp_report(build, "--json", made.path).stdout == result.stdout
    assert lnp_report(build, "--json", "--format", "json", made.path).stdout == result.stdout
    both = lnp_report(build, "--json", "--format", "table", made.path)
    assert (both.returncode, both.stdout) == (64, "")
    assert "--json is --format json; it cannot go with --format table" in both.stderr


def test_json_takes_since_and_program_as_the_other_formats_do(build, made):
    def records(*options):
        result = lnp_report(build, "--json", *options, made.path)
        assert (result.returncode, result.stderr) == (0, "")
        return [json.loads(line) for line in result.stdout.splitlines()]

    later = [r for r in made.records if r["time"] >= made.boundary]
    assert 0 < len(later) < len(made.records)
    assert records("--since", made.boundary) == later
    assert records("--program", "probe-b") == [r for r in made.records if r["program"] == made.other]
    assert records("--program", made.probe, "--since", made.boundary) == [r for r in later if r["program"] == made.probe]
    assert records("--since", "2999-01-01") == []


def test_json_names_a_malformed_line_as_the_other_formats_do(build, made, workdir):
    lines = made.path.read_text().splitlines()
    broken = workdir / "report-broken-json.jsonl"
    missing = json.dumps({k: v for k, v in made.records[0].items() if k != "program"})
    broken.write_text("\n".join(lines[:3] + ["this is not json", "", missing] + lines[3:]) + "\n")
    result = lnp_report(build, "--json", broken)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"lnp: {broken}:4: not JSON", f'lnp: {broken}:6: missing field "program"']
    assert result.stdout == lnp_report(build, "--json", made.path).stdout
    assert lnp_report(build, broken).stderr == result.stderr


def test_json_of_hostile_program_names_is_valid_json(build, lan, fixtures, workdir):
    """A program whose path holds a tab, quotes, a backslash and terminal escapes, and an
    executable whose path holds a newline and bytes that are not UTF-8 (a shell makes it, as
    lnp-run's arguments must be UTF-8): their records come out as one line of valid JSON each,
    with no control character left, saying the paths as the audit does."""
    directory = workdir / "report-hostile"
    directory.mkdir()
    hostile = directory / 'tab\t "q" \\ \x1b[2J\x7f \x85 end'
    shutil.copy(fixtures.probe, hostile)
    not_utf8 = os.fsencode(directory) + b"/new\nline \xff\xfe"
    shutil.copy(fixtures.probe, not_utf8)
    path = workdir / "report-hostile.jsonl"
    made_there = f"exec \"$(printf '{directory}/new\\nline \\377\\376')\" \"$@\""
    for command in ([hostile], ["sh", "-c", made_there, "sh"]):
        # bytes, not text: what the run says about a path need not be UTF-8
        ran = subprocess.run(["ip", "netns", "exec", lan.client_ns, build.lnp_run, "--deny", "--audit", path, "--",
                              *command, "connect", "tcp", "10.77.0.2", "8080"], capture_output=True, timeout=60)
        assert ran.returncode == 0, ran.stderr
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert [(r["program"], r["exe"], r["decision"]) for r in records] == [
        (str(hostile), str(hostile), "deny"), ("/usr/bin/sh", not_utf8.decode(errors="replace"), "deny")]

    result = subprocess.run([build.lnp, "report", "--json", path], capture_output=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, b"")
    lines = result.stdout.split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3
    for line, record in zip(lines, records):
        assert not any(byte < 0x20 or byte == 0x7f for byte in line), line
        assert b"\xc2\x85" not in line  # a C1 control, escaped too
        assert json.loads(line.decode("utf-8")) == record


# The system log's form of the records (`--audit syslog`): read as they are, among other
# programs' lines.

OTHERS = ["Nov 21 05:09:20 host systemd[1]: Starting Daily apt upgrade and clean activities...",
          "Nov 21 05:09:21 host kernel: [  12.345678] c0: link becomes ready",
          'Nov 21 05:09:21 host other[77]: @cee: {"msg":"another program\'s structured message"}',
          "Nov 21 05:09:21 host sshd[78]: user lnp: accepted"]


def log_forms(made):
    """The audit's records as each logger keeps them: the datagram lnp-run sends (a capture of
    /dev/log), rsyslog's and syslog-ng's files, journalctl -o short-iso, journalctl -t lnp -o cat."""
    lines = made.path.read_text().splitlines()
    pids = [record["pid"] for record in made.records]
    return {
        "datagram": [f"<{12 if r['decision'] == 'deny' else 13}>Nov 21 05:09:22 lnp[{p}]: @cee: {line}"
                     for r, p, line in zip(made.records, pids, lines)],
        "rsyslog": [OTHERS[n % len(OTHERS)] + "\n" + f"Nov 21 05:09:22 host lnp[{p}]: @cee: {line}"
                    for n, (p, line) in enumerate(zip(pids, lines))],
        "short-iso": OTHERS + [f"2026-11-21T05:09:22+0000 host lnp[{p}]: @cee: {line}" for p, line in zip(pids, lines)],
        "cat": [f"@cee: {line}" for line in lines],
    }


def test_json_reads_the_same_records_from_the_system_log(build, made, workdir):
    expected = lnp_report(build, "--json", made.path).stdout
    table = lnp_report(build, made.path).stdout
    for form, lines in log_forms(made).items():
        log = workdir / f"report-{form}.log"
        log.write_text("\n".join(lines) + "\n")
        result = lnp_report(build, "--json", log)
        assert (result.returncode, result.stderr) == (0, ""), form
        assert result.stdout == expected, form
        assert lnp_report(build, log).stdout == table, form
        assert lnp_report(build, "--json", input=log.read_text()).stdout == expected, form


def test_a_log_names_lnps_lines_that_hold_no_record_and_only_those(build, made, workdir):
    lines = made.path.read_text().splitlines()
    log = workdir / "report-broken.log"
    cut = "Nov 21 05:09:22 host lnp[42]: @cee: " + lines[1][:60]  # a logger's limit cut it
    log.write_text("\n".join(OTHERS + [f"Nov 21 05:09:22 host lnp[42]: @cee: {lines[0]}", cut]
                             + [f"Nov 21 05:09:22 host lnp[42]: @cee: {line}" for line in lines[1:]]) + "\n")
    result = lnp_report(build, "--json", log)
    assert result.returncode == 1
    assert result.stderr == f"lnp: {log}:{len(OTHERS) + 2}: not JSON\n"
    assert result.stdout == lnp_report(build, "--json", made.path).stdout

    quiet = workdir / "report-quiet.log"
    quiet.write_text("\n".join(OTHERS) + "\n")
    result = lnp_report(build, quiet)
    assert (result.returncode, result.stdout) == (0, "no operations to report\n")
    assert result.stderr == (f"lnp: {quiet}: no records: none of its lines is an audit record or lnp's in a system "
                             "log (lnp[PID]: @cee: {…})\n")


def audit_record(program, address, second, decision="allow"):
    """A line as lnp-run writes one: a connect of `program` to `address`, `second`s after 10:00."""
    return json.dumps({
        "time": f"2026-11-21T10:{second // 60 % 60:02d}:{second % 60:02d}.000000Z", "pid": 42, "program": program,
        "exe": program, "op": "connect", "fd": 3, "transport": "tcp", "address": address, "port": 8080, "host": None,
        "domains": [], "reason": "on-link 10.77.0.0/24 via c0", "decision": decision, "because": "remembered",
        "attribution": "app", "local": True, "by": "preload"}, separators=(",", ":")) + "\n"


def test_more_files_than_may_be_open_at_once_are_all_read(build, workdir):
    """Each file is open only while it is read (and, for the page, read again): 1,100 files
    under `ulimit -n 1024` are all reported."""
    directory = workdir / "report-many-files"
    directory.mkdir()
    files = []
    for n in range(1100):
        path = directory / f"audit-{n}.jsonl"
        path.write_text(audit_record(f"/opt/p{n % 7}", f"10.77.{n // 250}.{n % 250 + 1}", n % 3600))
        files.append(str(path))

    def limited():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    for format in ("ndjson", "html"):
        result = subprocess.run([build.lnp, "report", "--format", format, *files], capture_output=True, text=True,
                                preexec_fn=limited, env=dict(os.environ, TZ="UTC"), timeout=120)
        assert (result.returncode, result.stderr) == (0, ""), result.stderr[:300]
        if format == "ndjson":
            assert sum(record["hits"] for record in json_lines(result.stdout)) == 1100
        else:
            assert result.stdout.count("<section class=\"program\"") == 7
            assert "Operations over time" in result.stdout


def piped_page(build, text, env, command=()):
    """`lnp report --format html -` with `text` on a pipe, run by `command` if given."""
    return subprocess.run([*command, build.lnp, "report", "--format", "html", "-"], input=text, capture_output=True,
                          text=True, env=dict(os.environ, TZ="UTC", **env), timeout=120)


def test_a_pipe_is_copied_to_tmp_when_tmpdir_cannot_be_written(build, workdir):
    text = "".join(audit_record("/opt/piped", "10.77.0.9", n) for n in range(50))
    result = piped_page(build, text, {"TMPDIR": str(workdir / "no-such-directory")})
    assert (result.returncode, result.stderr) == (0, "")
    assert "Operations over time" in result.stdout and "aria-label=\"Timeline of 50 operations\"" in result.stdout
    assert "second" not in result.stdout


def test_a_pipe_that_cannot_be_copied_gives_no_timeline_and_says_so(build, workdir):
    """With neither $TMPDIR nor /tmp writable (read-only here, in a mount namespace of the
    report's own), standard input cannot be read twice: its programs get no timeline, rather
    than an empty one, and stderr says so in a line."""
    require(os.geteuid() == 0 and shutil.which("unshare") is not None, "a mount namespace needs root and unshare")
    text = "".join(audit_record("/opt/piped", "10.77.0.9", n) for n in range(50))
    read_only = ["unshare", "--mount", "sh", "-ec", 'mount --bind /tmp /tmp; mount -o remount,bind,ro /tmp; '
                 'mount --bind "$TMPDIR" "$TMPDIR"; mount -o remount,bind,ro "$TMPDIR"; exec "$@"', "sh"]
    result = piped_page(build, text, {"TMPDIR": str(workdir)}, command=read_only)
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"lnp: <stdin>: [^\n]*Read-only file system[^\n]*timeline[^\n]*\n", result.stderr), result.stderr
    page = result.stdout
    assert "<h2>/opt/piped</h2>" in page and "Destinations by hits" in page
    assert "Operations over time" not in page and "class=\"chart timeline\"" not in page
    assert "No timeline for the programs read from &lt;stdin&gt;: " in page


# The HTML page, in headless Chromium. Chromium runs in a network namespace of its own with
# nothing in it (`unshare --net`): whatever the page or the browser tried, no packet could leave.

WINDOW = (1280, 1600)
CHROMIUM = ["unshare", "--net", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
            f"--window-size={WINDOW[0]},{WINDOW[1]}", "--virtual-time-budget=3000"]


def chromium(page, workdir):
    """Opens `page` in a window of WINDOW's size; returns the DOM after its scripts ran, and the
    console messages."""
    profile = tempfile.mkdtemp(prefix="chromium-", dir=workdir)
    result = run([*CHROMIUM, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--dump-dom",
                  page.as_uri()], timeout=180)
    assert "<body" in result.stdout, result.stderr
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    body = dict(re.findall(r'([\w-]+)="([^"]*)"', re.search(r"<body([^>]*)>", result.stdout).group(1)))
    return result.stdout, body, console


@pytest.fixture(scope="module")
def page(build, made, workdir):
    require(shutil.which("chromium") is not None, "chromium is not installed")
    require(shutil.which("unshare") is not None, "unshare is not installed")
    result = lnp_report(build, "--format", "html", made.path)
    assert result.returncode == 0, result.stderr
    path = workdir / "report.html"
    path.write_text(result.stdout)
    return path


def test_html_renders_without_errors(page, workdir, made):
    dom, body, console = chromium(page, workdir)
    assert console == []
    assert body.get("data-rendered") == "ok"
    assert body.get("data-charts") == "4"  # a timeline and a bar chart per program, each laid out
    assert "data-errors" not in body
    # Paths from the records are text, shown as they are: no element came from them.
    for program in (made.probe, made.other):
        assert f"<h2>{html.escape(program, quote=False)}</h2>" in dom
    assert "<i>odd" not in dom


def test_html_check_catches_errors_and_fetches(page, workdir):
    """The check above can fail: a script error and a fetch, added to a copy, are both caught."""
    text = page.read_text()
    nonce = re.search(r"'nonce-([A-Za-z0-9]+)'", text).group(1)
    broken = workdir / "report-broken.html"
    broken.write_text(text.replace("<h1>", f'<script nonce="{nonce}">undefinedFunction();</script>'
                                           '<img src="http://127.0.0.1:9/x.png"><h1>', 1))
    _, body, console = chromium(broken, workdir)
    assert any("Uncaught ReferenceError: undefinedFunction is not defined" in line for line in console)
    assert any("Content Security Policy" in line and "127.0.0.1:9" in line for line in console)
    assert "undefinedFunction" in body.get("data-errors", "")


def test_html_is_self_contained(page):
    text = page.read_text()
    assert "http://" not in text and "https://" not in text
    assert not re.search(r"\s(src|srcset|action|poster|data)=", text)
    # Links only to the page's own sections (from the overview).
    assert re.findall(r'\shref="([^"]*)"', text) == ["#program-0", "#program-1"]
    assert "@import" not in text and not re.search(r"url\((?!#)", text)
    assert re.search(r"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';", text)
    assert text.count("<script") == 2 and text.count("<script nonce=") == 2


# The page as a person sees it: screenshots in headless Chromium (in a network namespace of its
# own, as above), checked at the top of the page for the overview: there, not blank, with the
# colours of allowed and denied operations; the page as wide as the window, and no taller than
# its audit needs. LNP_TEST_SCREENSHOTS=DIR keeps the screenshots there, to look at.

ALLOWED_BLUE = (0x2B, 0x6C, 0xB0)
DENIED_RED = (0xC5, 0x30, 0x30)


def measured(page, workdir):
    """A copy of `page` with one script more (it carries the page's nonce) that writes on the body
    where the overview is: `data-overview="left,top,right,bottom"`."""
    text = page.read_text()
    nonce = re.search(r"'nonce-([A-Za-z0-9]+)'", text).group(1)
    script = (f'<script nonce="{nonce}">(function(){{var r=document.querySelector("section.overview")'
              '.getBoundingClientRect();document.body.dataset.overview=[r.left,r.top,r.right,r.bottom]'
              '.map(Math.round).join(",");})();</script>')
    copy = page.with_name(page.stem + "-measured.html")
    copy.write_text(text.replace("</body>", script + "</body>", 1))
    return copy


def screenshot(page, workdir):
    """The top of `page` in a window of WINDOW's size, as a Pillow image."""
    require(importlib.util.find_spec("PIL") is not None, "Pillow is not installed (scripts/test installs it)")
    from PIL import Image
    profile = tempfile.mkdtemp(prefix="chromium-", dir=workdir)
    shot = page.with_suffix(".png")
    # Every compositor stage before the picture is taken: a busy machine otherwise gave pictures
    # with parts of the page not yet painted.
    result = run([*CHROMIUM, f"--user-data-dir={profile}", "--run-all-compositor-stages-before-draw",
                  f"--screenshot={shot}", page.as_uri()], timeout=180)
    assert shot.exists(), result.stderr
    keep = os.environ.get("LNP_TEST_SCREENSHOTS")
    if keep:
        pathlib.Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, pathlib.Path(keep) / shot.name)
    return Image.open(shot).convert("RGB")


def near(colour, wanted, within=40):
    return sum((a - b) ** 2 for a, b in zip(colour, wanted)) <= within ** 2


def denied_colour(colour):
    """The red of denied bars' lines and outlines, or the pink between the lines (and not the
    light grey of a table's rules)."""
    red, green, blue = colour
    return near(colour, DENIED_RED) or (red > 240 and 20 < red - green < 70 and 20 < red - blue < 70
                                        and abs(green - blue) < 12)


def check_overview(page, workdir, denied=True):
    """Renders `page` and checks its overview on a screenshot; returns the body's attributes."""
    copy = measured(page, workdir)
    _, body, console = chromium(copy, workdir)
    assert [line for line in console if "source: chrome://" not in line] == []
    assert body.get("data-rendered") == "ok" and "data-errors" not in body
    assert int(body["data-width"]) <= WINDOW[0], "the page is wider than the window"
    left, top, right, bottom = map(int, body["data-overview"].split(","))
    assert top < 400, "the page opens with its overview"
    image = screenshot(copy, workdir)
    assert image.size == WINDOW
    region = image.crop((left, top, min(right, image.width), min(bottom, image.height)))
    colours = region.getcolors(maxcolors=region.width * region.height)
    total = sum(count for count, _ in colours)
    ink = sum(count for count, colour in colours if colour != (255, 255, 255))
    assert ink > total * 0.02, f"the overview is blank: {ink} of {total} pixels drawn"
    assert sum(count for count, colour in colours if near(colour, ALLOWED_BLUE)) >= 50, "no allowed bars"
    reds = sum(count for count, colour in colours if denied_colour(colour))
    assert (reds >= 20) == denied, f"{reds} pixels of denied bars"
    return body


def timeline_ticks(dom):
    """Each timeline's tick labels, in order."""
    return [re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', svg)
            for svg in re.findall(r'<svg class="chart timeline".*?</svg>', dom, re.S)]


def test_the_page_opens_with_an_overview(page, workdir, made):
    body = check_overview(page, workdir)
    assert int(body["data-height"]) <= 2400, "two programs need no more than a screen or two"
    dom, _, _ = chromium(page, workdir)
    # The title: this machine's name (the records have none) and the records' span, to the
    # second for runs of seconds.
    times = sorted(datetime.datetime.strptime(r["time"], "%Y-%m-%dT%H:%M:%S.%f%z") for r in made.records)
    first, last = times[0], times[-1]
    span = f"{first.day} {first:%b %Y %H:%M:%S}–{last:%H:%M:%S} UTC"
    assert f"<title>lnp report — {html.escape(socket.gethostname())}, {span}</title>" in dom
    # Why the probe was denied: lnp-run --deny.
    assert '<p class="why">Why denied: lnp-run --deny: ' in dom
    assert "<td>lnp-run --deny</td>" in dom and '<td class="word">run-option</td>' in dom
    # Its run of a few seconds is labelled in parts of seconds, each label once.
    for ticks in timeline_ticks(dom):
        assert len(ticks) == len(set(ticks)) >= 1, ticks
    assert any(re.fullmatch(r"\d\d:\d\d:\d\d\.\d", tick) for ticks in timeline_ticks(dom) for tick in ticks)


def hostile_audit(path):
    """Records made to defeat the page: markup and control characters in every field a record
    carries, scoped and long IPv6 addresses, long names, causes no lnp writes, and more
    programs than the page gives sections to; a run of seconds."""
    def record(second, program, address="10.77.0.2", port=8080, host=None, transport="tcp", decision="allow",
               because="remembered", reason="on-link 10.77.0.0/24 via c0"):
        return json.dumps({
            "time": f"2026-11-21T07:08:{second:09.6f}Z", "pid": 42, "program": program, "exe": program,
            "op": "connect" if transport == "tcp" else "sendto", "fd": 3, "transport": transport,
            "address": address, "port": port, "host": host, "domains": [], "reason": reason,
            "decision": decision, "because": because, "attribution": "app", "local": True}) + "\n"

    scoped = "/opt/scoped-v6-tool"
    evil = "/tmp/\u202e<script>alert(1)</script>/\x1b[31m" + "very-long-directory-name/" * 40 + "evil & 'tool'"
    lines = []
    for n in range(30):
        lines.append(record(n * 0.1, scoped, "fe80::1%eth0", 5353, transport="udp", decision="deny" if n % 3 else "allow",
                            because="no-terminal" if n % 3 else "answered", reason="link-local via eth0"))
        lines.append(record(n * 0.1 + 0.05, scoped, "2001:db8:1234:5678:9abc:def0:1234:5678", 65535, transport="udplite"))
        lines.append(record(n * 0.1 + 0.07, scoped, "fe80::aaaa:bbbb:cccc:dddd%wlp0s20f3abcdef", 8009, decision="deny",
                            because="not-confirmed", reason="link-local via wlp0s20f3abcdef"))
        lines.append(record(n * 0.1 + 0.08, scoped, "fd00:1234:5678:9abc:def0:1234:5678:9abc", 443,
                            host="a-very-long-printer-name-in-the-office-third-floor.local", decision="deny",
                            because="asking"))
    for n in range(20):
        lines.append(record(n, evil, host="<img src=x onerror=alert(1)>.local", decision="deny",
                            because="<b>made-up</b>", reason="<i>reason</i>"))
        lines.append(record(n + 0.5, evil, "10.77.0.3", decision="deny", because=None if n % 2 else "store-unreadable"))
    for p in range(60):
        lines.append(record(30 + p * 0.2, f"/usr/local/bin/tool-{p:02d}", f"10.77.1.{p}",
                            decision="deny" if p % 4 == 0 else "allow",
                            because="administrator" if p % 4 == 0 else "run-option"))
    path.write_text("".join(sorted(lines, key=lambda line: json.loads(line)["time"])))
    return path


def test_a_hostile_audits_page_stays_readable(build, workdir):
    require(shutil.which("chromium") is not None, "chromium is not installed")
    audit = hostile_audit(workdir / "report-hostile.jsonl")
    result = lnp_report(build, "--format", "html", audit)
    assert result.returncode == 0, result.stderr
    page = workdir / "report-hostile.html"
    page.write_text(result.stdout)
    body = check_overview(page, workdir)
    assert int(body["data-height"]) <= 40 * 1500
    dom, _, _ = chromium(page, workdir)
    # Nothing from the records became an element.
    assert "<script>alert" not in dom and "<img src=x" not in dom and "<b>made-up" not in dom and "<i>reason" not in dom
    assert "&lt;b&gt;made-up&lt;/b&gt;" in dom and "\\u{202e}" in dom and "\\u{1b}" in dom
    # Scoped and long IPv6 labels are whole on the charts (after the tooltip, the label drawn).
    for label in ("[fe80::1%eth0]:5353 udp", "[fe80::aaaa:bbbb:cccc:dddd%wlp0s20f3abcdef]:8009 tcp",
                  "[2001:db8:1234:5678:9abc:def0:1234:5678]:65535 udplite"):
        assert dom.count(f"</title>{label}</text>") == 2, label
    # A longer one is cut in its middle: both ends stay.
    assert "</title>a-very-long-printer-name-in…ce-third-floor.local:443 tcp</text>" in dom
    # A run of three seconds: ticks at whole seconds, each label once.
    scoped = dom[dom.index("<h2>/opt/scoped-v6-tool</h2>"):]
    assert timeline_ticks(scoped)[0] == ["07:08:00", "07:08:01", "07:08:02"]
    for ticks in timeline_ticks(dom):
        assert len(ticks) == len(set(ticks)), ticks


def test_all_activity_is_reported_as_not_local(build, lan, fixtures, workdir):
    """An --audit-all run: the connection to a host off the local network is in the table as
    not local, and in Apple's records by its name."""
    path = workdir / "report-all-activity.jsonl"
    script = (f"{fixtures.probe} resolve-connect public.example 8080; "
              f"{fixtures.probe} connect tcp 10.77.0.2 8080")
    lan.lnp_run(["--deny", "--audit", str(path), "--audit-all"], ["sh", "-c", script])
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["op"], r["local"]) for r in records] == [("connect", False), ("connect", True)]

    result = lnp_report(build, "--format", "ndjson", path)
    assert result.returncode == 0, result.stderr
    groups = ndjson_groups(result.stdout)
    assert groups == expected_activity(records)
    assert list(groups) == [("/usr/bin/sh", "public.example", "AppInitiated")], "the denied local connect is left out"

    table = table_sections(lnp_report(build, path).stdout)
    [(heading, rows)] = table.items()
    assert heading.startswith("/usr/bin/sh: 1 local-network operation (0 allowed, 1 denied)")
    by_destination = {row[0]: row for row in rows[1:]}
    assert by_destination["public.example:8080 (203.0.113.5)"][1:5] == ["tcp connect", "not local", "1", "0"]
    assert by_destination["10.77.0.2:8080"][1:5] == ["tcp connect", "local", "0", "1"]


# A large audit file, made by scripts/audit-sample (the benchmark's input, smaller): every
# record is counted, and the HTML page stays within 2 MB whatever it holds.

LARGE_LINES = 100_000


@pytest.fixture(scope="module")
def large_audit(workdir):
    return audit_sample(workdir / "report-large.jsonl", LARGE_LINES)


def audit_sample(path, lines, *options):
    sample = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "audit-sample"
    with path.open("w") as out:
        subprocess.run([sys.executable, str(sample), str(lines), *options], stdout=out, check=True, timeout=300)
    return path


def peak_memory_kb(command, stdin=None):
    """The largest resident size of `command`, in kB: measured in a Python of its own, whose
    only child it is (RUSAGE_CHILDREN covers every child a process has waited for)."""
    measure = ("import resource, subprocess, sys\n"
               "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
               "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    result = subprocess.run([sys.executable, "-c", measure, *map(str, command)], capture_output=True, text=True,
                            stdin=stdin, check=True, timeout=300, env=dict(os.environ, TZ="UTC"))
    code, kilobytes = map(int, result.stdout.split())
    return code, kilobytes


# Memory follows the programs and destinations, not the records: two audits of the same
# programs and destinations over the same hours, one 15 times the other, take about the same.
# (8 programs and 20 destinations: the smaller audit already has nearly every pair; the
# larger has operations in many more of the timelines' pixel columns.)
MEMORY_LINES = (20_000, 300_000)
MEMORY_GROWTH_KB = 3_000


@pytest.fixture(scope="module")
def sized_audits(workdir):
    return [audit_sample(workdir / f"report-{lines}.jsonl", lines, "--programs", "8", "--destinations", "20")
            for lines in MEMORY_LINES]


@pytest.mark.parametrize("format", ["table", "json", "ndjson", "html"])
def test_memory_does_not_grow_with_the_records(build, sized_audits, format):
    (small_code, small), (large_code, large) = (
        peak_memory_kb([build.lnp, "report", "--format", format, audit]) for audit in sized_audits)
    assert small_code == large_code == 0
    assert large - small < MEMORY_GROWTH_KB, f"{small} kB, then {large} kB for {MEMORY_LINES[1]} records"


def test_memory_does_not_grow_with_the_records_of_a_pipe(build, sized_audits):
    measured = []
    for audit in sized_audits:
        with audit.open() as text:
            pipe = subprocess.Popen(["cat"], stdin=text, stdout=subprocess.PIPE)
            measured.append(peak_memory_kb([build.lnp, "report", "--format", "html", "-"], stdin=pipe.stdout))
            pipe.stdout.close()
            assert pipe.wait() == 0
    (small_code, small), (large_code, large) = measured
    assert small_code == large_code == 0
    assert large - small < MEMORY_GROWTH_KB, f"{small} kB, then {large} kB for {MEMORY_LINES[1]} records"


def test_a_large_audit_counts_every_record(build, large_audit):
    allowed = collections.Counter()
    for line in large_audit.open():
        record = json.loads(line)
        if record["decision"] == "allow":
            allowed[record["program"]] += 1
    result = lnp_report(build, "--format", "ndjson", large_audit)
    assert result.returncode == 0, result.stderr
    hits = collections.Counter()
    for (program, _, _), (count, _, _) in ndjson_groups(result.stdout).items():
        hits[program] += count
    assert hits == allowed


def test_a_large_audit_comes_out_as_json_line_for_line(build, large_audit):
    """Lines in lnp-run's form (scripts/audit-sample writes them so) come out as they went in;
    and read as the system log's lines, the same."""
    text = large_audit.read_text()
    result = lnp_report(build, "--json", large_audit)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == text
    logged = "".join(f"Nov 21 05:09:22 host lnp[42]: @cee: {line}\n" for line in text.splitlines())
    assert lnp_report(build, "--json", input=logged).stdout == text


def test_the_page_of_a_large_audit_is_small_and_names_the_busiest(build, large_audit, workdir):
    result = lnp_report(build, "--format", "html", large_audit)
    assert result.returncode == 0, result.stderr
    page = result.stdout
    assert len(page.encode()) <= 2_000_000
    # The busiest destination of the busiest program, by the records themselves.
    destinations = collections.Counter()
    for line in large_audit.open():
        record = json.loads(line)
        if record["program"] == "/usr/bin/curl":
            domain = record["host"] if record["host"] is not None else record["address"]
            destinations[(domain, record["port"], record["transport"], record["local"])] += 1
    (domain, port, _, _), _ = destinations.most_common(1)[0]
    label = domain if not port else (f"[{domain}]" if ":" in domain else domain) + f":{port}"
    section = page[page.index("<h2>/usr/bin/curl</h2>"):]
    section = section[:section.index("</section>")]
    # The table may wrap a destination between its parts (<wbr>).
    section = section.replace("<wbr>", "")
    assert f'<td class="destination">{html.escape(label)}</td>' in section
    # The table names 24 of them, and counts the others together.
    assert re.search(rf'<tr[^>]*><td class="destination">{len(destinations) - 24} other destinations</td>', section)

    # Read from a pipe, the page is the same (but for its nonce).
    piped = lnp_report(build, "--format", "html", "-", input=large_audit.read_text())
    assert piped.returncode == 0, piped.stderr

    def without_nonce(text):
        return re.sub(r"nonce(-|=\")[a-z0-9]+", "nonce", text)

    assert without_nonce(piped.stdout) == without_nonce(page)


def test_the_page_of_a_large_audit_renders(build, large_audit, workdir):
    require(shutil.which("chromium") is not None, "chromium is not installed")
    require(shutil.which("unshare") is not None, "unshare is not installed")
    path = workdir / "report-large.html"
    path.write_text(lnp_report(build, "--format", "html", large_audit).stdout)
    _, body, console = chromium(path, workdir)
    # Chromium's own pages may log too ("Slow network is detected", from chrome://resources).
    assert [line for line in console if "source: chrome://" not in line] == []
    assert body.get("data-rendered") == "ok"
    assert "data-errors" not in body
    # The overview, as a person sees it; 32 programs, each a section of at most 2,500 pixels.
    body = check_overview(path, workdir)
    assert int(body["data-height"]) <= 4000 + 32 * 2500
