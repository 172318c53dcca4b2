"""lnp-run's own contract: program lookup, exit statuses, where it finds the preload, and the
environment it hands on."""

import os
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, json_lines, run


def lnp_run(build, *arguments, env=None, cwd=None):
    return run([str(build.lnp_run), *[str(a) for a in arguments]], env=env) if cwd is None else \
        run(["sh", "-c", 'cd "$0" && exec "$@"', str(cwd), str(build.lnp_run), *[str(a) for a in arguments]], env=env)


def test_exit_status_is_the_programs(build):
    assert lnp_run(build, "--deny", "--", "sh", "-c", "exit 7").returncode == 7
    assert lnp_run(build, "--allow", "--", "true").returncode == 0


def test_program_is_looked_up_in_path(build, workdir):
    bin_dir = workdir / "path-bin"
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / "lnp-test-tool"
    tool.write_text("#!/bin/sh\necho \"ran $0\"\n")
    tool.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:/usr/bin:/bin")
    result = lnp_run(build, "--deny", "--", "lnp-test-tool", env=env)
    assert result.stdout.strip() == f"ran {tool}"


@pytest.mark.parametrize("arguments,status,message", [
    (["--deny", "--", "no-such-program-anywhere"], 127, "no-such-program-anywhere: command not found"),
    (["--deny", "--", "/nonexistent/tool"], 127, "/nonexistent/tool: No such file or directory"),
    (["--prompt-timeout", "0", "--", "true"], 125, "--prompt-timeout takes 1 to 86400 seconds, not 0"),
    (["--prompt-timeout", "-1", "--", "true"], 125, "--prompt-timeout takes 1 to 86400 seconds, not -1"),
    (["--prompt-timeout=-5", "--", "true"], 125, "--prompt-timeout takes 1 to 86400 seconds, not -5"),
    (["--errno"], 125, "missing value for '--errno <NAME>'; see 'lnp-run --help'"),
    (["--deny"], 125, "no PROGRAM to run"),
    (["--deny", "--errno", "EBOGUS", "--", "true"], 125, "unknown errno 'EBOGUS'"),
    (["--deny", "--attribution", "everyone", "--", "true"], 125, "everyone"),
    (["--bogus", "--", "true"], 125, "unknown option '--bogus'"),
    (["---completion", "--", "x"], 125, "unknown option '---completion'"),
    (["--allow", "--deny", "--", "true"], 125, "--allow"),
])
def test_lnp_runs_own_errors(build, arguments, status, message):
    result = lnp_run(build, *arguments)
    assert result.returncode == status
    assert message in result.stderr
    assert result.stderr.startswith("lnp-run: ") and result.stderr.count("\n") == 1, result.stderr


def test_a_file_that_is_not_executable_exits_126(build, workdir):
    plain = workdir / "plain-file"
    plain.write_text("not a program\n")
    plain.chmod(0o644)
    result = lnp_run(build, "--deny", "--", plain)
    assert (result.returncode, result.stderr) == (126, f"lnp-run: {plain}: Permission denied\n")
    bad = workdir / "bad-format"
    bad.write_bytes(b"\x00\x01garbage")
    bad.chmod(0o755)
    result = lnp_run(build, "--deny", "--", bad)
    assert (result.returncode, result.stderr) == (126, f"lnp-run: cannot execute {bad}: Exec format error\n")


def test_a_program_path_is_judged_as_bash_judges_it(build, workdir):
    """A directory named by path, a directory or a plain file found in PATH, a missing path:
    lnp-run says what bash says, with bash's status."""
    layout = workdir / "judged"
    (layout / "dirs" / "tool").mkdir(parents=True, exist_ok=True)
    (layout / "data").mkdir(exist_ok=True)
    (layout / "data" / "plain").write_text("not a program\n")
    (layout / "data" / "plain").chmod(0o644)
    cases = [(str(layout / "dirs"), "tool"), (str(layout / "data"), "plain"),
             ("/usr/bin", str(layout / "dirs")), ("/usr/bin", str(layout / "missing"))]
    for path, name in cases:
        env = dict(os.environ, PATH=path)
        shell = subprocess.run(["/bin/bash", "-c", name], env=env, capture_output=True, text=True)
        ours = lnp_run(build, "--deny", "--", name, env=env)
        said = shell.stderr.strip().split(": ", 2)[-1]
        assert (ours.returncode, ours.stderr) == (shell.returncode, f"lnp-run: {said}\n"), (path, name, shell.stderr)


