/// Builds small ELF files by hand, in either class and byte order, for the cases real
/// binaries on this machine do not cover (32-bit, big-endian, Go notes, extended numbering,
/// dynamic symbol tables with or without section headers).
struct ELFBuilder {
    var wide = true
    var little = true
    var type: UInt16 = 3
    var machine: UInt16 = 62
    /// Program headers: type and the bytes of their segment.
    var programs: [(type: UInt32, data: [UInt8])] = []
    /// Sections besides the null section and .shstrtab (which the builder adds).
    var sections: [(name: String, type: UInt32, data: [UInt8])] = []
    var withSectionTable = true
    /// Section count, names index and program count in section 0 (ELF extended numbering).
    var extendedNumbering = false
    /// A dynamic symbol table and dynamic section; nil for none.
    var dynamic: Dynamic? = nil

    /// What the dynamic linker would see. The builder lays out .dynsym, .dynstr, the hash
    /// table and the dynamic section after the program headers, and adds PT_LOAD (the whole
    /// file at `loadAddress`) and PT_DYNAMIC after `programs`; with `sections`, also the
    /// .dynstr, .dynsym and .dynamic section headers after `sections`.
    struct Dynamic {
        enum Hash { case gnu, sysv, none }
        var needed: [String] = []
        /// Undefined symbols.
        var imports: [String] = []
        /// Defined symbols (absolute, section index SHN_ABS).
        var exports: [String] = []
        var hash = Hash.gnu
        var sections = true
    }

    static let loadAddress = 0x40_0000

