import Foundation
import PackagePlugin

/// Names the git revision a build is made from, for `--version`: before every build,
/// scripts/git-revision writes `GitRevision.swift` (`let gitRevision = "abc1234"`, or
/// "unknown" outside a git checkout) into the target it is applied to. A prebuild command, so
/// that a new commit is seen without any input SwiftPM could watch; the file is rewritten only
/// when the revision changes, so an unchanged tree relinks nothing.
@main
struct GitRevision: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        return [
            .prebuildCommand(
                displayName: "Naming the git revision of this build",
                executable: URL(filePath: "/bin/sh"),
                arguments: [
                    package.appending(path: "scripts/git-revision").path(percentEncoded: false),
                    package.path(percentEncoded: false),
                    output.appending(path: "GitRevision.swift").path(percentEncoded: false),
                ],
                outputFilesDirectory: output)
        ]
    }
}
