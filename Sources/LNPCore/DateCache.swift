import LNPSys

/// The date of the day the process last wrote a record for, so that a record need not turn
/// its day number into a date again (a hundred instructions of divisions). Kept in one
/// shared word, read and written whole: a thread, a signal handler or a forked child reads
/// either an old day's entry or a new one, each complete, and an entry for another day is
/// simply computed again — no lock, nothing a fork can leave half done. Word: bit 63 "set",
/// bits 32–55 the day number plus 2²³, bits 16–31 the year, 8–15 the month, 0–7 the day.
/// Only years 0–9999 are kept (the four-digit years a record writes in place).
enum DateCache {
    static let set: UInt64 = 1 << 63
    static let dayBias: Int64 = 1 << 23

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let key = UInt64(bitPattern: days &+ dayBias)
        let word = lnp_load_relaxed(lnp_storage_date())
        if key < 1 << 24 && word & set != 0 && word >> 32 & 0xff_ffff == key {
            return (Int64(word >> 16 & 0xffff), Int64(word >> 8 & 0xff), Int64(word & 0xff))
        }
        let date = Timestamp.civil(fromDays: days)
        if key < 1 << 24 && date.year >= 0 && date.year <= 9999 {
            lnp_store_relaxed(lnp_storage_date(), set | key << 32 | UInt64(date.year) << 16 | UInt64(date.month) << 8 | UInt64(date.day))
        }
        return date
    }
}
