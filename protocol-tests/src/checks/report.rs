//! The report model: a check's verdict (on the one scale [`Verdict`] that `mcp-client
//! doctor` and the review of tool definitions use too) and evidence, and the report printed as
//! text or JSON.

pub use mcp_client::tools::review::Verdict;
use serde::Serialize;

/// A check's verdict and what was seen, as each check returns it.
pub type Outcome = (Verdict, String);

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckResult {
    /// The check.
    pub name: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// What was seen.
    pub evidence: String,
}

/// Every check's result for one server.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The server command line.
    pub server: String,
    /// The checks, in the order run.
    pub checks: Vec<CheckResult>,
}

impl Report {
    /// The result of the check `name`.
    pub fn get(&self, name: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// How many checks got `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.checks.iter().filter(|c| c.verdict == verdict).count()
    }

    /// One line per check, then the summary. Evidence that holds newlines (a server's
    /// multi-line error message) continues on lines indented by four spaces, so every line
    /// that does not start with a space starts a check; other control characters are escaped.
    pub fn text(&self) -> String {
        let mut lines: Vec<String> = self
            .checks
            .iter()
            .map(|c| {
                format!(
                    "{} {}: {}",
                    c.verdict.label(),
                    c.name,
                    indent_evidence(&c.evidence)
                )
            })
            .collect();
        let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        lines.push(format!(
            "{} passed, {} failed, {}, {}, {} skipped, {} not applicable",
            self.count(Verdict::Pass),
            self.count(Verdict::Fail),
            plural(self.count(Verdict::Warn), "warning"),
            plural(self.count(Verdict::Note), "note"),
            self.count(Verdict::Skip),
            self.count(Verdict::NotApplicable)
        ));
        lines.join("\n")
    }
}

/// `evidence` with each line break followed by four spaces and other control characters
/// escaped.
fn indent_evidence(evidence: &str) -> String {
    let mut shown = String::with_capacity(evidence.len());
    for line in evidence.trim_end_matches(['\n', '\r']).split('\n') {
        if !shown.is_empty() {
            shown.push_str("\n    ");
        }
        for c in line.chars() {
            if c.is_control() {
                shown.extend(c.escape_default());
            } else {
                shown.push(c);
            }
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_evidence_stays_under_its_check() {
        let report = Report {
            server: "s".into(),
            checks: vec![
                CheckResult {
                    name: "invalid arguments".into(),
                    verdict: Verdict::Pass,
                    evidence: "2 validation errors\nx\n  Field required\r\u{1b}[31m\n".into(),
                },
                CheckResult {
                    name: "ping".into(),
                    verdict: Verdict::Pass,
                    evidence: "answered".into(),
                },
            ],
        };
        assert_eq!(
            report.text(),
            "PASS invalid arguments: 2 validation errors\n    x\n      Field required\\r\\u{1b}[31m\nPASS ping: answered\n2 passed, 0 failed, 0 warnings, 0 notes, 0 skipped, 0 not applicable"
        );
    }
}
