import Testing
@testable import LNPCoreHost

/// The stream to the system bus as the gate reads it (`BusStream`): authentication lines to
/// BEGIN, then messages framed by their headers, however the program cuts its writes.
struct BusStreamTests {
    static let authentication = Array("\0AUTH EXTERNAL 30\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n".utf8)
    static let browse = BusMessageTests.browseLittle  // ServiceBrowserNew(-1, -1, "_ipp._tcp", "local", 0)
    /// org.freedesktop.DBus.Hello(), serial 1, as jeepney writes it.
    static let hello = BusMessageTests.hex("6c01000100000000010000006d00000001016f00150000002f6f72672f667265656465736b746f702f4442757300000002017300140000006f72672e667265656465736b746f702e4442757300000000030173000500000048656c6c6f00000006017300140000006f72672e667265656465736b746f702e4442757300000000")

    /// Plans `bytes` the way the writer does; the step and the state once it has gone.
    private func plan(_ stream: BusStream, _ bytes: [UInt8]) -> (BusStream.Step, BusStream) {
        var next = stream
        let step = bytes.withUnsafeBytes { next.scan($0, limit: $0.count) }
        return (step, next)
    }

    private func sends(_ step: BusStream.Step) -> Int? {
        if case .send(let count) = step { return count }
        return nil
    }

    @Test func authenticationAndAnUngatedCallGoTogether() {
        let bytes = Self.authentication + Self.hello
        let (step, after) = plan(BusStream(), bytes)
        #expect(sends(step) == bytes.count)
        #expect(after.phase == .messages && after.passing == 0)
    }

    @Test func aGatedCallStopsTheSendAtItsStartAndIsDecidedThere() throws {
        var stream = BusStream()
        let bytes = Self.authentication + Self.hello + Self.browse
        let (step, _) = plan(stream, bytes)
        #expect(sends(step) == Self.authentication.count + Self.hello.count)
        // Once those went, the call starts the next write: decided before a byte of it goes.
        _ = bytes.withUnsafeBytes { stream.scan($0, limit: Self.authentication.count + Self.hello.count) }
        let (next, _) = plan(stream, Self.browse)
        guard case .decide = next else { Issue.record("not decided: \(next)"); return }
        let gated = Self.browse.withUnsafeBytes { BusStream.gatedCall($0) }
        #expect(gated?.0.serial == 7 && gated?.0.length == Self.browse.count && gated?.1.operation == .browse)
    }

    @Test func aRefusedCallIsDroppedWholeThenTheStreamGoesOn() {
        var stream = BusStream()
        _ = Self.authentication.withUnsafeBytes { stream.scan($0, limit: $0.count) }
        stream.swallowing = Self.browse.count
        // The program writes the call in two parts, then a Hello.
        let (first, afterFirst) = plan(stream, Array(Self.browse[0..<50]))
        guard case .drop(50) = first else { Issue.record("\(first)"); return }
        let rest = Array(Self.browse[50...]) + Self.hello
        let (second, afterSecond) = plan(afterFirst, rest)
        guard case .drop(let dropped) = second, dropped == Self.browse.count - 50 else { Issue.record("\(second)"); return }
        let (third, _) = plan(afterSecond, Self.hello)
        #expect(sends(third) == Self.hello.count)
    }

    @Test func aMessageStartTooShortToReadIsHeldWhateverCutsIt() {
        var stream = BusStream()
        _ = Self.authentication.withUnsafeBytes { stream.scan($0, limit: $0.count) }
        for cut in [1, 15, 16, 100, 170] {
            let (step, after) = plan(stream, Array(Self.browse[0..<cut]))
            guard case .hold = step else { Issue.record("\(cut): \(step)"); continue }
            #expect(after == stream)
        }
    }

