"""scripts/audit-sample, the input of the report's benchmark and memory tests: its records
must be ones lnp-run could have written, in time order."""

import collections
import datetime
import json
import pathlib
import subprocess
import sys

import pytest

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "audit-sample"


def sample(*arguments):
    return subprocess.run([sys.executable, str(SAMPLE), *map(str, arguments)], capture_output=True, text=True,
                          timeout=120)


def records(*arguments):
    result = sample(*arguments)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def instant(record):
    return datetime.datetime.strptime(record["time"], "%Y-%m-%dT%H:%M:%S.%f%z")


def test_joins_are_of_the_local_network_as_lnp_run_records_them():
    joins = [r for r in records(20_000) if r["op"] == "join"]
    assert joins, "the sample has multicast joins"
    assert all(r["local"] and r["address"].startswith("239.") and r["because"] != "not-local" for r in joins)


@pytest.mark.parametrize("hours", [6, 0.001])
def test_records_are_in_time_order(hours):
    """Even when records are less than a millisecond apart (5,000 in 3.6 s here)."""
    times = [instant(r) for r in records(5000, "--hours", hours)]
    assert times == sorted(times)
    assert times[0] >= datetime.datetime(2026, 11, 21, 10, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize("option", ["--programs", "--destinations"])
def test_a_count_of_none_is_refused_in_a_line(option):
    result = sample(100, option, 0)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and option in result.stderr, result.stderr


def test_causes_are_ones_lnp_run_could_write():
    """An allowed operation was allowed by a decision (not 'no-terminal'); most of a program's
    denials have one cause, as a program is mostly run one way."""
    sample_records = records(20_000)
    allowing = {"remembered", "run-option", "administrator", "answered", "not-local"}
    assert all(r["because"] in allowing for r in sample_records if r["decision"] == "allow")
    denials = collections.defaultdict(collections.Counter)
    for r in sample_records:
        if r["decision"] == "deny":
            denials[r["program"]][r["because"]] += 1
    busy = [causes for causes in denials.values() if sum(causes.values()) >= 100]
    assert busy and all(causes.most_common(1)[0][1] > sum(causes.values()) / 2 for causes in busy)
