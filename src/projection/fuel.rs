//! The fuel of one request, which its projections draw on in turn: the calls of a batch share
//! what one request may spend, rather than each starting afresh.

use std::cell::Cell;

use super::meter::Limits;

/// Fuel left to one request's projections.
#[derive(Debug)]
pub struct Fuel(Cell<u64>);

impl Fuel {
    /// `units` of fuel.
    pub fn new(units: u64) -> Fuel {
        Fuel(Cell::new(units))
    }

    /// What one request may spend: one projection run's default fuel.
    pub(crate) fn request() -> Fuel {
        Fuel::new(Limits::default().fuel)
    }

    /// Units left.
    pub(crate) fn left(&self) -> u64 {
        self.0.get()
    }

    /// Whether nothing is left.
    pub(crate) fn spent(&self) -> bool {
        self.left() == 0
    }

    /// The limits of the next run: `limits` with no more fuel than is left.
    pub(super) fn limits(&self, limits: Limits) -> Limits {
        Limits {
            fuel: limits.fuel.min(self.left()),
            ..limits
        }
    }

    /// Takes `units` spent by a run.
    pub(super) fn spend(&self, units: u64) {
        self.0.set(self.left().saturating_sub(units));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::Projection;
    use crate::value::{parse, Value};

    #[test]
    fn runs_drawing_on_one_fuel_share_it() {
        let program = Projection::compile(".[0] | [range(.)] | length");
        let input = || parse("[20000]").unwrap();
        let alone = Fuel::request();
        assert_eq!(
            program.apply_or_error_value_within(input(), &alone, None),
            parse("20000").unwrap()
        );
        let one_run = Limits::default().fuel - alone.left();
        assert!(one_run > 20_000, "{one_run}");
        // Room for one run and a half: the second run stops where the fuel ends.
        let shared = Fuel::new(one_run + one_run / 2);
        assert_eq!(
            program.apply_or_error_value_within(input(), &shared, None),
            parse("20000").unwrap()
        );
        let second = program.apply_or_error_value_within(input(), &shared, None);
        let reason = format!("{:?}", second.get("_jqError"));
        assert!(reason.contains("budget exhausted"), "{reason}");
        assert!(shared.spent());
    }

    #[test]
    fn what_does_not_run_spends_nothing() {
        let fuel = Fuel::new(5);
        for blank_or_broken in ["", "  ", ".[ | ("] {
            Projection::compile(blank_or_broken).apply_or_error_value_within(
                Value::Null,
                &fuel,
                None,
            );
            assert_eq!(fuel.left(), 5, "{blank_or_broken:?}");
        }
    }
}
