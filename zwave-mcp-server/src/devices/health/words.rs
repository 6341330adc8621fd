//! A link's health in words a person reads: "has been dead since 18:02", "31% of commands to
//! it timed out (5 of 16)", "through Hall Switch at 40 kbit/s".

use std::time::Duration;

use super::assess::{Problem, percent};
use crate::network::health::Route;

/// One problem in words.
pub fn problem(problem: &Problem) -> String {
    match problem {
        Problem::FailedToSend { failed, attempts } => format!(
            "{}% of commands to it could not be sent ({failed} of {attempts})",
            percent(*failed, *attempts)
        ),
        Problem::TimedOut { timeouts, sent } => format!(
            "{}% of commands to it timed out ({timeouts} of {sent})",
            percent(*timeouts, *sent)
        ),
        Problem::WeakSignal(dbm) => format!("its signal is weak ({dbm} dBm)"),
        Problem::NoSignal => "the controller detects no signal from it".to_owned(),
        Problem::Slow(rtt) => format!("commands take {} on average", millis(*rtt)),
        Problem::LongRoute(repeaters) => {
            format!("its last route needs {repeaters} repeaters")
        }
        Problem::SlowestSpeed => "its last route ran at 9.6 kbit/s, the slowest speed".to_owned(),
        Problem::Quiet(silent) => format!("not heard from for {}", span(*silent)),
    }
}

/// How a route went: `directly at 100 kbit/s`, `through Hall Switch and another device at
/// 40 kbit/s`. `repeaters`: their names as this agent may see them.
pub fn route(route: &Route, repeaters: &[String]) -> String {
    let via = match repeaters {
        [] => "directly".to_owned(),
        [one] => format!("through {one}"),
        [first @ .., last] => format!("through {} and {last}", first.join(", ")),
    };
    match route.data_rate {
        Some(rate) => format!("{via} at {}", rate.words()),
        None => via,
    }
}

/// `68 ms`, `1.2 s`.
pub fn millis(duration: Duration) -> String {
    let ms = duration.as_secs_f64() * 1000.0;
    if ms < 1000.0 {
        format!("{} ms", ms.round())
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// `45 s`, `12 min`, `5 h`, `3 days`.
pub fn span(duration: Duration) -> String {
    match duration.as_secs() {
        seconds @ 0..=119 => format!("{seconds} s"),
        seconds @ 120..=7_199 => format!("{} min", seconds / 60),
        seconds @ 7_200..=172_799 => format!("{} h", seconds / 3_600),
        seconds => format!("{} days", seconds / 86_400),
    }
}

/// When `at_ms` was, for a sentence about `now_ms`: `18:02` today, `Mon 18:02` before.
pub fn clock(at_ms: i64, now_ms: i64) -> String {
    let Ok(at) = jiff::Timestamp::from_millisecond(at_ms) else {
        return "an unknown time".to_owned();
    };
    let format = if now_ms.saturating_sub(at_ms) < 20 * 3600 * 1000 {
        "%H:%M"
    } else {
        "%a %H:%M"
    };
    at.to_zoned(jiff::tz::TimeZone::system())
        .strftime(format)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::health::DataRate;

    #[test]
    fn problems_routes_and_times_read_as_a_person_says_them() {
        assert_eq!(
            problem(&Problem::TimedOut {
                timeouts: 5,
                sent: 16
            }),
            "31% of commands to it timed out (5 of 16)"
        );
        assert_eq!(
            problem(&Problem::FailedToSend {
                failed: 1,
                attempts: 20
            }),
            "5% of commands to it could not be sent (1 of 20)"
        );
        assert_eq!(
            problem(&Problem::Slow(Duration::from_millis(1_240))),
            "commands take 1.2 s on average"
        );
        assert_eq!(
            problem(&Problem::Quiet(Duration::from_secs(3 * 86_400))),
            "not heard from for 3 days"
        );
        let at_40 = Route {
            data_rate: Some(DataRate::Kbit40),
            repeaters: Vec::new(),
            rssi: None,
            failed_between: None,
        };
        assert_eq!(route(&at_40, &[]), "directly at 40 kbit/s");
        assert_eq!(
            route(&at_40, &["Hall Switch".into()]),
            "through Hall Switch at 40 kbit/s"
        );
        assert_eq!(
            route(
                &Route {
                    data_rate: None,
                    ..at_40
                },
                &["A".into(), "B".into(), "another device".into()]
            ),
            "through A, B and another device"
        );
        assert_eq!(millis(Duration::from_micros(68_700)), "69 ms");
        assert_eq!(span(Duration::from_secs(7_200)), "2 h");
    }
}
