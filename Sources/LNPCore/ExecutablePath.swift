import LNPSys

/// The path of the process's executable, as `/proc/self/exe` gives it, read once per process
/// rather than once per record (a record of every local operation would otherwise pay a
/// `readlink` each). A forked child keeps its parent's: until it executes another program
/// (which starts with this storage empty) it runs the same file. Words: 0 sequence, 1 the
/// path's length, 0 until it is read (a path is never empty); the path itself in its own
/// buffer (CShim/sys/storage.c).
enum ExecutablePath {
    static var record: SequencedRecord { SequencedRecord(words: SharedWords(lnp_storage_executable_words())) }
    static var path: UnsafeMutablePointer<UInt8> { lnp_storage_executable_path() }

    /// Copies the path into `buffer`; its length, or nil when it cannot be read.
    static func copy(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        if let length = cached(into: buffer) { return length }
        guard case .success(let count) = Sys.readlink("/proc/self/exe", into: buffer) else { return nil }
        // readlink fills a buffer too small without a word: a full one may hold a path cut
        // short, which must not become every later record's.
        if count < buffer.count { remember(UnsafeRawBufferPointer(rebasing: buffer[0..<count])) }
        return count
    }

    private static func cached(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let record = record
        guard let sequence = record.beginRead() else { return nil }
        let stored = Int(record.words.loadRelaxed(1))
        guard stored > 0 else { return nil }
        let length = min(stored, buffer.count, Int(LNP_PATH_CAPACITY))
        UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: path, byteCount: length)
        return record.endRead(sequence) ? length : nil
    }

    private static func remember(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0, bytes.count <= Int(LNP_PATH_CAPACITY), let claimed = record.beginWrite() else { return }
        UnsafeMutableRawPointer(path).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        record.words.storeRelaxed(1, UInt64(bytes.count))
        record.endWrite(claimed)
    }
}
