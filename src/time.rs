//! Calendar arithmetic on Unix milliseconds: ISO 8601 timestamps for results and retry hints, and
//! HTTP dates from `Retry-After`. Small enough that a date crate would cost more than it saves.

/// `ms` (Unix milliseconds) as ISO 8601 UTC with milliseconds, e.g. `2026-01-01T00:00:00.000Z`:
/// JavaScript's `Date.prototype.toISOString` for years 0 to 9999.
pub(crate) fn iso8601_utc_ms(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Howard Hinnant's
/// algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// (year, month, day), proleptic Gregorian, to days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`) as Unix milliseconds.
pub(crate) fn parse_http_date(text: &str) -> Option<u64> {
    let mut parts = text.split_whitespace();
    let _weekday = parts.next()?;
    let day: u32 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut hms = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, mi, s) = (hms.next()??, hms.next()??, hms.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year, month, day)).ok()?;
    Some((days * 86_400 + h * 3600 + mi * 60 + s) * 1000)
}

/// The whole seconds of an ISO 8601 UTC timestamp (`2026-01-01T00:00:05.1234567Z`, fraction
/// optional), as Unix seconds: the form GitHub puts on log lines and step times.
pub(crate) fn parse_iso8601_seconds(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let digits = |from: usize, len: usize| -> Option<u64> {
        let part = b.get(from..from + len)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')))
    };
    let separators = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if separators.iter().any(|&(i, c)| b.get(i) != Some(&c)) {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (h, mi, s) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    let rest = &b[19..];
    let fraction = rest.strip_prefix(b".").map_or(0, |f| {
        f.iter().take_while(|c| c.is_ascii_digit()).count() + 1
    });
    if rest.get(fraction) != Some(&b'Z') || fraction == 1 {
        return None;
    }
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let days = u64::try_from(days_from_civil(year as i64, month as u32, day as u32)).ok()?;
    Some(days * 86_400 + h * 3600 + mi * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_iso_dates_like_javascript() {
        for (ms, want) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_767_225_600_000, "2026-01-01T00:00:00.000Z"),
            (1_767_225_599_999, "2025-12-31T23:59:59.999Z"),
            // Leap days: an ordinary leap year, a century leap year, and the day after Feb 28
            // in a century that is not a leap year.
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_709_164_800_123, "2024-02-29T00:00:00.123Z"),
            (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
            (4_107_542_399_000, "2100-02-28T23:59:59.000Z"),
            (1_735_603_200_000, "2024-12-31T00:00:00.000Z"),
            (68_169_600_000, "1972-02-29T00:00:00.000Z"),
            (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
            (1_767_268_245_678, "2026-01-01T11:50:45.678Z"),
        ] {
            assert_eq!(iso8601_utc_ms(ms), want, "{ms}");
        }
    }

    #[test]
    fn every_day_of_a_leap_cycle_round_trips() {
        // Walk 400 years day by day and check the calendar never skips or repeats a day.
        let (mut y, mut m, mut d) = (1970, 1, 1);
        for days in 0..146_097 {
            assert_eq!(
                civil_from_days(days as i64),
                (y as i64, m as u32, d as u32),
                "day {days}"
            );
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let len = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            d += 1;
            if d > len {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Thu, 01 Jan 2026 00:05:00 GMT"),
            Some(1_767_225_900_000)
        );
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2000 00:00:00 GMT"),
            Some(951_782_400_000)
        );
        for bad in [
            "soon",
            "Thu, 01 Foo 2026 00:05:00 GMT",
            "Thu, 01 Jan 2026 24:00:00 GMT",
            "Thu, 01 Jan 2026 00:05:00 PST",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn iso_seconds() {
        for (text, want) in [
            ("2026-01-01T00:00:05Z", Some(1_767_225_605)),
            ("2026-01-01T00:00:05.1234567Z", Some(1_767_225_605)),
            (
                "2026-01-01T00:00:05.1234567Z rest of the line",
                Some(1_767_225_605),
            ),
            ("2000-02-29T23:59:59.000Z", Some(951_868_799)),
            ("2026-01-01T00:00:05", None),
            ("2026-01-01T00:00:05.Z", None),
            ("2026-13-01T00:00:05Z", None),
            ("2026-01-01 00:00:05Z", None),
            ("20260101T000005Z", None),
            ("", None),
        ] {
            assert_eq!(parse_iso8601_seconds(text), want, "{text}");
        }
    }
}
