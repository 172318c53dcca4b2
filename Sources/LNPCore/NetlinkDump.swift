import LNPSys

/// Dumps of the kernel's routing rules and tables (rtnetlink, NLM_F_DUMP), read into the
/// static dump buffer by the one thread that holds the route snapshot.
enum NetlinkDump {
    /// Whether `family`'s policy rules are exactly the default ones.
    static func hasDefaultRules(_ family: IPAddress.Family, through socket: Int32) -> Bool {
        var seen: UInt8 = 0
        var other = false
        let complete = dump(UInt16(LNP_RTM_GETRULE), family, through: socket) { type, message in
            guard type == UInt16(LNP_RTM_NEWRULE) else { return }
            if let bit = RouteDump.defaultRule(message), seen & bit == 0 { seen |= bit } else { other = true }
        }
        return complete && !other && seen == RouteDump.defaultRules(family)
    }

    /// Stores `family`'s routes of the tables the default rules consult into `staging` from
    /// entry `start` on; returns the entries in all, or nil if one cannot be modelled, they
    /// do not fit, or the dump could not be read whole.
    static func routes(_ family: IPAddress.Family, through socket: Int32, into staging: SharedWords, from start: Int) -> Int? {
        var count = start
        var modelled = true
        let complete = dump(UInt16(LNP_RTM_GETROUTE), family, through: socket) { type, message in
            guard type == UInt16(LNP_RTM_NEWROUTE), modelled else { return }
            switch RouteDump.route(message, family: family) {
            case .entry(let entry):
                guard count < RouteSnapshot.capacity else { modelled = false; return }
                entry.store(to: staging.advanced(by: count * RouteEntry.words))
                count += 1
            case .skipped: break
            case .unmodelled: modelled = false
            }
        }
        return complete && modelled ? count : nil
    }

    /// Sends a dump request and hands every message of the reply to `each`, reading it to its
    /// end even when `each` has seen enough (the socket takes one dump at a time). False if the
    /// dump failed, was interrupted by a change of the tables, or did not end.
    private static func dump(
        _ type: UInt16, _ family: IPAddress.Family, through socket: Int32, _ each: (UInt16, UnsafeRawBufferPointer) -> Void
    ) -> Bool {
        let sequence = UInt32(truncatingIfNeeded: lnp_fetch_add(Counter.netlinkSequence.word, 1) &+ 1)
        var request = InlineArray<28, UInt8>(repeating: 0)
        let sent = withUnsafeMutableBytes(of: &request) { raw in
            raw.storeBytes(of: UInt32(raw.count), toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: type, toByteOffset: 4, as: UInt16.self)
            raw.storeBytes(of: UInt16(LNP_NLM_F_REQUEST | LNP_NLM_F_DUMP), toByteOffset: 6, as: UInt16.self)
            raw.storeBytes(of: sequence, toByteOffset: 8, as: UInt32.self)
            raw.storeBytes(of: UInt8(family == .v4 ? LNP_AF_INET : LNP_AF_INET6), toByteOffset: 16, as: UInt8.self)
            return Sys.call(Int(LNP_SYS_SENDTO), Int(socket), Int(bitPattern: raw.baseAddress), raw.count)
        }
        guard case .success = sent else { return false }
        let buffer = UnsafeMutableRawPointer(lnp_storage_netlink_dump()!)
        let size = Int(LNP_NETLINK_DUMP_SIZE)
        // The kernel fills each read as it is made, so the reply is there without waiting.
        for _ in 0..<4096 {
            let received = Sys.call(
                Int(LNP_SYS_RECVFROM), Int(socket), Int(bitPattern: buffer), size, Int(LNP_MSG_DONTWAIT | LNP_MSG_TRUNC))
            guard case .success(let count) = received, count > 0, count <= size else { return false }
            var offset = 0
            while offset + RouteDump.headerSize <= count {
                let message = buffer + offset
                let length = Int(message.loadUnaligned(as: UInt32.self))
                let messageType = message.loadUnaligned(fromByteOffset: 4, as: UInt16.self)
                let flags = message.loadUnaligned(fromByteOffset: 6, as: UInt16.self)
                guard length >= RouteDump.headerSize, offset + length <= count else { return false }
                if message.loadUnaligned(fromByteOffset: 8, as: UInt32.self) == sequence {
                    if flags & UInt16(LNP_NLM_F_DUMP_INTR) != 0 || messageType == UInt16(LNP_NLMSG_ERROR) { return false }
                    if messageType == UInt16(LNP_NLMSG_DONE) { return true }
                    each(messageType, UnsafeRawBufferPointer(start: message, count: length))
                }
                offset += (length + 3) & ~3
            }
        }
        return false
    }
}
