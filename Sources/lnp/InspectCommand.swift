import ArgumentParser
import Foundation
import LNPTools
import SystemPackage

/// `lnp inspect FILE|DIRECTORY…`: which executables lnp-run can observe, and why not —
/// for administrators auditing programs on behalf of their users. Files are read, never run.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect", abstract: "Tell which executables lnp-run can observe, and why not.",
        discussion: """
            For each file: dynamic or static, its interpreter, setuid/setgid bits, file capabilities, \
            whether it is a Go program, its build-id, the libraries it needs and the socket functions it \
            imports, and the verdict with its reasons. A directory stands for its executable files (not \
            its subdirectories, unless --recursive). The files are only read, never executed. The exit \
            status is 1 if a file could not be inspected; the others are still reported.
            """)

    @Flag(help: "Print a JSON array instead of a table.")
    var json = false

    @Flag(name: .shortAndLong, help: "Look into subdirectories too.")
    var recursive = false

    @Argument(help: ArgumentHelp("The executables, or directories of them, to inspect.", valueName: "FILE|DIRECTORY"))
    var paths: [String] = []

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one file or directory") }
    }

    func run() throws {
        let preload = Self.preload()
        var rows: [InspectionRow] = []
        for entry in InspectionTargets.expand(paths, recursive: recursive) {
            switch entry {
            case .file(let path):
                rows.append(InspectionRow(ProgramInspection.inspect(path: path, preload: preload)))
            case .failure(let path, let reason):
                rows.append(InspectionRow(failed: path, reason: reason))
            }
        }
        if json {
            try Output.json(rows)
        } else {
            for line in Self.table(rows) { print(line) }
        }
        if rows.contains(where: { $0.error != nil }) { throw ExitCode(1) }
    }

    /// liblnp.so as lnp-run would find it (installed: ../lib/lnp/ or ../lib/TRIPLET/lnp/ from bin/lnp; in a build
    /// directory: beside bin/); failing that, this program's own file, built for the same machine.
    static func preload() -> ELFFile? {
        guard let executable = PreloadLocator.currentExecutable() else { return nil }
        let parent = FilePath(executable).removingLastComponent().removingLastComponent()
        let found = PreloadLocator.locate(beside: executable) ?? PreloadLocator.locate(beside: parent.appending("lnp").string)
        return try? ELFFile.read(path: found ?? executable)
    }

    /// One line per file (path, kind, verdict, reasons), then its details and notes, indented.
    static func table(_ rows: [InspectionRow]) -> [String] {
        let main = Output.table(
            [["PATH", "KIND", "VERDICT", "REASONS"]]
                + rows.map { row in
                    let verdict = row.observable.map { $0 ? "observable" : "not observable" } ?? (row.runs ? "-" : "cannot run")
                    let reasons = row.error.map { "error: " + $0 } ?? row.reasons.joined(separator: "; ")
                    return [row.path, row.kind, verdict, reasons]
                })
        var lines = [main[0]]
        for (row, line) in zip(rows, main.dropFirst()) {
            lines.append(line)
            let details = row.details
            if !details.isEmpty { lines.append("    " + UntrustedText.visible(details.joined(separator: "; "))) }
            lines += row.warnings.map { "    note: " + UntrustedText.visible($0) }
        }
        return lines
    }
}

/// One file as `lnp inspect --json` shows it. Every key is always present; what does not
/// apply or is unknown is null.
struct InspectionRow: Encodable, Equatable {
    var path: String
    var kind: String
    var interpreter: String?
    var owner: UInt32?
    var group: UInt32?
    var setuid: Bool
    var setgid: Bool
    var fileCapabilities: String?
    var go: Bool
    var buildID: String?
    var architecture: String?
    var needed: [String]
    var imports: [String]
    var bonjour: [String]
    var bonjourGated: Bool?
    var observable: Bool?
    /// false for a script whose interpreter is missing.
    var runs: Bool
    var reasons: [String]
    var warnings: [String]
    var error: String?

    init(_ inspection: ProgramInspection) {
        path = inspection.path
        kind = inspection.kind.rawValue
        interpreter = inspection.interpreter
        owner = inspection.owner
        group = inspection.group
        setuid = inspection.setuid
        setgid = inspection.setgid
        fileCapabilities = inspection.fileCapabilities
        go = inspection.isGo
        buildID = inspection.buildID
        architecture = inspection.architecture
        needed = inspection.needed
        imports = inspection.imports
        bonjour = inspection.bonjour
        bonjourGated = inspection.bonjourGated
        observable = inspection.isObservable
        runs = inspection.missingInterpreter == nil
        reasons = inspection.reasons
        warnings = inspection.warnings
        error = inspection.error
    }

    init(failed path: String, reason: String) {
        self.init(ProgramInspection(path: path, error: reason))
    }

    /// The facts, briefly, for the table's second line.
    var details: [String] {
        var parts: [String] = []
        if let architecture { parts.append(architecture) }
        if let interpreter { parts.append((kind == "script" ? "run by " : "interpreter ") + interpreter) }
        if let fileCapabilities { parts.append("capabilities " + fileCapabilities) }
        if let buildID { parts.append("build-id " + buildID.prefix(12)) }
        if !imports.isEmpty { parts.append("imports " + imports.joined(separator: ", ")) }
        if !needed.isEmpty { parts.append("needs " + needed.joined(separator: ", ")) }
        if let bonjourGated {
            parts.append("Bonjour through " + bonjour.joined(separator: ", ") + (bonjourGated ? " (gated)" : " (not gated)"))
        }
        return parts
    }

    // Absent values are written as null, not left out.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(kind, forKey: .kind)
        try container.encode(interpreter, forKey: .interpreter)
        try container.encode(owner, forKey: .owner)
        try container.encode(group, forKey: .group)
        try container.encode(setuid, forKey: .setuid)
        try container.encode(setgid, forKey: .setgid)
        try container.encode(fileCapabilities, forKey: .fileCapabilities)
        try container.encode(go, forKey: .go)
        try container.encode(buildID, forKey: .buildID)
        try container.encode(architecture, forKey: .architecture)
        try container.encode(needed, forKey: .needed)
        try container.encode(imports, forKey: .imports)
        try container.encode(bonjour, forKey: .bonjour)
        try container.encode(bonjourGated, forKey: .bonjourGated)
        try container.encode(observable, forKey: .observable)
        try container.encode(runs, forKey: .runs)
        try container.encode(reasons, forKey: .reasons)
        try container.encode(warnings, forKey: .warnings)
        try container.encode(error, forKey: .error)
    }

    enum CodingKeys: String, CodingKey {
        case path, kind, interpreter, owner, group, setuid, setgid, fileCapabilities, go, buildID, architecture, needed,
            imports, bonjour, bonjourGated, observable, runs, reasons, warnings, error
    }
}
