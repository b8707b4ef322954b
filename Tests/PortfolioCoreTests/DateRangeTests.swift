import Foundation
import PortfolioCore
import Testing

/// Dates are kept in 1900-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z; the writer and the
/// reader agree on every date in that range, and everything outside it is refused.
@Suite struct DateRangeTests {
    let berlin = TimeZone(identifier: "Europe/Berlin")!
    let saoPaulo = TimeZone(identifier: "America/Sao_Paulo")!
    let utc = TimeZone(identifier: "UTC")!
    let now = ISODate.parseTimestamp(utf8: "2024-06-01T12:00:00Z".utf8)!

    @Test func limitsRoundTrip() throws {
        for text in ["1900-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59Z", "1900-01-01T00:00:00.001Z",
                     "1969-12-31T23:59:59.999Z", "1970-01-01T00:00:00Z"] {
            let d = try #require(ISODate.parseTimestamp(utf8: text.utf8), "\(text)")
            #expect(ISODate.format(d) == text)
        }
        #expect(ISODate.format(ISODate.parseTimestamp(utf8: "9999-12-31T23:59:59.9999Z".utf8)!) == "9999-12-31T23:59:59.999Z")
    }

    @Test func outsideTheRangeIsRefusedEvenWhenWellFormed() {
        for text in ["1899-12-31T23:59:59.999Z", "0000-01-01T00:00:00+00:30", "0000-01-01T00:00:00Z",
                     "1900-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00", "9999-12-31T23:59:59.999-00:01"] {
            #expect(ISODate.parseTimestamp(utf8: text.utf8) == nil, "\(text)")
            // Well-formed all the same: the CLI says "out of range" (exit 1), not "not a date" (exit 2).
            #expect(DateInput.parse(text) != nil, "\(text)")
            #expect(throws: DateRangeError.self) { try DateInput.parse(text)?.start(in: utc, now: now) }
        }
        // Offsets that stay inside.
        #expect(ISODate.parseTimestamp(utf8: "1900-01-01T01:00:00+01:00".utf8) == day("1900-01-01T00:00:00Z"))
        #expect(ISODate.parseTimestamp(utf8: "9999-12-31T22:59:59-01:00".utf8) == day("9999-12-31T23:59:59Z"))
    }

    @Test func offsetGrammar() {
        for bad in ["2024-01-01T00:00:00+01:", "2024-01-01T00:00:00+1", "2024-01-01T00:00:00+01:0", "2024-01-01T00:00:00+0130x",
                    "2024-01-01T00:00:00+24:00", "2024-01-01T00:00:00+01:60", "2024-01-01T00:00:00+", "2024-01-01T00:00:00Zx",
                    "2024-01-01T00:00:00.Z"] {
            #expect(ISODate.parseTimestamp(utf8: bad.utf8) == nil, "\(bad)")
            #expect(DateInput.parse(bad) == nil, "\(bad)")
        }
        #expect(ISODate.parseTimestamp(utf8: "2024-01-01T00:00:00+01".utf8) == day("2023-12-31T23:00:00Z"))
        #expect(ISODate.parseTimestamp(utf8: "2024-01-01T00:00:00+0100".utf8) == day("2023-12-31T23:00:00Z"))
    }

    @Test func writerClampsWhatNoInputCanProduce() throws {
        let before = Date(timeIntervalSince1970: -3e12)
        let after = Date(timeIntervalSince1970: 3e11)
        for d in [before, after, Date(timeIntervalSince1970: 253_402_300_799.9996)] {
            let text = ISODate.format(d)
            #expect(ISODate.parseTimestamp(utf8: text.utf8) != nil, "\(text)")
        }
        #expect(ISODate.format(before) == "1900-01-01T00:00:00Z")
        #expect(ISODate.format(after) == "9999-12-31T23:59:59.999Z")
    }

    @Test func bareDaysAtTheEnds() throws {
        #expect(try DateInput.day(1900, 1, 1).start(in: utc, now: now) == day("1900-01-01T00:00:00Z"))
        // Local midnight of 1900-01-01 in Berlin is 1899-12-31T23:00Z: outside.
        #expect(throws: DateRangeError.self) { try DateInput.day(1900, 1, 1).start(in: berlin, now: now) }
        #expect(try DateInput.day(9999, 12, 31).end(in: utc, now: now) == day("9999-12-31T23:59:59.999Z"))
        // Berlin's 9999-12-31 ends at 22:59:59.999Z; one hour west of UTC it would end after the range: cut there.
        #expect(try DateInput.day(9999, 12, 31).end(in: berlin, now: now) == day("9999-12-31T22:59:59.999Z"))
        let west = try #require(TimeZone(secondsFromGMT: -3600))
        #expect(try DateInput.day(9999, 12, 31).start(in: west, now: now) == day("9999-12-31T01:00:00Z"))
        #expect(try DateInput.day(9999, 12, 31).end(in: west, now: now) == day("9999-12-31T23:59:59.999Z"))
        #expect(throws: DateRangeError.self) { try DateInput.parse("0000-01-01")?.start(in: utc, now: now) }
    }

