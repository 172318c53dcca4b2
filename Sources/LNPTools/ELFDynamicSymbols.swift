import SystemPackage

/// Reads the dynamic symbol table and DT_NEEDED. The sections (.dynsym and the string table
/// it links to) are preferred; a file without them is read as the loader reads it, from
/// PT_DYNAMIC, with addresses turned into file offsets through the PT_LOAD segments.
struct DynamicReader<Source: ByteSource> {
    typealias Failure = ELFFile.Failure

    /// Caps that keep a hostile file from making the reader allocate or loop without end.
    static var symbolLimit: UInt64 { 1 << 20 }
    static var stringTableLimit: UInt64 { 1 << 24 }
    static var dynamicEntryLimit: UInt64 { 1 << 16 }

    var source: Source
    var order: ByteOrder
    var wide: Bool
    var sections: [ELFFile.Section]
    var loads: [ELFFile.Segment]

    /// What the dynamic section says that this reader uses.
    struct Entries {
        var needed: [UInt64] = []
        var strings: UInt64? = nil
        var stringsSize: UInt64? = nil
        var symbols: UInt64? = nil
        var symbolSize: UInt64? = nil
        var hash: UInt64? = nil
        var gnuHash: UInt64? = nil
    }

    var standardSymbolSize: UInt64 { wide ? 24 : 16 }

    mutating func read(dynamic: ELFFile.Segment?, into file: inout ELFFile) throws(Failure) {
        let dynamicSection = sections.first { $0.type == 6 }  // SHT_DYNAMIC
        var entries = Entries()
        if let dynamic {
            entries = try readEntries(at: dynamic.offset, size: dynamic.size)
        } else if let dynamicSection {
            entries = try readEntries(at: dynamicSection.offset, size: dynamicSection.size)
        }

        // The dynamic string table: at DT_STRTAB, or the section .dynamic links to.
        var strings: [UInt8]? = nil
        if let address = entries.strings, !loads.isEmpty {
            guard let size = entries.stringsSize else { throw .malformed("DT_STRTAB without DT_STRSZ") }
            strings = try mapped(address, count: size, limit: Self.stringTableLimit, what: "the dynamic string table")
        } else if let dynamicSection {
            strings = try linkedStrings(of: dynamicSection)
        }

        for offset in entries.needed {
            guard let strings, let name = ELFFile.string(in: strings, at: Int(clamping: offset)) else {
                throw .malformed("a DT_NEEDED name outside the string table")
            }
            file.neededLibraries.append(name)
        }

        // The symbols: the .dynsym section, else the table at DT_SYMTAB.
        if let symbolSection = sections.first(where: { $0.type == 11 }) {  // SHT_DYNSYM
            let entrySize = try symbolEntrySize(symbolSection.entrySize)
            let count = symbolSection.size / entrySize
            guard count <= Self.symbolLimit else { throw .malformed("\(count) dynamic symbols") }
            let table = try source.bytes(
                at: symbolSection.offset, count: count * entrySize, what: "the dynamic symbol table")
            let names = try linkedStrings(of: symbolSection)
            file.importedSymbols = try importedNames(table, count: Int(count), entrySize: Int(entrySize), names: names)
        } else if let address = entries.symbols, !loads.isEmpty {
            guard let strings else { throw .malformed("DT_SYMTAB without a string table") }
            let entrySize = try symbolEntrySize(entries.symbolSize ?? 0)
            let count = try symbolCount(table: address, entrySize: entrySize, entries: entries)
            let table = try mapped(
                address, count: count * entrySize, limit: Self.symbolLimit * entrySize, what: "the dynamic symbol table")
            file.importedSymbols = try importedNames(table, count: Int(count), entrySize: Int(entrySize), names: strings)
        }
    }

    func readEntries(at offset: UInt64, size: UInt64) throws(Failure) -> Entries {
        let entrySize: UInt64 = wide ? 16 : 8
        let count = size / entrySize
        guard count <= Self.dynamicEntryLimit else { throw .malformed("\(count) dynamic entries") }
        let bytes = try source.bytes(at: offset, count: count * entrySize, what: "the dynamic section")
        var entries = Entries()
        for index in 0..<Int(count) {
            let at = index * Int(entrySize)
            let tag = wide ? order.u64(bytes, at) : UInt64(order.u32(bytes, at))
            let value = wide ? order.u64(bytes, at + 8) : UInt64(order.u32(bytes, at + 4))
            switch tag {
            case 0: return entries  // DT_NULL
            case 1: entries.needed.append(value)
            case 4: entries.hash = value
            case 5: entries.strings = value
            case 6: entries.symbols = value
            case 10: entries.stringsSize = value
            case 11: entries.symbolSize = value
            case 0x6fff_fef5: entries.gnuHash = value
            default: break
            }
        }
        return entries
    }

    /// The string table section that `section` links to.
    func linkedStrings(of section: ELFFile.Section) throws(Failure) -> [UInt8] {
        let link = Int(section.link)
        guard link > 0, link < sections.count, sections[link].type == 3 else {  // SHT_STRTAB
            throw .malformed("section link \(link) is not a string table")
        }
        let strings = sections[link]
        guard strings.size <= Self.stringTableLimit else { throw .malformed("a string table of \(strings.size) bytes") }
        return try source.bytes(at: strings.offset, count: strings.size, what: "the dynamic string table")
    }

