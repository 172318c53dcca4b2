import LNPSys

/// An interface name as the kernel stores it: at most 15 bytes, NUL-padded to 16.
public struct InterfaceName: Equatable, BitwiseCopyable {
    public var first: UInt64 = 0
    public var second: UInt64 = 0

    public init() {}

    public init(first: UInt64, second: UInt64) {
        self.first = first
        self.second = second
    }

    /// The first 15 bytes of `name`.
    public init(_ name: UnsafeBufferPointer<UInt8>) {
        var padded = InlineArray<16, UInt8>(repeating: 0)
        for i in 0..<min(name.count, 15) { padded[i] = name[i] }
        self = withUnsafeBytes(of: &padded) { InterfaceName(bytes: $0.baseAddress!) }
    }

    init(bytes: UnsafeRawPointer) {
        first = bytes.loadUnaligned(as: UInt64.self)
        second = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self) & 0x00ff_ffff_ffff_ffff
    }

    public var isEmpty: Bool { first & 0xff == 0 }

    /// The name's length: the place of its first NUL (found in a word at a time: the lowest
    /// byte that is zero sets the lowest flag), 16 when there is none.
    var length: Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let zeros = (first &- ones) & ~first & (ones &* 0x80)
        if zeros != 0 { return zeros.trailingZeroBitCount / 8 }
        return 8 + ((second &- ones) & ~second & (ones &* 0x80)).trailingZeroBitCount / 8
    }

    public func write(to writer: inout ByteWriter) {
        let first = self.first
        let second = self.second
        let length = self.length
        // Both words stored whole (what follows the name is written over next), where 16 fit.
        if writer.writeInPlace(maximum: 16, { text in
            text.storeBytes(of: first.littleEndian, as: UInt64.self)
            text.storeBytes(of: second.littleEndian, toByteOffset: 8, as: UInt64.self)
            return length
        }) {
            return
        }
        for i in 0..<16 {
            let byte = UInt8(truncatingIfNeeded: (i < 8 ? first : second) >> UInt64(8 * (i % 8)))
            if byte == 0 { return }
            writer.append(byte)
        }
    }
}

/// What the classification needs to know about the interface a route leaves through.
public struct InterfaceFacts: Equatable, BitwiseCopyable {
    public var index: UInt32
    public var name: InterfaceName
    public var flags: UInt32

    public init(index: UInt32, name: InterfaceName = InterfaceName(), flags: UInt32) {
        self.index = index
        self.name = name
        self.flags = flags
    }

    public var isUp: Bool { flags & UInt32(LNP_IFF_UP) != 0 }
    public var isBroadcastCapable: Bool { flags & UInt32(LNP_IFF_BROADCAST) != 0 }
    public var isLoopback: Bool { flags & UInt32(LNP_IFF_LOOPBACK) != 0 }
    public var isPointToPoint: Bool { flags & UInt32(LNP_IFF_POINTOPOINT) != 0 }

    /// Asks the kernel, through `socket`, for the name and flags of interface `index`.
    static func read(index: UInt32, through socket: Int32) -> InterfaceFacts? {
        var name = InlineArray<16, UInt8>(repeating: 0)
        var flags: UInt32 = 0
        let status = withUnsafeMutableBytes(of: &name) { raw in
            lnp_sys_interface(socket, index, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), &flags)
        }
        guard status == 0 else { return nil }
        return withUnsafeBytes(of: &name) { raw in
            InterfaceFacts(index: index, name: InterfaceName(bytes: raw.baseAddress!), flags: flags)
        }
    }
}
