import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// What lnp needs to know about an ELF executable, read from its headers: whether the
/// loader will honour LD_PRELOAD for it (it has an interpreter), whether it is a Go
/// program, and its build-id; on request, what it imports from shared libraries. Every
/// offset and size in the file is checked before use, and every count is capped, so a
/// truncated or hostile file gives a `Failure`, never a crash or a huge allocation.
public struct ELFFile: Equatable {
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notELF
        case truncated(String)
        case malformed(String)
        case unreadable(Errno)

        public var description: String {
            switch self {
            case .notELF: return "not an ELF file"
            case .truncated(let what): return "truncated ELF file (\(what) lies past the end)"
            case .malformed(let what): return "malformed ELF file (\(what))"
            case .unreadable(let errno): return "cannot read it: \(errno)"
            }
        }
    }

    public var is64Bit: Bool
    public var isLittleEndian: Bool
    /// ET_EXEC (2) or ET_DYN (3), usually.
    public var type: UInt16
    public var machine: UInt16
    /// PT_INTERP: the dynamic loader's path. nil for a static binary.
    public var interpreter: String?
    public var hasDynamicSegment: Bool
    /// The GNU build-id, as lower-case hex.
    public var buildID: String?
    public var sectionNames: [String]
    public var hasGoBuildID: Bool
    /// The undefined symbols of the dynamic symbol table (what it takes from shared
    /// libraries), version suffixes removed, each once, in table order. Read only when asked
    /// for (`imports: true`); otherwise empty.
    public var importedSymbols: [String] = []
    /// DT_NEEDED: the shared libraries the loader loads for it, in order. Read only when
    /// asked for (`imports: true`); otherwise empty.
    public var neededLibraries: [String] = []

    /// What the file was built for, as people name it: "x86-64", "32-bit x86", "AArch64", ….
    public var architecture: String {
        let name: String
        switch machine {
        case 3: name = "x86"
        case 62: name = "x86-64"
        case 40: name = "ARM"
        case 183: name = "AArch64"
        case 243: name = "RISC-V"
        case 8: name = "MIPS"
        case 20, 21: name = "PowerPC"
        case 22: name = "S/390"
        default: name = "machine \(machine)"
        }
        let width = is64Bit ? "64-bit" : "32-bit"
        return machine == 62 || machine == 183 ? name : "\(width) \(name)"
    }

    /// LD_PRELOAD takes effect only through the dynamic loader.
    public var isStatic: Bool { interpreter == nil }

    /// Go programs make their socket calls as raw system calls, past any preload.
    public var isGo: Bool {
        hasGoBuildID || sectionNames.contains(".go.buildinfo") || sectionNames.contains(".note.go.buildid")
            || sectionNames.contains(".gopclntab")
    }

    /// Reads the file's headers; with `imports`, its dynamic symbols and needed libraries
    /// too (more reading, which lnp-run's start does not need).
    public static func read(path: String, imports: Bool = false) throws(Failure) -> ELFFile {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            throw .unreadable(error as? Errno ?? .ioError)
        }
        defer { try? fd.close() }
        return try parse(try FileBytes(fd: fd), imports: imports)
    }

    public static func parse(_ bytes: [UInt8], imports: Bool = false) throws(Failure) -> ELFFile {
        try parse(MemoryBytes(bytes: bytes), imports: imports)
    }

    static func parse(_ source: some ByteSource, imports: Bool = false) throws(Failure) -> ELFFile {
        let ident = try source.bytes(at: 0, count: 16, what: "the identification")
        guard ident[0] == 0x7f, ident[1] == 0x45, ident[2] == 0x4c, ident[3] == 0x46 else { throw .notELF }
        guard ident[4] == 1 || ident[4] == 2 else { throw .malformed("class \(ident[4])") }
        guard ident[5] == 1 || ident[5] == 2 else { throw .malformed("byte order \(ident[5])") }
        let wide = ident[4] == 2
        let order = ByteOrder(little: ident[5] == 1)
        let header = try source.bytes(at: 0, count: wide ? 64 : 52, what: "the file header")

        var file = ELFFile(
            is64Bit: wide, isLittleEndian: order.little, type: order.u16(header, 16), machine: order.u16(header, 18),
            interpreter: nil, hasDynamicSegment: false, buildID: nil, sectionNames: [], hasGoBuildID: false)

        let programOffset = wide ? order.u64(header, 32) : UInt64(order.u32(header, 28))
        let sectionOffset = wide ? order.u64(header, 40) : UInt64(order.u32(header, 32))
        let programEntrySize = Int(order.u16(header, wide ? 54 : 42))
        var programCount = Int(order.u16(header, wide ? 56 : 44))
        let sectionEntrySize = Int(order.u16(header, wide ? 58 : 46))
        var sectionCount = Int(order.u16(header, wide ? 60 : 48))
        var namesIndex = Int(order.u16(header, wide ? 62 : 50))

        // Section headers, when there are any (a stripped file may have none).
        var sections: [Section] = []
        if sectionOffset != 0 {
            guard sectionEntrySize >= (wide ? 64 : 40) else { throw .malformed("section header size \(sectionEntrySize)") }
            let first = try Section.read(source, order, wide, at: sectionOffset, index: 0, entrySize: sectionEntrySize)
            // Counts too large for the header live in section 0 (ELF extended numbering).
            if sectionCount == 0 { sectionCount = Int(clamping: first.size) }
            if namesIndex == 0xffff { namesIndex = Int(first.link) }
            if programCount == 0xffff { programCount = Int(first.info) }
            guard sectionCount <= 1 << 16 else { throw .malformed("\(sectionCount) sections") }
            // The table in one read: lnp-run reads two or three files at every start.
            let table = try source.bytes(
                at: sectionOffset, count: UInt64(sectionCount) * UInt64(sectionEntrySize), what: "the section header table")
            sections.reserveCapacity(sectionCount)
            for index in 0..<sectionCount {
                sections.append(Section(table, order, wide, at: index * sectionEntrySize))
            }
            if namesIndex > 0 && namesIndex < sections.count {
                let names = sections[namesIndex]
                let table = try source.bytes(at: names.offset, count: names.size, what: "the section name table")
                file.sectionNames = sections.map { section in string(in: table, at: Int(section.name)) ?? "" }
            }
        }

        var loads: [Segment] = []
        var dynamic: Segment? = nil
        if programOffset != 0 && programCount > 0 {
            guard programEntrySize >= (wide ? 56 : 32) else { throw .malformed("program header size \(programEntrySize)") }
            guard programCount <= 1 << 16 else { throw .malformed("\(programCount) program headers") }
            let table = try source.bytes(
                at: programOffset, count: UInt64(programCount) * UInt64(programEntrySize), what: "the program header table")
            for index in 0..<programCount {
                let entry = index * programEntrySize
                let type = order.u32(table, entry)
                let fileOffset = wide ? order.u64(table, entry + 8) : UInt64(order.u32(table, entry + 4))
                let fileSize = wide ? order.u64(table, entry + 32) : UInt64(order.u32(table, entry + 16))
                let address = wide ? order.u64(table, entry + 16) : UInt64(order.u32(table, entry + 8))
                let segment = Segment(address: address, offset: fileOffset, size: fileSize)
                switch type {
                case 1:  // PT_LOAD
                    loads.append(segment)
                case 3:  // PT_INTERP
                    guard fileSize > 0, fileSize <= 4096 else { throw .malformed("interpreter of \(fileSize) bytes") }
                    let text = try source.bytes(at: fileOffset, count: fileSize, what: "the interpreter path")
                    file.interpreter = string(in: text, at: 0) ?? ""
                case 2:  // PT_DYNAMIC
                    file.hasDynamicSegment = true
                    if dynamic == nil { dynamic = segment }
                case 4:  // PT_NOTE
                    guard fileSize <= 1 << 20 else { continue }
                    let notes = try source.bytes(at: fileOffset, count: fileSize, what: "a note segment")
                    readNotes(notes, order, into: &file)
                default:
                    break
                }
            }
        }
        // A file without program headers for notes may still have note sections.
        if file.buildID == nil || !file.hasGoBuildID {
            for section in sections where section.type == 7 && section.size <= 1 << 20 {  // SHT_NOTE
                if let notes = try? source.bytes(at: section.offset, count: section.size, what: "a note section") {
                    readNotes(notes, order, into: &file)
                }
            }
        }
        if imports {
            var reader = DynamicReader(source: source, order: order, wide: wide, sections: sections, loads: loads)
            try reader.read(dynamic: dynamic, into: &file)
        }
        return file
    }

    struct Section {
        var name: UInt32
        var type: UInt32
        var offset: UInt64
        var size: UInt64
        var link: UInt32
        var info: UInt32
        var entrySize: UInt64

        static func read(_ source: some ByteSource, _ order: ByteOrder, _ wide: Bool, at base: UInt64, index: Int, entrySize: Int)
            throws(Failure) -> Section
        {
            let entry = try source.bytes(
                at: try ELFFile.offset(base, plus: index, times: entrySize), count: entrySize, what: "section header \(index)")
            return Section(entry, order, wide, at: 0)
        }
    }

    /// A PT_LOAD segment (where its bytes lie in the file and in memory) or PT_DYNAMIC.
    struct Segment {
        var address: UInt64
        var offset: UInt64
        var size: UInt64
    }

    static func offset(_ base: UInt64, plus index: Int, times size: Int) throws(Failure) -> UInt64 {
        try offset(base, plus: UInt64(index), times: UInt64(size))
    }

    static func offset(_ base: UInt64, plus index: UInt64, times size: UInt64) throws(Failure) -> UInt64 {
        let (product, overflow) = index.multipliedReportingOverflow(by: size)
        let (sum, overflow2) = base.addingReportingOverflow(product)
        guard !overflow && !overflow2 else { throw .malformed("an offset past 2^64") }
        return sum
    }

    /// GNU build-id (type 3, owner "GNU") and Go build ID (type 4, owner "Go") notes.
    static func readNotes(_ notes: [UInt8], _ order: ByteOrder, into file: inout ELFFile) {
        var offset = 0
        while offset + 12 <= notes.count {
            let nameSize = Int(order.u32(notes, offset))
            let descriptionSize = Int(order.u32(notes, offset + 4))
            let type = order.u32(notes, offset + 8)
            let nameStart = offset + 12
            let descriptionStart = nameStart + (nameSize + 3) & ~3
            let end = descriptionStart + (descriptionSize + 3) & ~3
            guard nameSize <= notes.count, descriptionSize <= notes.count, descriptionStart + descriptionSize <= notes.count
            else { return }
            let owner = string(in: Array(notes[nameStart..<(nameStart + nameSize)]), at: 0) ?? ""
            if owner == "GNU" && type == 3 && descriptionSize > 0 {
                file.buildID = hex(notes[descriptionStart..<(descriptionStart + descriptionSize)])
            } else if owner == "Go" && type == 4 {
                file.hasGoBuildID = true
            }
            offset = end
        }
    }

    /// Lower-case hexadecimal, two digits a byte. (By hand: `String(_:radix:)` and `joined()`
    /// cost lnp-run's start a quarter of a million instructions for the few build-ids it reads.)
    static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits: StaticString = "0123456789abcdef"
        var text = [UInt8](repeating: 0, count: bytes.count * 2)
        for (index, byte) in bytes.enumerated() {
            text[2 * index] = digits.utf8Start[Int(byte >> 4)]
            text[2 * index + 1] = digits.utf8Start[Int(byte & 0xf)]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The NUL-terminated string at `index`, if it is terminated within `table`.
    static func string(in table: [UInt8], at index: Int) -> String? {
        guard index >= 0, index < table.count, let end = table[index...].firstIndex(of: 0) else { return nil }
        return String(decoding: table[index..<end], as: UTF8.self)
    }
}