    func build() -> [UInt8] {
        let headerSize = wide ? 64 : 52
        let programEntrySize = wide ? 56 : 32
        let sectionEntrySize = wide ? 64 : 40
        let programCount = programs.count + (dynamic == nil ? 0 : 2)
        var out = [UInt8](repeating: 0, count: headerSize + programCount * programEntrySize)

        func align() { while out.count % 8 != 0 { out.append(0) } }
        func put(_ value: UInt64, _ size: Int, at offset: Int) {
            for i in 0..<size {
                let shift = little ? 8 * i : 8 * (size - 1 - i)
                out[offset + i] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
            }
        }
        func address(_ value: Int, at offset: Int) { put(UInt64(value), wide ? 8 : 4, at: offset) }

        let dynamicLayout = dynamic.map { dynamic in
            align()
            let layout = layOut(dynamic, at: out.count)
            out += layout.bytes
            return layout
        }
        align()

        var programPlaces: [Int] = []
        for program in programs {
            programPlaces.append(out.count)
            out += program.data
            align()
        }
        var sectionPlaces: [Int] = []
        for section in sections {
            sectionPlaces.append(out.count)
            out += section.data
            align()
        }
        // The sections with headers: the caller's, then the dynamic ones (their data is laid out already).
        var headers = sections.enumerated().map { index, section in
            (name: section.name, type: section.type, offset: sectionPlaces[index], size: section.data.count, link: 0, entrySize: 0)
        }
        if let dynamicLayout, dynamic?.sections == true {
            let strings = headers.count + 1
            headers.append((".dynstr", 3, dynamicLayout.strings.offset, dynamicLayout.strings.size, 0, 0))
            headers.append((".dynsym", 11, dynamicLayout.symbols.offset, dynamicLayout.symbols.size, strings, wide ? 24 : 16))
            headers.append((".dynamic", 6, dynamicLayout.table.offset, dynamicLayout.table.size, strings, wide ? 16 : 8))
        }
        var names: [UInt8] = [0]
        var nameOffsets: [Int] = []
        for header in headers {
            nameOffsets.append(names.count)
            names += Array(header.name.utf8) + [0]
        }
        let namesName = names.count
        names += Array(".shstrtab".utf8) + [0]
        let namesPlace = out.count
        out += names
        align()

        let sectionCount = headers.count + 2
        let sectionTable = out.count
        if withSectionTable { out += [UInt8](repeating: 0, count: sectionCount * sectionEntrySize) }

        out[0...3] = [0x7f, 0x45, 0x4c, 0x46]
        out[4] = wide ? 2 : 1
        out[5] = little ? 1 : 2
        out[6] = 1
        put(UInt64(type), 2, at: 16)
        put(UInt64(machine), 2, at: 18)
        put(1, 4, at: 20)
        address(programCount == 0 ? 0 : headerSize, at: wide ? 32 : 28)
        address(withSectionTable ? sectionTable : 0, at: wide ? 40 : 32)
        put(UInt64(headerSize), 2, at: wide ? 52 : 40)
        put(UInt64(programEntrySize), 2, at: wide ? 54 : 42)
        put(UInt64(extendedNumbering ? 0xffff : programCount), 2, at: wide ? 56 : 44)
        put(UInt64(sectionEntrySize), 2, at: wide ? 58 : 46)
        put(UInt64(withSectionTable && !extendedNumbering ? sectionCount : 0), 2, at: wide ? 60 : 48)
        put(UInt64(withSectionTable ? (extendedNumbering ? 0xffff : sectionCount - 1) : 0), 2, at: wide ? 62 : 50)

        var segments = programs.enumerated().map { index, program in
            (type: program.type, offset: programPlaces[index], size: program.data.count)
        }
        if let dynamicLayout {
            segments.append((1, 0, out.count))  // PT_LOAD: the whole file
            segments.append((2, dynamicLayout.table.offset, dynamicLayout.table.size))
        }
        for (index, segment) in segments.enumerated() {
            let entry = headerSize + index * programEntrySize
            put(UInt64(segment.type), 4, at: entry)
            // p_offset, p_vaddr (where PT_LOAD maps the file), p_filesz, p_memsz.
            let fields = [segment.offset, Self.loadAddress + segment.offset, segment.size, segment.size]
            for (field, at) in zip(fields, wide ? [8, 16, 32, 40] : [4, 8, 16, 20]) { address(field, at: entry + at) }
        }

        guard withSectionTable else { return out }
        func section(
            _ index: Int, name: Int, type: UInt32, offset: Int, size: Int, link: Int = 0, info: Int = 0, entrySize: Int = 0
        ) {
            let entry = sectionTable + index * sectionEntrySize
            put(UInt64(name), 4, at: entry)
            put(UInt64(type), 4, at: entry + 4)
            address(offset, at: entry + (wide ? 24 : 16))
            address(size, at: entry + (wide ? 32 : 20))
            put(UInt64(link), 4, at: entry + (wide ? 40 : 24))
            put(UInt64(info), 4, at: entry + (wide ? 44 : 28))
            address(entrySize, at: entry + (wide ? 56 : 36))
        }
        if extendedNumbering {
            section(0, name: 0, type: 0, offset: 0, size: sectionCount, link: sectionCount - 1, info: programCount)
        }
        for (index, header) in headers.enumerated() {
            section(
                index + 1, name: nameOffsets[index], type: header.type, offset: header.offset, size: header.size,
                link: header.link, entrySize: header.entrySize)
        }
        section(sectionCount - 1, name: namesName, type: 3, offset: namesPlace, size: names.count)
        return out
    }

    /// Where `layOut` put the parts of a dynamic description (file offsets and sizes).
    struct DynamicLayout {
        var bytes: [UInt8]
        var strings: (offset: Int, size: Int)
        var symbols: (offset: Int, size: Int)
        var table: (offset: Int, size: Int)
    }

