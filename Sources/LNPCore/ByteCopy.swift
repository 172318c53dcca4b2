/// Copies of the short pieces a record is made of, in words rather than bytes: a piece of
/// up to sixteen bytes is two loads and two stores (the second overlapping the first), where
/// the memory functions' `rep movsb` takes a step per byte, and a call besides. Generic
/// copies (`update(from:)`) are slower still in Embedded Swift: they go through value
/// witnesses. Source and destination must not overlap.
enum ByteCopy {
    @inline(__always)
    static func copy(_ destination: UnsafeMutableRawPointer, _ source: UnsafeRawPointer, count: Int) {
        if count >= 8 {
            var offset = 0
            while offset < count &- 8 {
                destination.storeBytes(of: source.loadUnaligned(fromByteOffset: offset, as: UInt64.self), toByteOffset: offset, as: UInt64.self)
                offset &+= 8
            }
            // The last eight, overlapping what is copied already.
            destination.storeBytes(of: source.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self), toByteOffset: count &- 8, as: UInt64.self)
        } else if count >= 4 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
            destination.storeBytes(of: head, as: UInt32.self)
            destination.storeBytes(of: tail, toByteOffset: count &- 4, as: UInt32.self)
        } else if count >= 2 {
            let head = source.loadUnaligned(as: UInt16.self)
            let tail = source.loadUnaligned(fromByteOffset: count &- 2, as: UInt16.self)
            destination.storeBytes(of: head, as: UInt16.self)
            destination.storeBytes(of: tail, toByteOffset: count &- 2, as: UInt16.self)
        } else if count == 1 {
            destination.storeBytes(of: source.load(as: UInt8.self), as: UInt8.self)
        }
    }
}