def test_help(build):
    result = lnp_run(build, "--help")
    assert result.returncode == 0
    for option in ["--allow", "--deny", "--errno", "--audit", "--attribution"]:
        assert option in result.stdout
    assert "USAGE: lnp-run [<options>] -- <PROGRAM> [<ARGS> ...]" in result.stdout, "as the README writes it"


def test_a_command_line_left_to_argumentparser_runs_under_lnp_run_itself(build):
    """lnp-run leaves the command lines it does not read by hand (here an option given twice)
    to lnp-run-arguments, which runs lnp-run again with them: the program's keeper is lnp-run,
    as nested runs and `lnp` expect, and the last value given counts, as ArgumentParser reads it."""
    result = lnp_run(build, "--deny", "--usage-description", "first", "--usage-description", "second", "--",
                     "sh", "-c", "readlink /proc/$PPID/exe; cat /proc/$PPID/cmdline | tr '\\0' ' '")
    assert result.returncode == 0, result.stderr
    keeper, command_line = result.stdout.splitlines()
    assert keeper == str(build.lnp_run.resolve())
    assert "--usage-description=second" in command_line.split(), command_line


def test_a_programs_arguments_stay_its_own_when_argumentparser_reads_the_command_line(build):
    """A command line the hand does not read (an option given twice) goes through
    ArgumentParser: what follows PROGRAM is still the program's, whatever it looks like; the
    hand reads it so, and ArgumentParser must too (it printed lnp-run's completion script and
    exited 0, the program never run)."""
    show = ["sh", "-c", 'echo "ran $*"', "sh", "--generate-completion-script", "bash"]
    assert lnp_run(build, "--deny", *show).stdout == "ran --generate-completion-script bash\n"
    result = lnp_run(build, "--deny", "--usage-description", "a", "--usage-description", "b", *show)
    assert result.stdout == "ran --generate-completion-script bash\n", result.stdout[:200]


def test_preload_is_first_in_ld_preload_once_and_others_kept(build):
    """The environment says which lnp-run to ask, and nothing else of lnp's: whatever an
    earlier run or a program left there is removed."""
    env = dict(os.environ, LD_PRELOAD=f"/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0:{build.liblnp}",
               LNP_AUDIT="/tmp/stale.jsonl", LNP_POLICY="allow,1,user", LNP_RUN="1")
    result = lnp_run(build, "--deny", "--", "sh", "-c", "echo $LD_PRELOAD; env | grep ^LNP_ | sort; echo $PPID", env=env)
    lines = result.stdout.splitlines()
    assert lines[0] == f"{build.liblnp.resolve()}:/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"
    # LNP_GADGET: where the preload maps the page whose calls the supervisor lets through.
    assert re.fullmatch(r"LNP_GADGET=[0-9a-f]+000", lines[1]), lines
    assert lines[2:] == [f"LNP_RUN={lines[3]}", lines[3]], "LNP_RUN names lnp-run, the program's parent"


