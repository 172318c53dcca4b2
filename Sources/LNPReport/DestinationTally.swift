/// One destination's operations as they are read, for `ReportBuilder`: counts,
/// first and last, and the addresses and operations seen, each with when it was first seen, so
/// that the report lists them in time order however the records came. A report keeps one per
/// program and destination — tens of thousands in a large audit — so it is kept small: times
/// as microseconds, the destination only as the key it is filed under.
struct DestinationTally {
    private var denied = 0, app = 0, user = 0
    private var first: Int64, last: Int64
    /// The causes of its denials (`because`).
    private var causes = DenialCauseSet()
    /// Why it is local (or not): the `reason` of its earliest record (the least, of records of
    /// the same instant), so that the report is the same whatever order the records came in;
    /// and whether other records gave other reasons.
    private var reason: String?
    private var reasonTime: Int64
    private var otherReasons = false
    private var addresses = FirstSeen()
    private var operations = FirstSeen()
    /// Allowed operations, app- and user-initiated: what Apple's records count
    /// (`PrivacyReportActivity`), kept here rather than in a table of their own; together,
    /// the destination's allowed operations.
    private(set) var allowedByApp = Contact()
    private(set) var allowedByUser = Contact()

    /// Operations, and the first and last of them; none when `hits` is 0.
    struct Contact {
        var hits = 0
        var first: Int64 = 0, last: Int64 = 0

        mutating func add(_ time: Int64) { add(Contact(hits: 1, first: time, last: time)) }

        mutating func add(_ other: Contact) {
            guard other.hits > 0 else { return }
            if hits == 0 {
                self = other
                return
            }
            hits += other.hits
            first = min(first, other.first)
            last = max(last, other.last)
        }
    }

    init(_ entry: AuditEntry, reasons: inout ReasonTexts) {
        first = entry.time.microsecondsSinceEpoch
        last = first
        reason = entry.reason.map { reasons.shared($0) }
        reasonTime = first
    }

    /// `order`: the record's place in what was read, for records of the same instant.
    /// `domain`: the destination's (`Destination.domain`): an address that is the domain is not listed.
    mutating func add(_ entry: AuditEntry, order: Int, domain: String, reasons: inout ReasonTexts) {
        let time = entry.time.microsecondsSinceEpoch
        if entry.reason == reason {
            reasonTime = min(reasonTime, time)
        } else {
            otherReasons = true
            if time < reasonTime || (time == reasonTime && (entry.reason ?? "") < (reason ?? "")) {
                reason = entry.reason.map { reasons.shared($0) }
                reasonTime = time
            }
        }
        if let address = entry.address, address != domain { addresses.see(address, at: time, order: order) }
        operations.see(entry.op, at: time, order: order)
        if entry.attribution == .app { app += 1 } else { user += 1 }
        first = min(first, time)
        last = max(last, time)
        if entry.decision == .allow {
            if entry.attribution == .app { allowedByApp.add(time) } else { allowedByUser.add(time) }
        } else {
            denied += 1
            causes.insert(entry.because)
        }
    }

    func report(_ destination: Destination) -> DestinationReport {
        var report = DestinationReport(
            destination: destination, first: AuditTime(microsecondsSinceEpoch: first),
            last: AuditTime(microsecondsSinceEpoch: last))
        report.tally = Tally(allowed: allowedByApp.hits + allowedByUser.hits, denied: denied)
        report.app = app
        report.user = user
        report.addresses = addresses.inOrder
        report.operations = operations.inOrder
        report.deniedBecause = causes
        report.reason = reason
        report.otherReasons = otherReasons
        return report
    }
}

/// Words (addresses, operations) with the earliest time each was seen. Most destinations
/// have one operation and one address or none: the first is kept inline; more are looked up
/// in a list, and past 16 in an index too.
private struct FirstSeen {
    private struct Seen {
        var word: String
        var time: Int64
        var order: Int
    }

    private var first: Seen?
    private var more: [Seen] = []
    private var index: [String: Int]?

    mutating func see(_ word: String, at time: Int64, order: Int) {
        guard let seen = first else {
            first = Seen(word: word, time: time, order: order)
            return
        }
        if seen.word == word {
            if time < seen.time { first = Seen(word: word, time: time, order: order) }
            return
        }
        let at = index.map { $0[word] } ?? more.firstIndex { $0.word == word }
        if let at {
            if time < more[at].time { more[at] = Seen(word: word, time: time, order: order) }
            return
        }
        more.append(Seen(word: word, time: time, order: order))
        if index != nil {
            index?[word] = more.count - 1
        } else if more.count > 16 {
            index = Dictionary(uniqueKeysWithValues: more.enumerated().map { ($1.word, $0) })
        }
    }

    var inOrder: [String] {
        guard let first else { return [] }
        return ([first] + more).sorted { ($0.time, $0.order) < ($1.time, $1.order) }.map(\.word)
    }
}

extension AuditTime {
    /// Microseconds since 1970, for tallies: 8 bytes rather than 16, and exact for any time an
    /// audit file can hold (RFC 3339 years up to 9999).
    var microsecondsSinceEpoch: Int64 { seconds * 1_000_000 + Int64(microseconds) }

    init(microsecondsSinceEpoch value: Int64) {
        let seconds = value >= 0 ? value / 1_000_000 : (value - 999_999) / 1_000_000
        self.init(seconds: seconds, microseconds: Int32(value - seconds * 1_000_000))
    }
}

/// The `reason` texts of a report's destinations, kept once each: a large audit has tens of
/// thousands of destinations and a handful of reasons (`on-link 10.77.0.0/24 via c0`), each
/// too long to be kept inside a String. Past `limit` texts, further ones are kept as they come.
struct ReasonTexts {
    private var texts: Set<String> = []
    static let limit = 1024

    mutating func shared(_ text: String) -> String {
        if let kept = texts.firstIndex(of: text) { return texts[kept] }
        if texts.count < Self.limit { texts.insert(text) }
        return text
    }
}
