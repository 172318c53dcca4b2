// swift-tools-version: 6.1
import PackageDescription

// The policy core is compiled twice from the same files (Sources/LNPCoreHost links to
// Sources/LNPCore): once in Embedded Swift for the preload, which must depend on libc alone,
// and once as an ordinary module for the tests and the command-line tools, because an
// ordinary module cannot import an Embedded one. See docs/design.md.
// Optimised in every configuration: unoptimised Embedded Swift allocates arrays the optimiser
// removes, which drags in the runtime's array metadata (and, with it, a Swift symbol in
// liblnp.so's dynamic table) and puts the allocator on the hooks' path.
let embeddedCore: [SwiftSetting] = [
    .enableExperimentalFeature("Embedded"),
    .unsafeFlags(["-O", "-wmo", "-enforce-exclusivity=unchecked", "-Xfrontend", "-disable-stack-protector"]),
]

// The preload's C: no stack protector, so that liblnp.so needs no glibc symbol version
// beyond the base one (each version the loader checks costs every process at start).
// No frame pointers either: the hooks are one jump into the core.
// SwiftPM appends -fno-omit-frame-pointer after a target's flags, so the choice goes
// straight to the compiler proper (-Xclang), where the last one given wins.
let preloadC: [CSetting] = [.unsafeFlags(["-fno-stack-protector", "-Xclang", "-mframe-pointer=none"])]

// The command-line tools carry the Swift runtime inside them: a process that loads it from
// shared libraries spends milliseconds linking them at every start (lnp-run starts with every
// program it runs; docs/benchmarks.md), and a package must not depend on the toolchain's path.
// The C++ runtime the Swift runtime needs is linked in too (CShim/link/libstdc++.so), and so
// is libgcc's unwinder (-static-libgcc): each shared library loaded costs every start.
let staticSwiftRuntime: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib", "-L", Context.packageDirectory + "/CShim/link", "-Xclang-linker", "-static-libgcc"])
]
// ArgumentParser's static FoundationEssentials needs its C shims, which its objects (compiled
// for the shared runtime) do not name.
let staticFoundationShims: [LinkerSetting] = [.linkedLibrary("_FoundationCShims"), .linkedLibrary("_FoundationCollections")]

