import Foundation
import PackagePlugin

/// Names the git revision a build is made from, for `--version`: scripts/git-revision writes
/// `GitRevision.swift` (`let gitRevision = "abc1234"`, or "unknown" outside a git checkout)
/// into the target it is applied to. A build command whose inputs are the files git changes
/// when HEAD moves (a commit, a checkout, a reset), so that it runs again then and only then:
/// SwiftPM does not run prebuild commands on a build that skips loading the package
/// (swiftlang/swift-package-manager#5476), which would keep an old revision.
@main
struct GitRevision: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "GitRevision.swift")
        return [
            .buildCommand(
                displayName: "Naming the git revision of this build",
                executable: URL(filePath: "/bin/sh"),
                arguments: [
                    package.appending(path: "scripts/git-revision").path(percentEncoded: false),
                    package.path(percentEncoded: false),
                    output.path(percentEncoded: false),
                ],
                inputFiles: [package.appending(path: "scripts/git-revision")] + headFiles(of: package),
                outputFiles: [output])
        ]
    }

    /// HEAD, its log (appended to at every move of HEAD) and the index, in the package's git
    /// directory: `.git`, or the one a `.git` file names (a worktree). None outside git.
    private func headFiles(of package: URL) -> [URL] {
        var gitDirectory = package.appending(path: ".git")
        if let link = try? String(contentsOf: gitDirectory, encoding: .utf8), link.hasPrefix("gitdir: ") {
            let path = link.dropFirst("gitdir: ".count).trimmingCharacters(in: .whitespacesAndNewlines)
            gitDirectory = path.hasPrefix("/") ? URL(filePath: path) : package.appending(path: path)
        }
        return ["HEAD", "logs/HEAD", "index"].map { gitDirectory.appending(path: $0) }
            .filter { FileManager.default.fileExists(atPath: $0.path(percentEncoded: false)) }
    }
}