extension ELFFile.Section {
    /// The header at `start` in `table` (which holds it whole).
    init(_ table: [UInt8], _ order: ByteOrder, _ wide: Bool, at start: Int) {
        self.init(
            name: order.u32(table, start), type: order.u32(table, start + 4),
            offset: wide ? order.u64(table, start + 24) : UInt64(order.u32(table, start + 16)),
            size: wide ? order.u64(table, start + 32) : UInt64(order.u32(table, start + 20)),
            link: order.u32(table, start + (wide ? 40 : 24)), info: order.u32(table, start + (wide ? 44 : 28)),
            entrySize: wide ? order.u64(table, start + 56) : UInt64(order.u32(table, start + 36)))
    }
}

struct ByteOrder {
    var little: Bool

    func u16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        let a = UInt16(bytes[at]), b = UInt16(bytes[at + 1])
        return little ? a | b << 8 : a << 8 | b
    }

    func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        let low = UInt32(u16(bytes, little ? at : at + 2)), high = UInt32(u16(bytes, little ? at + 2 : at))
        return low | high << 16
    }

    func u64(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        let low = UInt64(u32(bytes, little ? at : at + 4)), high = UInt64(u32(bytes, little ? at + 4 : at))
        return low | high << 32
    }
}

/// Random access to a file's bytes, or to bytes in memory (for tests and fuzzing).
protocol ByteSource {
    /// The number of bytes there are: nothing is allocated for a read past it.
    var size: UInt64 { get }
    func bytes(at offset: UInt64, count: UInt64, what: String) throws(ELFFile.Failure) -> [UInt8]
}

