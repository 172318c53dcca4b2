import LNPCoreHost
import LNPTools

#if canImport(Glibc)
import Glibc
#endif

/// One ask from the preload (Sources/LNPCore/Asking.swift): `hold PID` or `now PID`, the
/// operation, and the process's usage description, one per line.
struct AskRequestText: Equatable {
    var holding: Bool
    var pid: Int32
    var description: String
    var usage: String

    static func parse(_ bytes: [UInt8]) -> AskRequestText? {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard lines.count >= 2 else { return nil }
        let head = lines[0].split(separator: " ")
        guard head.count == 2, head[0] == "hold" || head[0] == "now", let pid = Int32(head[1]) else { return nil }
        return AskRequestText(
            holding: head[0] == "hold", pid: pid, description: lines[1], usage: lines.count > 2 ? lines[2] : "")
    }
}

/// The socket the preload asks on: SOCK_SEQPACKET (one message per ask), in a directory of
/// its own that only this user can enter, removed when lnp-run ends.
final class AskServer {
    let directory: String
    let path: String
    let fd: Int32

    private init(directory: String, path: String, fd: Int32) {
        self.directory = directory
        self.path = path
        self.fd = fd
    }

    static func start() throws(Failure) -> AskServer {
        let directory = try PrivateDirectory.make(for: "the prompt's socket")
        let path = directory + "/ask"
        guard path.utf8.count < 108 else {
            rmdir(directory)
            throw Failure("the prompt's socket path \(path) is too long; set XDG_RUNTIME_DIR to a shorter directory")
        }
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        let bound = UnixSocketAddress.with(path) { bind(fd, $0, $1) }
        guard fd >= 0, bound == 0, listen(fd, 128) == 0 else {
            let failure = errno
            if fd >= 0 { close(fd) }
            unlink(path)
            rmdir(directory)
            throw Failure("cannot listen on \(path): \(ErrnoName.description(of: failure))")
        }
        return AskServer(directory: directory, path: path, fd: fd)
    }

    /// A connection waiting to be accepted, if any.
    func accept() -> Int32? {
        let client = Glibc.accept(fd, nil, nil)
        guard client >= 0 else { return nil }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
        return client
    }

    /// The ask on a connection, once it has arrived: nil while it has not; `.failure` when
    /// the connection is unusable (closed, or not an ask).
    static func readRequest(_ client: Int32) -> Result<AskRequestText, Failure>? {
        var buffer = [UInt8](repeating: 0, count: 2048)
        let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { return nil }
        guard count > 0, let request = AskRequestText.parse(Array(buffer[0..<count])) else {
            return .failure(Failure("a malformed ask"))
        }
        return .success(request)
    }

    static func reply(_ client: Int32, _ answer: Answer) {
        let wire = answer.wire
        _ = withUnsafeBytes(of: wire) { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(client)
    }

    func stop() {
        close(fd)
        unlink(path)
        rmdir(directory)
    }
}
