import Testing
@testable import LNPCoreHost

/// Every slow-path call asks first whether the settings let everything through unasked and
/// unrecorded, from the packed word alone; that answer must be the settings' own.
@Suite("Settings packed into a word")
struct SettingsPackingTests {
    @Test func everythingPassesOnlyWhenAllowedUnaskedAndUnrecorded() {
        for decision in [Decision.allow, .deny] {
            for asking in [AskMode.never, .holding, .denyingWhileAsking] {
                for records in [RecordScope.none, .local, .all] {
                    for errno in [Int32(113), 1, 0xffff] {
                        var settings = Settings()
                        settings.decision = decision
                        settings.asking = asking
                        settings.records = records
                        settings.errno = errno
                        settings.attribution = .user
                        let expected = decision == .allow && asking == .never && records == .none
                        #expect(SettingsStore.passesEveryOperation(packed: SettingsStore.pack(settings)) == expected,
                                "\(decision) \(asking) \(records) errno \(errno)")
                    }
                }
            }
        }
    }
}
