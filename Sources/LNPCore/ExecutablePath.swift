import LNPSys

/// The path of the process's executable, as `/proc/self/exe` gives it, read once per process
/// rather than once per record (a record of every local operation would otherwise pay a
/// `readlink` each). Kept with the id of the process that read it: a forked child reads its
/// own (the same file, but never a parent's word for it). Words: 0 sequence, 1 process id,
/// 2 length; then the path (CShim/sys/storage.c).
enum ExecutablePath {
    static var record: SequencedRecord { SequencedRecord(words: SharedWords(lnp_storage_executable_words())) }
    static var path: UnsafeMutablePointer<UInt8> { lnp_storage_executable_path() }

    /// Copies the path into `buffer`; its length, or nil when it cannot be read.
    static func copy(into buffer: UnsafeMutableRawBufferPointer, pid: Int32) -> Int? {
        if let length = cached(into: buffer, pid: pid) { return length }
        guard case .success(let count) = Sys.readlink("/proc/self/exe", into: buffer) else { return nil }
        // readlink fills a buffer too small without a word: a full one may hold a path cut
        // short, which must not become every later record's.
        if count < buffer.count { remember(UnsafeRawBufferPointer(rebasing: buffer[0..<count]), pid: pid) }
        return count
    }

    private static func cached(into buffer: UnsafeMutableRawBufferPointer, pid: Int32) -> Int? {
        let record = record
        guard let sequence = record.beginRead(), record.words.loadRelaxed(1) == UInt64(UInt32(bitPattern: pid)) else {
            return nil
        }
        let length = min(Int(record.words.loadRelaxed(2)), buffer.count, Int(LNP_PATH_CAPACITY))
        UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: path, byteCount: length)
        return record.endRead(sequence) ? length : nil
    }

    private static func remember(_ bytes: UnsafeRawBufferPointer, pid: Int32) {
        guard bytes.count <= Int(LNP_PATH_CAPACITY), let claimed = record.beginWrite() else { return }
        UnsafeMutableRawPointer(path).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        record.words.storeRelaxed(1, UInt64(UInt32(bitPattern: pid)))
        record.words.storeRelaxed(2, UInt64(bytes.count))
        record.endWrite(claimed)
    }
}
