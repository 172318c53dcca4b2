/// lnp's version, for `--version`. The number is written here and nowhere else (scripts/package
/// reads it from `lnp --version`); the git revision is the build's, named by the GitRevision
/// plugin at build time (`gitRevision`, in a file it writes).
public enum ProjectVersion {
    public static let number = "0.1.0"
    /// The short commit the build was made from, or "unknown" for a build outside a git
    /// checkout.
    public static let revision = gitRevision

    /// What `COMMAND --version` prints: `lnp-run 0.1.0 (git abc1234)`.
    public static func line(for command: String) -> String {
        "\(command) \(number) (git \(revision))"
    }
}
