/// What lnp-run finds for a program when it starts.
public enum Lookup: Equatable, Sendable {
    /// The administrator's entry if there is one, else the person's.
    case decided(Decision)
    /// Nobody decided: ask.
    case undetermined
    /// The store or the administrator's file cannot be read (the message names it): deny,
    /// without asking and without recording anything.
    case unavailable(String)
}

public enum DecisionLookup {
    /// The decision in force for the program at `path`. Reads the administrator's file, then
    /// (if it does not decide) the person's store, which is not created when missing: one
    /// small file read, and one indexed query.
    public static func lookup(
        _ path: String, storePath: String, administratorPath: String = AdministratorDecisions.defaultPath
    ) -> Lookup {
        let administrator = Self.administrator(path, administratorPath: administratorPath)
        if administrator != .undetermined { return administrator }
        do {
            guard let store = try DecisionStore.open(path: storePath, create: false) else { return .undetermined }
            guard let decision = try store.decision(for: path) else { return .undetermined }
            return .decided(decision)
        } catch {
            return .unavailable(error.description)
        }
    }

    /// The administrator's decision alone: what stands even against lnp-run's --allow and --deny.
    public static func administrator(_ path: String, administratorPath: String = AdministratorDecisions.defaultPath) -> Lookup {
        do {
            let administrator = try AdministratorDecisions.load(path: administratorPath)
            return administrator.decision(for: path).map(Lookup.decided) ?? .undetermined
        } catch {
            return .unavailable("the administrator's file is malformed or unreadable: \(error)")
        }
    }
}
