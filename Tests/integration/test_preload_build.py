"""What liblnp.so is made of: libc alone, the API alone exported, no allocation or lazy
initialisation reachable from the hooks. These guard the design notes' measured facts."""

import re
import subprocess

import pytest

from conftest import ROOT, run

EXPORTS = {
    "connect", "sendto", "sendmsg", "sendmmsg", "bind", "setsockopt",
    "getaddrinfo", "gethostbyname", "gethostbyname2", "gethostbyname_r", "gethostbyname2_r", "syscall",
    "ne_socket_set_attribution", "ne_socket_set_domains", "ne_socket_set_website_attribution",
}


@pytest.fixture(scope="module", params=["release", "debug"])
def liblnp(request, build):
    """The release build under test, and a debug build made here: the preload must be the
    same lean library whichever configuration a developer builds."""
    if request.param == "release":
        return build.liblnp
    result = run(["swift", "build", "--package-path", ROOT, "--product", "lnp"], timeout=1200)
    assert result.returncode == 0, result.stderr
    return ROOT / ".build" / "debug" / "liblnp.so"


def test_needs_libc_alone(liblnp):
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", run(["readelf", "-d", liblnp]).stdout)
    assert needed == ["libc.so.6"]


def test_exports_only_the_hooks_and_the_api(liblnp):
    symbols = run(["nm", "-D", "--defined-only", liblnp]).stdout.split()
    assert set(symbols[2::3]) == EXPORTS
    # Nothing else in the dynamic table at all, not even a local Swift symbol.
    table = run(["readelf", "--dyn-syms", "-W", liblnp]).stdout.splitlines()
    defined = {line.split()[-1].split("@")[0] for line in table
               if re.match(r"\s*\d+:", line) and " UND " not in line and len(line.split()) >= 8}
    assert defined == EXPORTS


def test_imports_only_glibcs_base_symbol_version(liblnp):
    """Each further version node costs every wrapped process at start (docs/benchmarks.md)."""
    versions = set(re.findall(r"@(GLIBC_[0-9.]+)", run(["nm", "-D", "--undefined-only", liblnp]).stdout))
    assert versions and versions <= {"GLIBC_2.2.5", "GLIBC_2.17"}  # the base version on x86_64 / aarch64


def test_nothing_calls_the_allocator_or_lazy_initialisation(liblnp):
    """Embedded Swift brings swift_allocObject, swift_slowAlloc and swift_once; the hooks must
    never reach them (no allocation or lock on the path). Only their own definitions may
    refer to the allocator."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(liblnp)], capture_output=True,
                             text=True, check=True).stdout
    allocating = {"swift_allocObject", "swift_slowAlloc", "swift_coroFrameAlloc", "swift_once", "malloc", "calloc",
                  "realloc", "posix_memalign", "free"}
    function = None
    offenders = []
    runtime_calls = 0  # proof that the scan sees calls at all
    for line in listing.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            function = header.group(1)
            continue
        call = re.search(r"\b(?:call|jmp)\s+[0-9a-f]+ <([^>@+]+)", line)
        # The runtime's own entry points (swift_*) and PLT stubs may refer to each other.
        if not call or call.group(1) not in allocating:
            continue
        if function.startswith(("swift_", "malloc@", "free@", "posix_memalign@")):
            runtime_calls += 1
        else:
            offenders.append(f"{function} -> {call.group(1)}")
    assert runtime_calls > 0, "the scan found not even the runtime's own allocator calls"
    assert offenders == []