    /// .dynsym, .dynstr, the hash table and the dynamic section, in that order, from file
    /// offset `start` (8-aligned).
    func layOut(_ dynamic: Dynamic, at start: Int) -> DynamicLayout {
        func value(_ value: Int, _ size: Int) -> [UInt8] {
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: UInt64(value) >> UInt64(8 * $0)) }
            return little ? bytes : bytes.reversed()
        }
        func pad(_ bytes: inout [UInt8]) { while bytes.count % 8 != 0 { bytes.append(0) } }
        let word = wide ? 8 : 4

        // The hashed (exported) symbols come last, grouped by GNU hash bucket.
        let bucketCount = 2
        let exports = dynamic.hash == .gnu
            ? dynamic.exports.sorted { Self.gnuHash($0) % UInt32(bucketCount) < Self.gnuHash($1) % UInt32(bucketCount) }
            : dynamic.exports
        var strings: [UInt8] = [0]
        func add(_ name: String) -> Int {
            defer { strings += Array(name.utf8) + [0] }
            return strings.count
        }
        let needed = dynamic.needed.map(add)
        var symbols = [UInt8](repeating: 0, count: wide ? 24 : 16)  // the null symbol
        for (name, defined) in dynamic.imports.map({ ($0, false) }) + exports.map({ ($0, true) }) {
            let nameOffset = add(name), info = 0x12, index = defined ? 0xfff1 : 0  // global function; SHN_ABS
            if wide {
                symbols += value(nameOffset, 4) + [UInt8(info), 0] + value(index, 2) + value(defined ? 0x1000 : 0, 8) + value(0, 8)
            } else {
                symbols += value(nameOffset, 4) + value(defined ? 0x1000 : 0, 4) + value(0, 4) + [UInt8(info), 0] + value(index, 2)
            }
        }
        let symbolCount = 1 + dynamic.imports.count + exports.count

        var hash: [UInt8] = []
        switch dynamic.hash {
        case .gnu:
            let first = 1 + dynamic.imports.count
            hash = value(bucketCount, 4) + value(first, 4) + value(1, 4) + value(6, 4)
            hash += [UInt8](repeating: 0xff, count: word)  // a bloom filter that lets every name through
            for bucket in 0..<bucketCount {
                let start = exports.firstIndex { Int(Self.gnuHash($0)) % bucketCount == bucket }
                hash += value(start.map { first + $0 } ?? 0, 4)
            }
            for (index, name) in exports.enumerated() {
                let isLast = index == exports.count - 1
                    || Int(Self.gnuHash(exports[index + 1])) % bucketCount != Int(Self.gnuHash(name)) % bucketCount
                hash += value(Int(Self.gnuHash(name) & ~1 | (isLast ? 1 : 0)), 4)
            }
        case .sysv:
            // One bucket; only nchain (the symbol count) matters to a reader.
            hash = value(1, 4) + value(symbolCount, 4) + value(0, 4) + [UInt8](repeating: 0, count: 4 * symbolCount)
        case .none:
            break
        }

        // As linkers do: the symbols, then their strings (where a reader without a hash
        // table takes the symbols to end).
        let symbolsAt = start
        let symbolsSize = symbols.count
        pad(&symbols)
        let stringsAt = symbolsAt + symbols.count
        pad(&strings)
        let hashAt = stringsAt + strings.count
        pad(&hash)
        let tableAt = hashAt + hash.count
        var entries: [(Int, Int)] = needed.map { (1, $0) }  // DT_NEEDED
        entries += [(5, Self.loadAddress + stringsAt), (10, strings.count), (6, Self.loadAddress + symbolsAt), (11, wide ? 24 : 16)]
        switch dynamic.hash {
        case .gnu: entries.append((0x6fff_fef5, Self.loadAddress + hashAt))
        case .sysv: entries.append((4, Self.loadAddress + hashAt))
        case .none: break
        }
        entries.append((0, 0))  // DT_NULL
        let table = entries.flatMap { value($0.0, word) + value($0.1, word) }
        return DynamicLayout(
            bytes: symbols + strings + hash + table, strings: (stringsAt, strings.count), symbols: (symbolsAt, symbolsSize),
            table: (tableAt, table.count))
    }

    /// The GNU hash of a symbol name (h = h * 33 + c, from 5381).
    static func gnuHash(_ name: String) -> UInt32 {
        name.utf8.reduce(UInt32(5381)) { $0 &* 33 &+ UInt32($1) }
    }

    /// An ELF note: name and description sizes, type, the NUL-terminated owner and the
    /// description, each padded to four bytes.
    static func note(owner: String, type: UInt32, description: [UInt8], little: Bool = true) -> [UInt8] {
        func word(_ value: Int) -> [UInt8] {
            let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            return little ? bytes : bytes.reversed()
        }
        func pad(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4) }
        let name = Array(owner.utf8) + [0]
        return word(name.count) + word(description.count) + word(Int(type)) + pad(name) + pad(description)
    }
}
