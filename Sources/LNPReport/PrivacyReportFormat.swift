/// One record of Apple's App Privacy Report, of type `networkActivity`: what one app
/// contacted, how often, first and last, for one kind of initiation.
public struct PrivacyReportActivity: Equatable, Sendable {
    public enum InitiatedType: String, Sendable {
        /// The app itself (attribution `app`).
        case app = "AppInitiated"
        /// The person, through the app — a browser's page load (attribution `user`).
        case user = "NonAppInitiated"
    }

    public var domain: String
    public var firstTimeStamp: AuditTime
    public var timeStamp: AuditTime
    public var initiatedType: InitiatedType
    public var hits: Int
    /// The program's path: Linux programs have no bundle identifier.
    public var bundleID: String

    /// The record as one line of Apple's NDJSON, with Apple's keys in Apple's order:
    /// `{"domain":…,"firstTimeStamp":…,"context":"","timeStamp":…,"domainType":2,
    /// "initiatedType":…,"hits":…,"type":"networkActivity","domainOwner":"","bundleID":…}`.
    public var jsonLine: String {
        "{\"domain\":\(JSONText.string(domain)),\"firstTimeStamp\":\"\(firstTimeStamp.wholeSecondsUTC)\","
            + "\"context\":\"\",\"timeStamp\":\"\(timeStamp.wholeSecondsUTC)\",\"domainType\":2,"
            + "\"initiatedType\":\"\(initiatedType.rawValue)\",\"hits\":\(hits),\"type\":\"networkActivity\","
            + "\"domainOwner\":\"\",\"bundleID\":\(JSONText.string(bundleID))}"
    }
}

/// The report as Apple's App Privacy Report `networkActivity` records (`--format ndjson`).
///
/// Only allowed operations appear: Apple's report lists what an app contacted, and a denied
/// operation contacted nothing (the table and the HTML page show denied ones). Ordinary,
/// non-local activity appears too when it was recorded: Apple's report is of all network
/// activity, not of the local network alone. Each allowed operation is one hit, a name
/// lookup included; its domain is the name when known, else the address.
public enum PrivacyReportFormat {
    /// One record per program, domain and initiation; by program, then domain, app-initiated
    /// first (`ReportBuilder` counts them as the records are read).
    public static func activities(_ report: Report) -> [PrivacyReportActivity] {
        report.programs.flatMap(\.activities)
    }

    public static func lines(_ report: Report) -> [String] { activities(report).map(\.jsonLine) }
}

/// JSON text written by hand, where key order matters and JSONEncoder cannot keep it.
enum JSONText {
    /// A JSON string: quotes, backslashes and control characters escaped; everything else,
    /// non-ASCII included, as UTF-8.
    static func string(_ text: String) -> String {
        var json = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case "\u{08}": json += "\\b"
            case "\u{0C}": json += "\\f"
            case "\u{00}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16)
                json += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: json.unicodeScalars.append(scalar)
            }
        }
        return json + "\""
    }
}
