import CLibcap

#if canImport(Glibc)
import Glibc
#endif

/// Whether lnp-run can observe a program: LD_PRELOAD works only for a dynamically linked
/// program whose exec does not raise privileges, and only for the socket calls it makes
/// through the C library.
public struct Observability: Equatable {
    public indirect enum Obstacle: Equatable, CustomStringConvertible {
        case staticBinary
        case setuid(owner: UInt32)
        case setgid(group: UInt32)
        case fileCapabilities
        case goProgram
        case otherArchitecture(program: String, preload: String)
        case interpreter(String, Obstacle)

        /// This obstacle, if it stops a program started with these ids; nil if it does not.
        func stopping(effectiveUID: UInt32, effectiveGID: UInt32) -> Obstacle? {
            switch self {
            case .setuid(let owner): return owner == effectiveUID ? nil : self
            case .setgid(let group): return group == effectiveGID ? nil : self
            case .fileCapabilities: return effectiveUID == 0 ? nil : self
            case .interpreter(let path, let obstacle):
                return obstacle.stopping(effectiveUID: effectiveUID, effectiveGID: effectiveGID).map { .interpreter(path, $0) }
            case .staticBinary, .goProgram, .otherArchitecture: return self
            }
        }

        public var description: String {
            switch self {
            case .staticBinary: return "static binary (the loader that applies LD_PRELOAD never runs)"
            case .setuid(let owner): return "setuid (runs as uid \(owner); the loader ignores LD_PRELOAD)"
            case .setgid(let group): return "setgid (runs as gid \(group); the loader ignores LD_PRELOAD)"
            case .fileCapabilities: return "file capabilities (the loader ignores LD_PRELOAD)"
            case .goProgram: return "Go program (it makes raw system calls, past the C library)"
            case .otherArchitecture(let program, let preload):
                return "a \(program) program (liblnp.so is \(preload); the loader will not preload it)"
            case .interpreter(let path, let obstacle): return "its interpreter \(path): \(obstacle)"
            }
        }
    }

    public var obstacles: [Obstacle]
    public var isObservable: Bool { obstacles.isEmpty }

    /// The reasons, as one line.
    public var summary: String { obstacles.map(\.description).joined(separator: "; ") }

    /// Examines `path` (absolute) as `lnp inspect` does, then keeps what stops this user:
    /// `effectiveUID`/`effectiveGID` are those the program would start with, so a setuid bit
    /// changes nothing when the owner is already the user, nor capabilities for root.
    /// `preload` is liblnp.so's ELF file: a program built for another architecture (a 32-bit
    /// one, say) cannot load it.
    public static func examine(
        _ path: String, preload: ELFFile? = nil, effectiveUID: UInt32 = geteuid(), effectiveGID: UInt32 = getegid()
    ) -> Observability {
        let inspection = ProgramInspection.inspect(path: path, preload: preload, imports: false)
        return Observability(obstacles: inspection.obstacles.compactMap {
            $0.stopping(effectiveUID: effectiveUID, effectiveGID: effectiveGID)
        })
    }

    /// Whether the file carries capabilities (security.capability), read with libcap.
    public static func hasFileCapabilities(_ path: String) -> Bool {
        guard let capabilities = cap_get_file(path) else { return false }
        defer { cap_free(UnsafeMutableRawPointer(capabilities)) }
        // An empty set is as good as none.
        guard let empty = cap_init() else { return true }
        defer { cap_free(UnsafeMutableRawPointer(empty)) }
        return cap_compare(capabilities, empty) != 0
    }
}

/// The `#!` line of a script.
public struct ScriptHeader: Equatable {
    /// The interpreter named on the line.
    public var path: String
    public var arguments: [String]

    /// The program that will actually run the script: for `#!/usr/bin/env NAME`, NAME as
    /// found in PATH.
    public var program: String? {
        if path.hasSuffix("/env"), let name = arguments.first(where: { !$0.hasPrefix("-") }) {
            return try? ProgramLocator.locate(name).get()
        }
        return path
    }

    public static func interpreter(of path: String) -> ScriptHeader? {
        guard let file = fopen(path, "re") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 512)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return parse(line)
    }

    public static func parse(_ line: String) -> ScriptHeader? {
        guard line.hasPrefix("#!") else { return nil }
        // Character.isWhitespace, so that "\r\n" (one Character) ends a word too.
        let words = line.dropFirst(2).split(whereSeparator: \.isWhitespace)
        guard let first = words.first else { return nil }
        return ScriptHeader(path: String(first), arguments: words.dropFirst().map(String.init))
    }
}
