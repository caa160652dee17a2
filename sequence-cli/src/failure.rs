//! What a command that fails says, and its exit status: 1 for an error, 2 for a usage mistake,
//! [`PROBLEMS_FOUND`] for a `check` that found problems.

use std::process::ExitCode;

use sequence_runtime::Error;
use serde_json::{json, Value};

/// The exit status of `check` when it finds problems.
pub(crate) const PROBLEMS_FOUND: u8 = 3;

/// A failure: a usage mistake (exit status 2) or an error (exit status 1), with a hint of what
/// to do about it where there is one.
pub(crate) struct Failure {
    usage: bool,
    message: String,
    hint: Option<String>,
    /// What the error lists, as JSON (printed with `--json` as `details`).
    details: Option<Box<Value>>,
    /// The exit status, when it is not 1 or 2.
    status: Option<u8>,
}

impl Failure {
    /// A usage mistake: exit status 2.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure {
            usage: true,
            message: message.into(),
            hint: None,
            details: None,
            status: None,
        }
    }

    /// An error: exit status 1.
    pub(crate) fn error(message: impl Into<String>) -> Self {
        Failure {
            usage: false,
            message: message.into(),
            hint: None,
            details: None,
            status: None,
        }
    }

    /// The failure with `hint`, what to do about it.
    pub(crate) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The failure of a command that printed its result: only exit status `status` is left to
    /// give.
    pub(crate) fn status(mut self, status: u8) -> Self {
        self.status = Some(status);
        self
    }

    /// A failure of the command line's parser (exit status 2): its first line, and the tip or
    /// usage line it gives as the hint.
    pub(crate) fn of_parser(e: &clap::Error) -> Self {
        let text = e.render().to_string();
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let message = lines.next().unwrap_or_default();
        let message = message.strip_prefix("error: ").unwrap_or(message);
        let rest: Vec<&str> = lines.collect();
        let hint = rest
            .iter()
            .find_map(|l| l.strip_prefix("tip: "))
            .or_else(|| rest.iter().find(|l| l.starts_with("Usage: ")).copied())
            .unwrap_or("`mongo-sequence --help` lists the commands and their arguments");
        Failure::usage(message).hint(hint)
    }

    /// Prints the failure on stderr (as JSON with `json`) and returns its exit status.
    pub(crate) fn report(self, json: bool) -> ExitCode {
        if let Some(status) = self.status {
            // The result was printed: only the status is left to give.
            return ExitCode::from(status);
        }
        if json {
            let mut error = json!({ "error": self.message, "hint": self.hint });
            if let Some(details) = self.details {
                error["details"] = *details;
            }
            eprintln!("{error}");
        } else {
            eprintln!("error: {}", self.message);
            if let Some(hint) = &self.hint {
                eprintln!("hint: {hint}");
            }
        }
        ExitCode::from(if self.usage { 2 } else { 1 })
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let hint = match &e {
            Error::WouldMoveBackwards { .. } => {
                Some("`--force` moves it anyway, if no document holds these values")
            }
            Error::CorruptCounter { .. } => Some(
                "for a counter written by other code, give its field and what it holds: \
                 --field NAME --stores last_issued|next_free",
            ),
            Error::Exhausted { .. } => Some("give the counter's own --max, or use another counter"),
            Error::CounterMismatch { .. } => Some(
                "give the --shards, --start, --max and --digits the sequence is configured with",
            ),
            Error::SharedIds { .. } => Some(
                "give each of these documents an ID of its own (`mongo-sequence check` lists \
                 them), then repair again",
            ),
            _ => None,
        };
        let details = match &e {
            Error::SharedIds { ids, count, .. } => {
                let shared = serde_json::to_value(ids).ok();
                Some(Box::new(json!({ "shared": shared, "shared_count": count })))
            }
            _ => None,
        };
        let usage = matches!(
            e,
            Error::InvalidConfig { .. }
                | Error::InvalidName { .. }
                | Error::InvalidArgument { .. }
                | Error::UnmatchableValue { .. }
        );
        Failure {
            usage,
            message: e.to_string(),
            hint: hint.map(str::to_owned),
            details,
            status: None,
        }
    }
}

impl From<mongodb::error::Error> for Failure {
    fn from(e: mongodb::error::Error) -> Self {
        Failure::error(e.to_string())
    }
}
