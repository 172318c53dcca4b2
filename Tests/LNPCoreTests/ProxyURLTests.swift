import Testing
@testable import LNPCoreHost

private func host(_ value: String) -> String {
    Array(value.utf8).withUnsafeBufferPointer { String(decoding: ProxyURL.host(in: $0), as: UTF8.self) }
}

@Suite("ProxyURL")
struct ProxyURLTests {
    @Test(arguments: [
        ("http://proxy.example:3128", "proxy.example"),
        ("http://proxy.example:3128/", "proxy.example"),
        ("http://proxy.example", "proxy.example"),
        ("socks5h://10.0.0.1:1080", "10.0.0.1"),
        ("HTTPS://Proxy.Example:443/path/to?x=1#frag", "Proxy.Example"),
        ("http://proxy?x=1", "proxy"),
        ("http://proxy#frag", "proxy"),
    ])
    func withScheme(value: String, expected: String) {
        #expect(host(value) == expected)
    }

    @Test(arguments: [
        ("http://user:secret@proxy.example:3128", "proxy.example"),
        ("http://user@proxy.example", "proxy.example"),
        ("http://us@er:p@ss@proxy:8080/", "proxy"),  // the last @ ends the user information
        ("http://proxy/path@elsewhere", "proxy"),  // an @ in the path is not user information
        ("user:pw@10.1.2.3:8080", "10.1.2.3"),
    ])
    func userInformation(value: String, expected: String) {
        #expect(host(value) == expected)
    }

    @Test(arguments: [
        ("http://[fe80::1%eth0]:3128", "fe80::1"),
        ("http://[fe80::1%25eth0]:3128/", "fe80::1"),
        ("http://user@[2001:db8::1]:80", "2001:db8::1"),
        ("[2001:db8::1]:80", "2001:db8::1"),
        ("[::1]", "::1"),
        ("http://[::1", "::1"),  // unclosed: up to the end of the authority
        ("http://[", ""),
    ])
    func bracketedIPv6(value: String, expected: String) {
        #expect(host(value) == expected)
    }

    @Test(arguments: [
        ("proxy.example:3128", "proxy.example"),
        ("proxy.example", "proxy.example"),
        ("10.0.0.1", "10.0.0.1"),
        ("proxy/x://y", "proxy"),  // "://" after a slash is not a scheme
        ("", ""),
        ("http://", ""),
        ("/only/a/path", ""),
        (":3128", ""),
    ])
    func withoutScheme(value: String, expected: String) {
        #expect(host(value) == expected)
    }

    @Test func resultLiesInsideTheValue() {
        let value = Array("http://user@proxy:1/".utf8)
        value.withUnsafeBufferPointer { buffer in
            let result = ProxyURL.host(in: buffer)
            #expect(result.baseAddress == buffer.baseAddress! + 12)
            #expect(result.count == 5)
        }
    }
}