    @Test func aSendCutShortByTheKernelLeavesTheRestOfTheMessageToPass() {
        var stream = BusStream()
        let bytes = Self.authentication + Self.hello + Self.hello
        _ = bytes.withUnsafeBytes { stream.scan($0, limit: Self.authentication.count + 10) }
        #expect(stream.phase == .messages && stream.passing == Self.hello.count - 10)
        // The next write starts inside the Hello: its rest, then the next Hello, go.
        let (step, after) = plan(stream, Array(bytes[(Self.authentication.count + 10)...]))
        #expect(sends(step) == 2 * Self.hello.count - 10 && after.passing == 0)
    }

    @Test func authenticationLinesMatchBeginWholeAndAcrossWrites() {
        var stream = BusStream()
        for piece in ["\0AUTH EXTERNAL\r\n", "BEG", "INX\r\n", "DATA\r\n", "BE", "GIN\r", "\n"] {
            let bytes = Array(piece.utf8)
            let step = bytes.withUnsafeBytes { stream.scan($0, limit: $0.count) }
            #expect(sends(step) == bytes.count)
        }
        #expect(stream.phase == .messages)
    }

    @Test func beginWithArgumentsTheBusIgnoresStartsTheMessages() {
        var stream = BusStream()
        let bytes = Array("\0AUTH EXTERNAL 30\r\nBEGIN ignored\r\n".utf8)
        _ = bytes.withUnsafeBytes { stream.scan($0, limit: $0.count) }
        #expect(stream.phase == .messages)
        guard case .decide = plan(stream, Self.browse).0 else { Issue.record("the call after it was not read"); return }
        // A line ends at CR LF alone, as the bus reads it: after `AUTH X\n`, BEGIN is still
        // inside the AUTH line.
        var bare = BusStream()
        _ = Array("\0AUTH X\nBEGIN\r\n".utf8).withUnsafeBytes { bare.scan($0, limit: $0.count) }
        #expect(bare.phase == .authenticating)
        _ = Array("BEGIN\r\n".utf8).withUnsafeBytes { bare.scan($0, limit: $0.count) }
        #expect(bare.phase == .messages)
        var carriage = BusStream()
        _ = Array("\0DATA\r\rBEGIN\r\n".utf8).withUnsafeBytes { carriage.scan($0, limit: $0.count) }
        #expect(carriage.phase == .authenticating)
        // BEGINNING is another line.
        var other = BusStream()
        _ = Array("\0BEGINNING\r\n".utf8).withUnsafeBytes { other.scan($0, limit: $0.count) }
        #expect(other.phase == .authenticating)
    }

    @Test func aMessageWhoseHeaderDoesNotFitTheReadLimitIsRefusedNotTheConnection() throws {
        var stream = BusStream()
        _ = Self.authentication.withUnsafeBytes { stream.scan($0, limit: $0.count) }
        // A fixed header announcing 4,000 bytes of fields, then the fields.
        var long: [UInt8] = [UInt8(ascii: "l"), 1, 0, 1, 0, 0, 0, 0, 9, 0, 0, 0, 0xa0, 0x0f, 0, 0]
        long += [UInt8](repeating: 0, count: 4000)
        guard case .refuse = plan(stream, long).0 else { Issue.record("not refused"); return }
        let header = try #require(long.withUnsafeBytes { BusMessage.fixedHeader($0) })
        #expect(header.serial == 9 && header.length == 4016 && header.kind == .methodCall)
    }

    @Test func whatIsNotAMessageWhereOneShouldStartIsUnreadable() {
        var stream = BusStream()
        _ = Self.authentication.withUnsafeBytes { stream.scan($0, limit: $0.count) }
        let (step, _) = plan(stream, Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        guard case .unreadable = step else { Issue.record("\(step)"); return }
        // After a good message, it stops the send there.
        let (before, _) = plan(stream, Self.hello + Array(repeating: 0x41, count: 16))
        #expect(sends(before) == Self.hello.count)
    }

    @Test func aConnectionLibdbusDecidesPassesWhole() {
        var stream = BusStream()
        stream.phase = .library
        let bytes = Self.authentication + Self.browse
        #expect(sends(plan(stream, bytes).0) == bytes.count)
    }
}
