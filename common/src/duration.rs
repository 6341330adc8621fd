//! The one duration grammar of the workspace's flags and files: a number of seconds (`30`,
//! `0.5`) or what jiff's `SignedDuration` reads (its friendly format, `500ms`, `2m`,
//! `1h 30m`, and ISO 8601, `PT5M`), from 0 to 24 hours.

use std::{fmt, time::Duration};

/// The longest duration accepted: a day.
pub const MAX_DURATION: Duration = Duration::from_secs(86_400);

/// Why a value is not a duration this workspace takes; the text says what would be valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError {
    /// Neither a number nor a duration.
    NotADuration,
    /// Negative, or longer than [`MAX_DURATION`].
    OutOfRange,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NotADuration => {
                "use a number of seconds (30) or a duration such as 500ms, 30s, 2m or 1h 30m"
            }
            Self::OutOfRange => "use 0s to 24h",
        })
    }
}

impl std::error::Error for DurationError {}

/// Reads `text` (surrounding white space ignored) as a duration.
///
/// # Errors
/// [`DurationError`] when it is not one, or is out of range.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let text = text.trim();
    let seconds = match text.parse::<f64>() {
        Ok(seconds) => seconds,
        Err(_) => text
            .parse::<jiff::SignedDuration>()
            .map_err(|_| DurationError::NotADuration)?
            .as_secs_f64(),
    };
    from_seconds(seconds)
}

/// A number of seconds as a duration (a JSON number in a file).
///
/// # Errors
/// [`DurationError::OutOfRange`] when negative, not finite, or longer than a day.
pub fn from_seconds(seconds: f64) -> Result<Duration, DurationError> {
    if seconds.is_finite() && (0.0..=MAX_DURATION.as_secs_f64()).contains(&seconds) {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(DurationError::OutOfRange)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_seconds_and_the_rest_is_jiffs_grammar() {
        for (text, seconds) in [
            ("30", 30.0),
            (" 0.5 ", 0.5),
            ("500ms", 0.5),
            ("5s", 5.0),
            ("2m", 120.0),
            ("1h 30m", 5400.0),
            ("PT5M", 300.0),
            ("24h", 86_400.0),
        ] {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_secs_f64(seconds)),
                "{text}"
            );
        }
    }

    #[test]
    fn refusals_say_what_would_be_valid() {
        assert_eq!(parse_duration("soon"), Err(DurationError::NotADuration));
        assert_eq!(
            parse_duration("5 parsecs"),
            Err(DurationError::NotADuration)
        );
        assert_eq!(parse_duration("25h"), Err(DurationError::OutOfRange));
        assert_eq!(parse_duration("-1s"), Err(DurationError::OutOfRange));
        assert_eq!(parse_duration("NaN"), Err(DurationError::OutOfRange));
        assert_eq!(from_seconds(-0.5), Err(DurationError::OutOfRange));
        assert_eq!(
            DurationError::NotADuration.to_string(),
            "use a number of seconds (30) or a duration such as 500ms, 30s, 2m or 1h 30m"
        );
        assert_eq!(DurationError::OutOfRange.to_string(), "use 0s to 24h");
    }
}
