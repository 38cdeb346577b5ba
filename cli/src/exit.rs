//! Exit codes, documented in `nagi --help` and the README.

pub const EXIT_OK: i32 = 0;
/// The server answered with an error (its code is printed), or a project check failed.
pub const EXIT_REMOTE_ERROR: i32 = 1;
/// The command line or an input file is wrong.
pub const EXIT_USAGE: i32 = 2;
/// No server could be reached or started.
pub const EXIT_UNREACHABLE: i32 = 3;
/// A wait ended without its condition.
pub const EXIT_TIMEOUT: i32 = 4;

pub const EXIT_CODES_HELP: &str = "Exit codes:
  0  success
  1  the server answered with an error (the stable error code is printed),
     a `nagi project check` failed, or `nagi proof verify` found a file
     that does not match
  2  usage error: bad arguments or an invalid input file
  3  no nagi server could be reached or started
  4  a wait timed out";

#[derive(Debug)]
pub enum CliError {
    Usage(String),
    Remote { code: String, message: String },
    Unreachable(String),
    Timeout(String),
}

impl CliError {
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Remote { code, .. } if code == "timeout" => EXIT_TIMEOUT,
            CliError::Remote { .. } => EXIT_REMOTE_ERROR,
            CliError::Unreachable(_) => EXIT_UNREACHABLE,
            CliError::Timeout(_) => EXIT_TIMEOUT,
        }
    }

    pub fn report(&self, json: bool) {
        match self {
            CliError::Remote { code, message } if json => {
                println!(
                    "{}",
                    serde_json::json!({"error": {"code": code, "message": message}})
                );
            }
            CliError::Remote { code, message } => eprintln!("nagi: error {code}: {message}"),
            CliError::Usage(message) => eprintln!("nagi: {message}"),
            CliError::Unreachable(message) => eprintln!("nagi: {message}"),
            CliError::Timeout(message) => eprintln!("nagi: {message}"),
        }
    }
}