    @Test func bareDayIsLocalMidnightEvenWhenMidnightIsSkipped() throws {
        #expect(try DateInput.parse("2024-01-15")?.start(in: berlin, now: now) == day("2024-01-14T23:00:00Z"))
        // Brazil moved clocks from 00:00 to 01:00 on 2018-11-04: the day starts at 01:00 local (03:00Z).
        #expect(try DateInput.parse("2018-11-04")?.start(in: saoPaulo, now: now) == day("2018-11-04T03:00:00Z"))
        #expect(try DateInput.parse("2018-11-04")?.end(in: saoPaulo, now: now) == day("2018-11-05T01:59:59.999Z"))
        #expect(try DateInput.parse("2018-11-03")?.end(in: saoPaulo, now: now) == day("2018-11-04T02:59:59.999Z"))
        #expect(ISODate.startOfDay((2018, 11, 4), in: saoPaulo) == day("2018-11-04T03:00:00Z"))
    }

    @Test func localTimesWithoutOffset() throws {
        #expect(try DateInput.parse("2024-01-01T10:00")?.start(in: berlin, now: now) == day("2024-01-01T09:00:00Z"))
        #expect(try DateInput.parse("2024-01-01 10:00")?.start(in: berlin, now: now) == day("2024-01-01T09:00:00Z"))
        #expect(try DateInput.parse("2024-07-01 10:00:30")?.start(in: berlin, now: now) == day("2024-07-01T08:00:30Z"))
        #expect(try DateInput.parse("2024-07-01T10:00:30.250")?.start(in: utc, now: now) == day("2024-07-01T10:00:30.250Z"))
        // An offsetless local time is exact, whatever the zone's day boundaries.
        #expect(try DateInput.parse("2024-01-01T10:00")?.end(in: berlin, now: now) == day("2024-01-01T09:00:00Z"))
        // With a zone after a short time, it is that instant.
        #expect(try DateInput.parse("2024-01-01T10:00Z")?.start(in: berlin, now: now) == day("2024-01-01T10:00:00Z"))
        #expect(try DateInput.parse("2024-01-01 10:00+01:00")?.start(in: utc, now: now) == day("2024-01-01T09:00:00Z"))
        #expect(try DateInput.parse("2024-01-01 10:00:30.5-0130")?.start(in: utc, now: now) == day("2024-01-01T11:30:30.500Z"))
        for bad in ["2024-01-01T10", "2024-01-01T10:", "2024-01-01T10:0", "2024-01-01 25:00", "2024-01-01T10:00:",
                    "2024-01-01T10:00:00.", "2024-01-01T10:00 ", "2024-01-01_10:00", "2024-01-01 10:00:61",
                    "2024-01-01T10:00+01:", "2024-01-01T10:00Zz", "2024-01-01T10:00:00.5x", "2024-01-01T10:00 Z"] {
            #expect(DateInput.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func todayAndYesterdayAreLocalDays() throws {
        // 2024-06-01T12:00Z; in Tokyo (UTC+9) it is already 21:00 on June 1; at 23:30Z it is June 2 there.
        let late = day("2024-06-01T23:30:00Z")
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        #expect(try DateInput.parse("today")?.start(in: utc, now: late) == day("2024-06-01T00:00:00Z"))
        #expect(try DateInput.parse("today")?.start(in: tokyo, now: late) == day("2024-06-01T15:00:00Z"))
        #expect(try DateInput.parse("Yesterday")?.start(in: tokyo, now: late) == day("2024-05-31T15:00:00Z"))
        #expect(try DateInput.parse("yesterday")?.end(in: utc, now: late) == day("2024-05-31T23:59:59.999Z"))
        let nov5 = day("2018-11-05T12:00:00Z")
        #expect(try DateInput.parse("yesterday")?.start(in: saoPaulo, now: nov5) == day("2018-11-04T03:00:00Z"))
        #expect(DateInput.parse("tomorrow") == nil)
    }

    /// The fast path of `startOfDay` gives what Calendar gives, on every day of two years in zones
    /// whose clocks change at midnight (or by odd amounts), and on sampled days in every zone.
    @Test func startOfDayAgreesWithCalendar() throws {
        func reference(_ day: (Int64, Int64, Int64), _ zone: TimeZone) -> Date? {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            return calendar.date(from: DateComponents(year: Int(day.0), month: Int(day.1), day: Int(day.2), hour: 12))
                .map { calendar.startOfDay(for: $0) }
        }
        let tricky = ["America/Sao_Paulo", "America/Havana", "America/Santiago", "America/Asuncion", "Asia/Beirut", "Asia/Amman",
                      "Asia/Tehran", "Africa/Cairo", "Australia/Lord_Howe", "Pacific/Chatham", "America/Godthab", "Europe/Berlin",
                      "America/New_York", "Asia/Gaza", "America/Scoresbysund", "Atlantic/Azores", "Pacific/Apia", "Asia/Damascus"]
        let start = ISODate.adding(days: 0, to: (2017, 12, 1))
        for id in tricky {
            let zone = try #require(TimeZone(identifier: id))
            for n in 0..<800 {
                let day = ISODate.adding(days: Int64(n), to: start)
                #expect(ISODate.startOfDay(day, in: zone) == reference(day, zone), "\(id) \(day)")
            }
        }
        var g = SeededRandom(seed: 11)
        for id in TimeZone.knownTimeZoneIdentifiers {
            guard let zone = TimeZone(identifier: id) else { continue }
            for _ in 0..<8 {
                let day = ISODate.adding(days: Int64(g.below(80_000)), to: (1901, 1, 1))
                #expect(ISODate.startOfDay(day, in: zone) == reference(day, zone), "\(id) \(day)")
            }
        }
    }
}
