import CGNUExtensions

#if canImport(Glibc)
import Glibc
#endif

/// errno values by name (`EHOSTUNREACH`) or number, as the C library names them.
public enum ErrnoName {
    /// The value of `text`: a name such as `ECONNREFUSED` (any case) or a number.
    public static func value(of text: String) -> Int32? {
        if let number = Int32(text), number > 0, number < 4096 { return name(of: number) == nil ? nil : number }
        var wanted = text.uppercased()
        // Names the C library gives to the same values under another name.
        wanted = ["EWOULDBLOCK": "EAGAIN", "ENOTSUP": "EOPNOTSUPP", "EDEADLOCK": "EDEADLK"][wanted] ?? wanted
        for number in Int32(1)..<Int32(256) where name(of: number) == wanted { return number }
        return nil
    }

    /// `EHOSTUNREACH` for 113, or nil for a number the C library does not name.
    public static func name(of number: Int32) -> String? {
        guard let name = strerrorname_np(number) else { return nil }
        return String(cString: name)
    }

    public static func description(of number: Int32) -> String { String(cString: strerror(number)) }
}