def test_preload_is_found_beside_lnp_run_or_where_it_is_installed_never_in_the_current_directory(build, workdir):
    beside = workdir / "beside"
    installed = workdir / "installed"
    multiarch = workdir / "multiarch"  # as the Debian package installs it
    triplet = run(["gcc", "-print-multiarch"]).stdout.strip()
    bare = workdir / "bare"
    for directory in (beside, installed / "bin", installed / "lib" / "lnp", multiarch / "bin",
                      multiarch / "lib" / triplet / "lnp", bare):
        directory.mkdir(parents=True, exist_ok=True)
    shutil.copy2(build.lnp_run, beside / "lnp-run")
    shutil.copy2(build.liblnp, beside / "liblnp.so")
    shutil.copy2(build.lnp_run, installed / "bin" / "lnp-run")
    shutil.copy2(build.liblnp, installed / "lib" / "lnp" / "liblnp.so")
    shutil.copy2(build.lnp_run, multiarch / "bin" / "lnp-run")
    shutil.copy2(build.liblnp, multiarch / "lib" / triplet / "lnp" / "liblnp.so")
    shutil.copy2(build.lnp_run, bare / "lnp-run")
    shutil.copy2(build.liblnp, workdir / "liblnp.so")  # in the current directory only

    show = ["--deny", "--", "sh", "-c", "echo $LD_PRELOAD"]
    assert run([beside / "lnp-run", *show]).stdout.strip() == str(beside / "liblnp.so")
    assert run([installed / "bin" / "lnp-run", *show]).stdout.strip() == str(installed / "lib" / "lnp" / "liblnp.so")
    assert run([multiarch / "bin" / "lnp-run", *show]).stdout.strip() == str(multiarch / "lib" / triplet / "lnp" / "liblnp.so")
    missing = run(["sh", "-c", f'cd {workdir} && exec {bare / "lnp-run"} "$@"', "sh", *show])
    assert missing.returncode == 125
    assert f"cannot find liblnp.so beside lnp-run, in ../lib/lnp/ or in ../lib/{triplet}/lnp/" in missing.stderr


def test_options_reach_the_preload(lan, fixtures, audit):
    result = lan.lnp_run(["--deny", "--errno", "ETIMEDOUT", "--attribution", "user", "--audit", str(audit.path)],
                         [fixtures.probe, "connect", "tcp", "10.77.0.2", "8080"])
    assert json_lines(result.stdout)[0]["errno"] == "ETIMEDOUT"
    assert audit.records()[0]["attribution"] == "user"


def test_script_names_its_interpreter_when_that_cannot_be_observed(build, fixtures, workdir):
    script = workdir / "static-script"
    script.write_text(f"#!{fixtures.probe_static} connect\n")
    script.chmod(0o755)
    result = lnp_run(build, "--deny", "--preload-only", "--", script)
    assert f"cannot observe {script}: its interpreter {fixtures.probe_static}: static binary" in result.stderr
    # Supervised (the default), its calls are seen: nothing to say.
    assert "cannot observe" not in lnp_run(build, "--deny", "--", script).stderr


def test_go_program_is_named_and_runs(build, workdir):
    program = workdir / "golike"
    assert run(["gcc", "-o", program, ROOT / "Tests" / "fixtures" / "golike.c"]).returncode == 0
    result = lnp_run(build, "--deny", "--preload-only", "--", program)
    assert result.stdout == "golike ran\n"
    assert result.stderr == (f"lnp-run: warning: cannot observe {program}: Go program (it makes raw system calls, "
                             "past the C library); running it unobserved\n")
    supervised = lnp_run(build, "--deny", "--", program)
    assert (supervised.stdout, supervised.stderr) == ("golike ran\n", "")


def test_a_preload_path_ld_preload_cannot_carry_is_refused(build, workdir):
    directory = workdir / "with space"
    directory.mkdir()
    shutil.copy2(build.lnp_run, directory / "lnp-run")
    shutil.copy2(build.liblnp, directory / "liblnp.so")
    result = run([directory / "lnp-run", "--deny", "--", "touch", workdir / "ran-unobserved"])
    assert result.returncode == 125
    assert "LD_PRELOAD cannot carry a path with a space or a colon" in result.stderr
    assert not (workdir / "ran-unobserved").exists()


NOT_UTF8 = b"a\xffb\xc3"  # a byte that is never UTF-8, and a sequence cut short


@pytest.mark.parametrize("options", [["--allow"], ["--allow", "--usage-description", "a", "--usage-description", "b"]],
                         ids=["read-by-hand", "read-by-argumentparser"])
