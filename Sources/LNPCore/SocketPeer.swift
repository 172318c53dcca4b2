import LNPSys

/// The destination a socket is already connecting or connected to, as the kernel keeps it.
enum SocketPeer {
    /// Whether a `connect` to `endpoint` only continues what an earlier one started: the
    /// socket is already connecting or connected there (a non-blocking connect called again
    /// to learn its outcome, as Perl does). The kernel sends nothing new for it, so it is not
    /// a second operation. SO_PEERNAME, unlike getpeername, names the peer of a socket still
    /// connecting; a TCP socket whose attempt failed (state CLOSE) connects anew.
    static func isAlready(_ fd: Int32, _ socket: SocketKind, connectedTo endpoint: SocketEndpoint) -> Bool {
        guard let peer = self.endpoint(fd, socket), peer.address == endpoint.address, peer.port == endpoint.port else {
            return false
        }
        var info = InlineArray<8, UInt8>(repeating: 0)  // struct tcp_info begins with tcpi_state
        let state: UInt8? = withUnsafeMutableBytes(of: &info) { raw in
            guard case .success = Sys.socketOption(fd, level: Int32(LNP_IPPROTO_TCP), Int32(LNP_TCP_INFO), into: raw) else { return nil }
            return raw[0]
        }
        return state != UInt8(LNP_TCP_CLOSE)  // nil: not TCP, where a repeated connect sends nothing
    }

    /// The peer `fd` is connecting or connected to, or nil.
    static func endpoint(_ fd: Int32, _ socket: SocketKind) -> SocketEndpoint? {
        var storage = InlineArray<28, UInt8>(repeating: 0)
        return withUnsafeMutableBytes(of: &storage) { raw in
            // The kernel wants room for no more than the address it holds (EINVAL otherwise).
            let length = socket.domain == Int32(LNP_AF_INET6) ? 28 : 16
            let buffer = UnsafeMutableRawBufferPointer(rebasing: raw[0..<length])
            guard case .success(let length) = Sys.socketOption(fd, level: Int32(LNP_SOL_SOCKET), Int32(LNP_SO_PEERNAME), into: buffer)
            else { return nil }
            return SocketEndpoint.parse(UnsafeRawPointer(raw.baseAddress), length: length)
        }
    }
}
