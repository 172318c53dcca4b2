/// The decision store cannot be used. It is never replaced or deleted because of this: the
/// caller reports it (and, on lnp-run's path, denies without asking or recording).
public struct StoreFailure: Error, Equatable, CustomStringConvertible {
    /// The store's file.
    public var path: String
    /// What is wrong, e.g. "file is not a database", "permission denied".
    public var reason: String
    /// Whether it failed while changing the store (it may still be readable).
    public var writing: Bool

    public init(path: String, reason: String, writing: Bool = false) {
        self.path = path
        self.reason = reason
        self.writing = writing
    }

    public var description: String {
        "the decision store \(path) \(writing ? "cannot be written" : "is unreadable"): \(reason)"
    }
}