def test_the_programs_arguments_reach_it_byte_for_byte(build, options):
    """A wrapper passes argv on untouched: bytes that are not UTF-8 reach the program as they
    were given (Swift's CommandLine.arguments repairs them to U+FFFD), also on the path through
    lnp-run-arguments, which runs lnp-run again with the words."""
    command = [bytes(build.lnp_run)] + [o.encode() for o in options] + [b"--", b"printf", b"%s|%s|%s", NOT_UTF8,
                                                                       b"\xe2\x82", "é".encode()]
    result = subprocess.run(command, capture_output=True)
    assert (result.returncode, result.stderr) == (0, b"")
    assert result.stdout == NOT_UTF8 + b"|\xe2\x82|" + "é".encode()


def test_a_program_path_that_is_not_utf8_is_named_as_unsupported(build, workdir):
    """lnp-run names programs by their paths as text: one whose path is not UTF-8 is refused
    in one line that says so (not `command not found`, nor another file's run)."""
    tool = bytes(workdir) + b"/tool-" + NOT_UTF8
    with open(tool, "wb") as file:
        file.write(b"#!/bin/sh\necho ran\n")
    os.chmod(tool, 0o755)
    # A file named with the repaired bytes must not run in its place.
    repaired = workdir / ("tool-" + NOT_UTF8.decode(errors="replace"))
    repaired.write_text("#!/bin/sh\necho ran the wrong file\n")
    repaired.chmod(0o755)
    try:
        result = subprocess.run([bytes(build.lnp_run), b"--deny", b"--", tool], capture_output=True)
        assert (result.returncode, result.stdout) == (125, b"")
        assert result.stderr == (f"lnp-run: {workdir}/tool-a\\xffb\\xc3: a program whose path is not UTF-8 cannot be run "
                                 "under lnp-run; give it a UTF-8 name (a symbolic link will do)\n").encode()
    finally:
        os.unlink(tool)
        repaired.unlink()


def test_the_environment_reaches_the_program_byte_for_byte(build):
    """The program's environment as lnp-run was given it (lnp's own variables aside), bytes that
    are not UTF-8 too: a value, and a name."""
    env = {b"PATH": os.environb.get(b"PATH", b"/usr/bin:/bin"), b"VALUE": NOT_UTF8, b"NAME_" + NOT_UTF8: b"1"}
    result = subprocess.run([bytes(build.lnp_run), b"--allow", b"--", b"/usr/bin/env"], capture_output=True, env=env)
    assert (result.returncode, result.stderr) == (0, b"")
    entries = result.stdout.splitlines()
    assert b"VALUE=" + NOT_UTF8 in entries
    assert b"NAME_" + NOT_UTF8 + b"=1" in entries


@pytest.mark.parametrize("form", ["separate", "attached", "through lnp-run-arguments"])
def test_an_audit_path_that_is_not_utf8_is_not_another_file(build, workdir, form):
    """lnp-run reads its own options as text: `--audit` with a path that is not UTF-8 wrote the
    records to another file, named with U+FFFD for the bytes (a\\xffb.jsonl became a\\ufffdb.jsonl),
    and said nothing. The records go where they were sent, or lnp-run refuses."""
    given = bytes(workdir) + b"/audit-" + NOT_UTF8 + b".jsonl"
    repaired = workdir / ("audit-" + NOT_UTF8.decode(errors="replace") + ".jsonl")
    options = {"separate": [b"--audit-all", b"--audit", given], "attached": [b"--audit-all", b"--audit=" + given],
               "through lnp-run-arguments": [b"--audit-all", b"--audit", given]}[form]
    program = [b"true", b"---"] if form == "through lnp-run-arguments" else [b"true"]
    try:
        result = subprocess.run([bytes(build.lnp_run), b"--allow", *options, b"--", *program], capture_output=True)
        assert not repaired.exists(), f"the audit went to {repaired}: {result.stderr!r}"
        assert result.returncode == 125 or os.path.exists(given), result.stderr
    finally:
        for path in (given, bytes(repaired)):
            if os.path.exists(path):
                os.unlink(path)
