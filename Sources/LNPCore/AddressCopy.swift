/// lnp's private copy of a call's `sockaddr` (CShim/sys/include/lnp_copy.h): what the core
/// decides on, and what the call hands the kernel.
struct AddressCopy {
    let bytes: UnsafeMutableRawPointer
    let length: Int

    /// Leaves the call to the kernel, which will refuse or ignore this address (a descriptor
    /// that is no socket, a family the socket cannot take, a TCP socket without Fast Open): it
    /// still gives its own errno, but reads the address zeroed past its family, so that a
    /// socket another thread puts on the descriptor meanwhile reaches nothing on the network
    /// (the unspecified address and port 0 lead to this machine at most). Returns 0: go on.
    func disarm() -> Int32 {
        if length > 2 { (bytes + 2).initializeMemory(as: UInt8.self, repeating: 0, count: length - 2) }
        return 0
    }

    /// For an AF_UNSPEC destination the socket reads in `family`: zeroes the place of the
    /// other reading (an IPv4 address at bytes 4–8, an IPv6 one at 8–24), which this socket
    /// does not read, so a socket swapped in that would read it finds nothing there.
    func keepOnly(_ family: IPAddress.Family) {
        let (start, end) = family == .v4 ? (8, length) : (4, min(8, length))
        if end > start { (bytes + start).initializeMemory(as: UInt8.self, repeating: 0, count: end - start) }
    }
}
