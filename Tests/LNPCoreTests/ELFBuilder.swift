/// Builds small ELF files by hand, in either class and byte order, for the cases real
/// binaries on this machine do not cover (32-bit, big-endian, Go notes, extended numbering).
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

    func build() -> [UInt8] {
        let headerSize = wide ? 64 : 52
        let programEntrySize = wide ? 56 : 32
        let sectionEntrySize = wide ? 64 : 40
        var out = [UInt8](repeating: 0, count: headerSize + programs.count * programEntrySize)

        func align() { while out.count % 8 != 0 { out.append(0) } }
        func put(_ value: UInt64, _ size: Int, at offset: Int) {
            for i in 0..<size {
                let shift = little ? 8 * i : 8 * (size - 1 - i)
                out[offset + i] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
            }
        }
        func address(_ value: Int, at offset: Int) { put(UInt64(value), wide ? 8 : 4, at: offset) }

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
        var names: [UInt8] = [0]
        var nameOffsets: [Int] = []
        for section in sections {
            nameOffsets.append(names.count)
            names += Array(section.name.utf8) + [0]
        }
        let namesName = names.count
        names += Array(".shstrtab".utf8) + [0]
        let namesPlace = out.count
        out += names
        align()

        let sectionCount = sections.count + 2
        let sectionTable = out.count
        if withSectionTable { out += [UInt8](repeating: 0, count: sectionCount * sectionEntrySize) }

        out[0...3] = [0x7f, 0x45, 0x4c, 0x46]
        out[4] = wide ? 2 : 1
        out[5] = little ? 1 : 2
        out[6] = 1
        put(UInt64(type), 2, at: 16)
        put(UInt64(machine), 2, at: 18)
        put(1, 4, at: 20)
        address(programs.isEmpty ? 0 : headerSize, at: wide ? 32 : 28)
        address(withSectionTable ? sectionTable : 0, at: wide ? 40 : 32)
        put(UInt64(headerSize), 2, at: wide ? 52 : 40)
        put(UInt64(programEntrySize), 2, at: wide ? 54 : 42)
        put(UInt64(extendedNumbering ? 0xffff : programs.count), 2, at: wide ? 56 : 44)
        put(UInt64(sectionEntrySize), 2, at: wide ? 58 : 46)
        put(UInt64(withSectionTable && !extendedNumbering ? sectionCount : 0), 2, at: wide ? 60 : 48)
        put(UInt64(withSectionTable ? (extendedNumbering ? 0xffff : sectionCount - 1) : 0), 2, at: wide ? 62 : 50)

        for (index, program) in programs.enumerated() {
            let entry = headerSize + index * programEntrySize
            put(UInt64(program.type), 4, at: entry)
            if wide {
                put(UInt64(programPlaces[index]), 8, at: entry + 8)
                put(UInt64(program.data.count), 8, at: entry + 32)
                put(UInt64(program.data.count), 8, at: entry + 40)
            } else {
                put(UInt64(programPlaces[index]), 4, at: entry + 4)
                put(UInt64(program.data.count), 4, at: entry + 16)
                put(UInt64(program.data.count), 4, at: entry + 20)
            }
        }

        guard withSectionTable else { return out }
        func section(_ index: Int, name: Int, type: UInt32, offset: Int, size: Int, link: Int = 0, info: Int = 0) {
            let entry = sectionTable + index * sectionEntrySize
            put(UInt64(name), 4, at: entry)
            put(UInt64(type), 4, at: entry + 4)
            address(offset, at: entry + (wide ? 24 : 16))
            address(size, at: entry + (wide ? 32 : 20))
            put(UInt64(link), 4, at: entry + (wide ? 40 : 24))
            put(UInt64(info), 4, at: entry + (wide ? 44 : 28))
        }
        if extendedNumbering {
            section(0, name: 0, type: 0, offset: 0, size: sectionCount, link: sectionCount - 1, info: programs.count)
        }
        for (index, entry) in sections.enumerated() {
            section(index + 1, name: nameOffsets[index], type: entry.type, offset: sectionPlaces[index], size: entry.data.count)
        }
        section(sectionCount - 1, name: namesName, type: 3, offset: namesPlace, size: names.count)
        return out
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