    func symbolEntrySize(_ declared: UInt64) throws(Failure) -> UInt64 {
        if declared == 0 { return standardSymbolSize }
        guard declared >= standardSymbolSize, declared <= 256 else { throw .malformed("symbol size \(declared)") }
        return declared
    }

    /// `count` bytes at virtual address `address`, read where a PT_LOAD segment puts them.
    func mapped(_ address: UInt64, count: UInt64, limit: UInt64, what: String) throws(Failure) -> [UInt8] {
        guard count <= limit else { throw .malformed("\(what) of \(count) bytes") }
        return try source.bytes(at: try fileOffset(of: address, what: what), count: count, what: what)
    }

    func fileOffset(of address: UInt64, what: String) throws(Failure) -> UInt64 {
        for load in loads where address >= load.address && address - load.address < load.size {
            return try ELFFile.offset(load.offset, plus: address - load.address, times: 1)
        }
        throw .malformed("\(what) at an address no segment loads")
    }

    /// How many symbols the table at DT_SYMTAB holds: DT_HASH says; DT_GNU_HASH says for the
    /// last chain; failing both, the table is taken to end where the string table begins.
    func symbolCount(table: UInt64, entrySize: UInt64, entries: Entries) throws(Failure) -> UInt64 {
        let count: UInt64
        if let hash = entries.hash {
            let header = try mapped(hash, count: 8, limit: 8, what: "the hash table")
            count = UInt64(order.u32(header, 4))  // nchain
        } else if let gnuHash = entries.gnuHash {
            count = try gnuHashCount(at: gnuHash)
        } else if let strings = entries.strings, strings > table {
            count = (strings - table) / entrySize
        } else {
            throw .malformed("no hash table to count the dynamic symbols")
        }
        guard count <= Self.symbolLimit else { throw .malformed("\(count) dynamic symbols") }
        return count
    }

    /// The GNU hash table lists the hashed symbols (from `first` on) bucket by bucket; the
    /// last bucket's chain ends, with its low bit set, at the last symbol.
    func gnuHashCount(at address: UInt64) throws(Failure) -> UInt64 {
        let what = "the GNU hash table"
        let start = try fileOffset(of: address, what: what)
        let header = try source.bytes(at: start, count: 16, what: what)
        let buckets = UInt64(order.u32(header, 0)), first = UInt64(order.u32(header, 4))
        let bloomWords = UInt64(order.u32(header, 8))
        guard buckets <= Self.symbolLimit, bloomWords <= Self.symbolLimit, first <= Self.symbolLimit else {
            throw .malformed("a GNU hash table of \(buckets) buckets, \(bloomWords) bloom words")
        }
        let bucketStart = try ELFFile.offset(start + 16, plus: bloomWords, times: wide ? 8 : 4)
        let bucketBytes = try source.bytes(at: bucketStart, count: buckets * 4, what: what)
        var last: UInt64 = 0
        for index in 0..<Int(buckets) { last = max(last, UInt64(order.u32(bucketBytes, index * 4))) }
        if last == 0 { return first }  // no hashed symbols
        guard last >= first, last < Self.symbolLimit else { throw .malformed("GNU hash bucket \(last) before \(first)") }

        let chains = bucketStart + buckets * 4
        var index = last
        while index < Self.symbolLimit {
            // Chains are short; read them a chunk at a time, never past the end of the file.
            let at = try ELFFile.offset(chains, plus: index - first, times: 4)
            let words = min(256, Self.symbolLimit - index, at < source.size ? (source.size - at) / 4 : 0)
            guard words > 0 else { throw .truncated("the GNU hash chains") }
            let chunk = try source.bytes(at: at, count: words * 4, what: "the GNU hash chains")
            for word in 0..<Int(words) where order.u32(chunk, word * 4) & 1 != 0 {
                return index + UInt64(word) + 1
            }
            index += words
        }
        throw .malformed("a GNU hash chain past \(Self.symbolLimit) symbols")
    }

    /// The names of the undefined symbols (section index 0), the null symbol 0 excepted.
    func importedNames(_ table: [UInt8], count: Int, entrySize: Int, names: [UInt8]) throws(Failure) -> [String] {
        var seen = Set<String>()
        var imported: [String] = []
        for index in 1..<max(1, count) {
            let at = index * entrySize
            guard order.u16(table, at + (wide ? 6 : 14)) == 0 else { continue }  // st_shndx
            let nameOffset = Int(order.u32(table, at))
            guard nameOffset != 0 else { continue }
            guard let full = ELFFile.string(in: names, at: nameOffset) else {
                throw .malformed("the name of dynamic symbol \(index) outside the string table")
            }
            // "connect@GLIBC_2.2.5", as some tools write names, is the same import.
            let name = String(full.prefix { $0 != "@" })
            if !name.isEmpty && seen.insert(name).inserted { imported.append(name) }
        }
        return imported
    }
}
