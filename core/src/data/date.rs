//! Dates for the `since` / `until` search filters: ISO 8601 calendar dates and date-times,
//! as wikis write them in frontmatter (`date: 2024-03-12`, `updated: 2024-03-12T09:30:00Z`),
//! read as Unix seconds. Pure arithmetic, the same on every target (no clock, no time zone
//! database).

/// Seconds since 1970-01-01T00:00:00Z of `text`: `YYYY-MM-DD`, optionally followed by `T` or
/// a space and `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction` (the fraction is dropped), then
/// optionally `Z` or an offset `±HH:MM` / `±HHMM` (none: UTC). A date alone is its first
/// second, or with `end_of_day` its last (so `until: 2024-03-12` keeps all of that day).
/// `None` for anything else, and for impossible dates (`2023-02-29`).
pub fn parse(text: &str, end_of_day: bool) -> Option<i64> {
    let t = text.trim();
    let b = t.as_bytes();
    if b.len() < 10 || !b[..10].is_ascii() || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())).then(|| s.parse().ok())?
    };
    let (y, m, d) = (num(&t[..4])?, num(&t[5..7])?, num(&t[8..10])?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let day = days_from_civil(y, m, d) * 86_400;
    let rest = &t[10..];
    if rest.is_empty() {
        return Some(if end_of_day { day + 86_399 } else { day });
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let (clock, offset) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let clock = clock.split('.').next()?;
    let mut parts = clock.split(':');
    let h = num(parts.next()?)?;
    let min = num(parts.next()?)?;
    let s = parts.next().map_or(Some(0), num)?;
    if parts.next().is_some() || h > 23 || min > 59 || s > 60 {
        return None;
    }
    let offset = match offset {
        "" | "Z" | "z" => 0,
        o => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let o = o[1..].replace(':', "");
            if o.len() != 4 || !o.is_ascii() {
                return None;
            }
            let (oh, om) = (num(&o[..2])?, num(&o[2..])?);
            if oh > 23 || om > 59 {
                return None;
            }
            sign * (oh * 3600 + om * 60)
        }
    };
    Some(day + h * 3600 + min * 60 + s - offset)
}

/// `secs` (Unix seconds) as an RFC 3339 date-time in UTC, `2024-03-12T09:30:00Z`, which
/// [`parse`] reads back.
pub fn format(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The date `days` after 1970-01-01 (proleptic Gregorian; Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to `y-m-d` (proleptic Gregorian; Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn format_writes_what_parse_reads() {
        assert_eq!(super::format(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::format(1_710_235_800), "2024-03-12T09:30:00Z");
        assert_eq!(super::format(-1), "1969-12-31T23:59:59Z");
        for secs in [0, 951_782_400, 1_709_164_800, 4_102_444_799, -86_400 * 400] {
            assert_eq!(parse(&super::format(secs), false), Some(secs), "{secs}");
        }
    }

    #[test]
    fn dates_and_date_times_read_as_unix_seconds() {
        assert_eq!(parse("1970-01-01", false), Some(0));
        assert_eq!(parse("1970-01-01", true), Some(86_399));
        assert_eq!(parse("2024-03-12", false), Some(1_710_201_600));
        assert_eq!(parse("2024-03-12T09:30:00Z", false), Some(1_710_235_800));
        assert_eq!(parse("2024-03-12 09:30", false), Some(1_710_235_800));
        assert_eq!(
            parse("2024-03-12T11:30:00.250+02:00", false),
            Some(1_710_235_800)
        );
        assert_eq!(
            parse("2024-03-12T04:30:00-0500", false),
            Some(1_710_235_800)
        );
        assert_eq!(parse("2000-02-29", false), Some(951_782_400));
        assert_eq!(parse("1969-12-31", false), Some(-86_400));
    }

    #[test]
    fn anything_else_is_not_a_date() {
        for bad in [
            "",
            "2024",
            "2024-3-12",
            "2023-02-29",
            "2024-13-01",
            "2024-00-10",
            "2024-03-32",
            "12/03/2024",
            "2024-03-12T25:00",
            "2024-03-12T09",
            "2024-03-12X",
            "yesterday",
            "2024-03-12T09:30+2",
            "٢٠٢٤-03-12",
            "2024-03-12T09:30+é1",
            "2024-03-1é",
        ] {
            assert_eq!(parse(bad, false), None, "{bad:?}");
        }
    }
}