extension ByteSource {
    func bytes(at offset: UInt64, count: Int, what: String) throws(ELFFile.Failure) -> [UInt8] {
        try bytes(at: offset, count: UInt64(count), what: what)
    }
}

struct MemoryBytes: ByteSource {
    var bytes: [UInt8]
    var size: UInt64 { UInt64(bytes.count) }

    func bytes(at offset: UInt64, count: UInt64, what: String) throws(ELFFile.Failure) -> [UInt8] {
        let (end, overflow) = offset.addingReportingOverflow(count)
        guard !overflow, end <= UInt64(bytes.count) else { throw .truncated(what) }
        return Array(bytes[Int(offset)..<Int(end)])
    }
}

struct FileBytes: ByteSource {
    var fd: FileDescriptor
    var size: UInt64

    init(fd: FileDescriptor) throws(ELFFile.Failure) {
        self.fd = fd
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else { throw .unreadable(Errno(rawValue: errno)) }
        // Reading a directory fails with EISDIR, as it should; its size means nothing.
        size = info.st_mode & S_IFMT == S_IFREG ? UInt64(max(0, info.st_size)) : UInt64.max
    }

    func bytes(at offset: UInt64, count: UInt64, what: String) throws(ELFFile.Failure) -> [UInt8] {
        let (end, overflow) = offset.addingReportingOverflow(count)
        guard !overflow, end <= size else { throw .truncated(what) }
        guard count <= 1 << 26, offset <= UInt64(Int64.max) - count else { throw .malformed("\(what) of \(count) bytes") }
        var result = [UInt8](repeating: 0, count: Int(count))
        var filled = 0
        while filled < result.count {
            let read: Int
            do {
                read = try result.withUnsafeMutableBytes { buffer in
                    try fd.read(
                        fromAbsoluteOffset: Int64(offset) + Int64(filled),
                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                }
            } catch {
                throw .unreadable(error as? Errno ?? .ioError)
            }
            if read == 0 { throw .truncated(what) }
            filled += read
        }
        return result
    }
}
