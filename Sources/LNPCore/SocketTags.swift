import LNPSys

/// What a program said about one of its sockets with the ne_socket API: its attribution and
/// the domains it connects to. Tags belong to the socket, not to the descriptor number:
/// each slot remembers the socket's inode, so a tag survives dup/dup2/dup3/F_DUPFD (the
/// hooks copy it), is forgotten on close, and a new socket that reuses the number reads as
/// untagged even if its close was never seen (an fd closed inside the C library).
///
/// A slot is one word: bits 0–31 the inode's low bits, 32–33 the attribution (0 = not
/// set), 34–63 a reference into `DomainStore` (0 = none). Slots live in chunks of
/// LNP_FD_CHUNK_SLOTS, mapped on first use, so a program that never tags pays nothing.
public struct SocketTag: Equatable, BitwiseCopyable {
    public var inode: UInt32
    public var attribution: Attribution?
    public var domains: DomainReference

    init(word: UInt64) {
        inode = UInt32(truncatingIfNeeded: word)
        attribution = Attribution(rawValue: UInt8(truncatingIfNeeded: word >> 32 & 3))
        domains = DomainReference(rawValue: UInt32(truncatingIfNeeded: word >> 34))
    }

    init(inode: UInt32, attribution: Attribution?, domains: DomainReference) {
        self.inode = inode
        self.attribution = attribution
        self.domains = domains
    }

    var word: UInt64 {
        UInt64(inode) | UInt64(attribution?.rawValue ?? 0) << 32 | UInt64(domains.rawValue) << 34
    }
}

enum SocketTags {
    static let chunkSlots = Int(LNP_FD_CHUNK_SLOTS)
    static let chunks = Int(LNP_FD_CHUNKS)

    /// The slot of `fd`, mapping its chunk first if `create`; nil if out of range or absent.
    static func slot(_ fd: Int32, create: Bool) -> SharedWords? {
        guard fd >= 0 else { return nil }
        let chunkIndex = Int(fd) / chunkSlots
        guard chunkIndex < chunks else { return nil }
        let directory = lnp_storage_fd_chunks()!
        var chunk = lnp_load_pointer(directory + chunkIndex)
        if chunk == nil {
            guard create, let mapped = lnp_sys_map_zeroed(chunkSlots * 8) else { return nil }
            if lnp_install_pointer(directory + chunkIndex, mapped) == 0 {
                _ = Sys.call(Int(SYS_munmap), Int(bitPattern: mapped), chunkSlots * 8)
            }
            chunk = lnp_load_pointer(directory + chunkIndex)
        }
        guard let chunk else { return nil }
        return SharedWords(chunk.assumingMemoryBound(to: UInt64.self) + Int(fd) % chunkSlots)
    }

    /// The tag of the socket `fd` refers to now, or nil if it has none.
    static func tag(of fd: Int32) -> SocketTag? {
        guard let slot = slot(fd, create: false) else { return nil }
        let word = slot.load(0)
        guard word != 0 else { return nil }
        let inode = lnp_sys_socket_inode(fd)
        guard inode >= 0, UInt32(truncatingIfNeeded: inode) == UInt32(truncatingIfNeeded: word) else { return nil }
        return SocketTag(word: word)
    }

    /// Updates the tag of the socket `fd` refers to, and of every other descriptor that
    /// refers to the same socket. Returns 0 or an errno value, as the ne_socket API does.
    static func update(_ fd: Int32, _ change: (inout SocketTag) -> Void) -> Int32 {
        let inode = lnp_sys_socket_inode(fd)
        if inode < 0 { return Int32(truncatingIfNeeded: -inode) }
        guard let slot = slot(fd, create: true) else { return Int32(LNP_ENOMEM) }
        let inodeBits = UInt32(truncatingIfNeeded: inode)
        let old = SocketTag(word: slot.load(0))
        var tag = old.inode == inodeBits ? old : SocketTag(inode: inodeBits, attribution: nil, domains: DomainReference())
        change(&tag)
        slot.store(0, tag.word)
        forEachSibling(of: fd, inode: inodeBits) { sibling in sibling.store(0, tag.word) }
        return 0
    }

    /// Other descriptors whose slots name the same socket (they were dup'ed from `fd`).
    private static func forEachSibling(of fd: Int32, inode: UInt32, _ body: (SharedWords) -> Void) {
        let directory = lnp_storage_fd_chunks()!
        for chunkIndex in 0..<chunks {
            guard let chunk = lnp_load_pointer(directory + chunkIndex) else { continue }
            let slots = chunk.assumingMemoryBound(to: UInt64.self)
            for i in 0..<chunkSlots {
                let other = Int32(chunkIndex * chunkSlots + i)
                let word = lnp_load_relaxed(slots + i)
                if other != fd && word != 0 && UInt32(truncatingIfNeeded: word) == inode
                    && UInt32(truncatingIfNeeded: lnp_sys_socket_inode(other)) == inode
                {
                    body(SharedWords(slots + i))
                }
            }
        }
    }

    /// `fd` is about to be closed.
    @inline(__always) static func forget(_ fd: Int32) {
        guard let slot = slot(fd, create: false), slot.loadRelaxed(0) != 0 else { return }
        slot.store(0, 0)
    }

    /// Descriptors `first…last` are about to be closed.
    static func forget(from first: UInt32, through last: UInt32) {
        let limit = UInt32(chunks * chunkSlots)
        guard first < limit else { return }
        var fd = first
        let end = min(last, limit - 1)
        while fd <= end {
            let chunkIndex = Int(fd) / chunkSlots
            if lnp_load_pointer(lnp_storage_fd_chunks()! + chunkIndex) == nil {
                fd = UInt32((chunkIndex + 1) * chunkSlots)  // a whole absent chunk: nothing to forget
                continue
            }
            forget(Int32(fd))
            fd += 1
        }
    }

    /// `copy` now refers to the same socket as `original` (after a successful dup).
    @inline(__always) static func duplicate(_ original: Int32, to copy: Int32) {
        let word = slot(original, create: false)?.load(0) ?? 0
        if word != 0 {
            slot(copy, create: true)?.store(0, word)
        } else {
            forget(copy)
        }
    }
}
