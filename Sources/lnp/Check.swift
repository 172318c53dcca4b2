import ArgumentParser
import Foundation
import LNPCoreHost
import LNPTools

/// `lnp check ADDRESS…`: whether each address is on the local network here, and why —
/// decided by the same core, against the same kernel routes, as the preload decides.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tell whether addresses are on the local network here, and why.",
        discussion: """
            Takes IPv4 and IPv6 addresses (fe80::1%eth0 with a scope, ::ffff:10.0.0.5 mapped) and \
            .local names. Names in other domains are not resolved: lnp never sends a query itself.
            """)

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    @Option(help: ArgumentHelp(
        "The destination port (a DNS server is exempt only for DNS: ports 53 and 853).", valueName: "PORT"))
    var port: UInt16 = 0

    @Option(help: ArgumentHelp(
        "Check as a socket that forces this output interface would reach each address (SO_BINDTODEVICE, IP_PKTINFO and the like).",
        valueName: "INTERFACE"))
    var interface: String?

    // (allUnrecognized: `-1` is an address to refuse by name, not an option to drop)
    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The addresses or .local names to check.", valueName: "ADDRESS"))
    var targets: [String] = []

    struct Answer: Codable, Equatable {
        var target: String
        var address: String?
        var local: Bool
        var reason: String
    }

    func validate() throws {
        if targets.isEmpty { throw ValidationError("give at least one address") }
        for target in targets {
            if target.hasPrefix("--") { throw ValidationError("unknown option '\(target)'") }
            if case .failure(let failure) = CheckTarget.parse(target) { throw ValidationError(failure.description) }
        }
        if let interface, if_nametoindex(interface) == 0 { throw ValidationError("'\(interface)' names no interface here") }
    }

    func run() throws {
        lnpCoreStart()  // the proxy variables of this environment, as a wrapped program would read them
        let outputInterface = interface.map { if_nametoindex($0) } ?? 0
        let classifier = Classifier(routes: KernelRoutes(outputInterface: outputInterface), exemptions: LiveExemptions())
        let answers = targets.map { target -> Answer in
            switch try! CheckTarget.parse(target).get() {
            case .localName(let name):
                return Answer(target: name, address: nil, local: true, reason: VerdictText.reason(.local(.localName)))
            case .address(var endpoint, let text):
                endpoint.port = port
                let verdict = classifier.classify(endpoint)
                let scope = endpoint.scopeID == 0 ? nil : VerdictText.interfaceName(endpoint.scopeID)
                return Answer(
                    target: text, address: AddressText.string(endpoint.address), local: verdict.isLocal,
                    reason: VerdictText.reason(verdict, scopeName: scope))
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(answers), as: UTF8.self))
            return
        }
        let width = answers.map { UntrustedText.visible($0.target).count }.max() ?? 0
        for answer in answers {
            let verdict = answer.local ? "local    " : "not local"
            print(UntrustedText.visible(answer.target).padding(toLength: width, withPad: " ", startingAt: 0) + "  " + verdict
                + "  " + answer.reason)
        }
    }
}