let package = Package(
    name: "lnp",
    products: [
        // The preload. Product names must be unique in SwiftPM, and this one must be
        // `liblnp.so`, so the `lnp` command below is the product `bin/lnp`
        // (built at .build/<config>/bin/lnp).
        .library(name: "lnp", type: .dynamic, targets: ["LNPHooks"]),
        .executable(name: "lnp-run", targets: ["LNPRunMain"]),
        .executable(name: "lnp-run-arguments", targets: ["LNPRunArgumentsMain"]),
        .executable(name: "bin/lnp", targets: ["lnp"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // C: raw system calls, static storage and atomics for the core. No policy.
        .target(name: "LNPSys", path: "CShim/sys", cSettings: preloadC),
        // Swift: the policy core, Embedded, linked into the preload.
        .target(
            name: "LNPCore", dependencies: ["LNPSys"], path: "Sources/LNPCore",
            swiftSettings: embeddedCore),
        // C: the hooks and the public ne_socket.h API; the root of liblnp.so.
        .target(
            name: "LNPHooks", dependencies: ["LNPCore", "LNPSys"], path: "CShim/hooks",
            exclude: ["liblnp.map"],
            cSettings: preloadC,
            linkerSettings: [
                .unsafeFlags([
                    "-enable-experimental-feature", "Embedded",
                    "-Xlinker", "--version-script=CShim/hooks/liblnp.map",
                    // No C runtime start files: the loader runs .init_array itself, and
                    // crtbeginS.o's weak references cost every process a failed search of
                    // every library at start (docs/benchmarks.md).
                    "-Xclang-linker", "-nostartfiles",
                ])
            ]),
        // Swift: the same core as an ordinary module, for tests and the tools.
        .target(name: "LNPCoreHost", dependencies: ["LNPSys"], path: "Sources/LNPCoreHost"),
        // C: lnp-run's side of the seccomp supervisor: the program's start with the filter
        // installed, and the notification calls.
        .target(name: "LNPSupervisorSys", path: "CShim/supervisor"),
        // Swift: the seccomp supervisor — the filter, and the calls it is notified of, decided
        // by the same core as the preload's.
        .target(name: "LNPSupervisor", dependencies: ["LNPCoreHost", "LNPSys", "LNPSupervisorSys", "LNPTools"], path: "Sources/LNPSupervisor"),
        // libcap's static archive (its module map links `:libcap.a`): the shared library
        // would cost every start of lnp-run its loading.
        .systemLibrary(
            name: "CLibcap", path: "Sources/CLibcap",
            providers: [.apt(["libcap-dev"])]),
        .systemLibrary(name: "CGNUExtensions", path: "Sources/CGNUExtensions"),
        // Swift: what lnp-run and lnp share (program lookup, ELF facts, errno names).
        .target(
            name: "LNPTools",
            dependencies: ["LNPCoreHost", "CLibcap", "CGNUExtensions", .product(name: "SystemPackage", package: "swift-system")],
            path: "Sources/LNPTools"),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]),
        // Swift: the per-user decision store (SQLite, through its C API: no Foundation, so that
        // lnp-run need not load it) and the administrator's file. Only lnp-run and lnp use
        // it; the preload never links SQLite.
        .target(
            name: "LNPStore",
            dependencies: ["LNPTools", "CSQLite"],
            path: "Sources/LNPStore",
            // The static library: the shared one makes every start of lnp-run bind its 1,600
            // symbols at once (it is linked with BIND_NOW), a million instructions.
            linkerSettings: [.linkedLibrary(":libsqlite3.a")]),
        // Swift: reading audit files and reporting on them (lnp report).
        .target(name: "LNPReport", dependencies: ["LNPCoreHost", "LNPTools"], path: "Sources/LNPReport"),
        // Swift: lnp-run's code, as a library: the tests link it without the executable's
        // static runtime (a test bundle loads the shared one). No ArgumentParser: lnp-run
        // reads the plain forms of its command line by hand (docs/benchmarks.md).
        .target(
            name: "lnp_run",
            dependencies: ["LNPCoreHost", "LNPTools", "LNPStore", "LNPSupervisor", "LNPSupervisorSys"],
            path: "Sources/lnp-run"),
        // lnp-run itself: its entry point, with the Swift runtime linked in.
        .executableTarget(
            name: "LNPRunMain", dependencies: ["lnp_run"], path: "Sources/LNPRunMain",
            linkerSettings: staticSwiftRuntime),
        // Swift: the version `--version` prints, with the build's git revision, which the
        // GitRevision plugin writes at build time. Only the commands that answer --version
        // link it (lnp-run answers it through lnp-run-arguments); never the preload.
        .target(name: "LNPVersion", path: "Sources/LNPVersion", plugins: ["GitRevision"]),
        .plugin(name: "GitRevision", capability: .buildTool(), path: "Plugins/GitRevision"),
        // Swift: lnp-run's command line as ArgumentParser reads it, for the forms lnp-run
        // leaves to lnp-run-arguments (help, version, completions, mistakes, unusual forms).
        .target(
            name: "lnp_run_arguments",
            dependencies: ["lnp_run", "LNPVersion", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/lnp-run-arguments"),
        // lnp-run-arguments: installed beside liblnp.so, where lnp-run finds it.
        .executableTarget(
            name: "LNPRunArgumentsMain", dependencies: ["lnp_run_arguments"], path: "Sources/LNPRunArgumentsMain",
            linkerSettings: staticSwiftRuntime + staticFoundationShims),
        .executableTarget(
            name: "lnp",
            dependencies: [
                "LNPTools", "LNPCoreHost", "LNPStore", "LNPReport", "LNPVersion",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/lnp",
            // Compiled for the static runtime too: its objects then name the libraries a static
            // Foundation needs (CoreFoundation, ICU).
            swiftSettings: [.unsafeFlags(["-static-stdlib"])],
            linkerSettings: staticSwiftRuntime),
        .testTarget(
            name: "LNPCoreTests", dependencies: ["LNPCoreHost", "LNPTools", "LNPStore", "LNPReport", "LNPSupervisor", "lnp_run", "lnp_run_arguments", "LNPVersion"], path: "Tests/LNPCoreTests"),
    ]
)
