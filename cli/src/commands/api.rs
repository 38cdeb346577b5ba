//! `nagi api schema`: needs no server.

use clap::{Args, Subcommand};

use crate::CommandResult;
use crate::context::Context;
use crate::exit::{CliError, EXIT_OK};

#[derive(Debug, Subcommand)]
pub enum ApiCommand {
    /// Print a summary of the API, or with --json the full JSON Schema.
    Schema(SchemaArgs),
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Write the full JSON Schema document to this file.
    #[arg(long, value_name = "PATH")]
    pub output: Option<std::path::PathBuf>,
}

pub fn run(context: &Context, command: ApiCommand) -> CommandResult {
    let ApiCommand::Schema(args) = command;
    let extensions = nagi_engine::api::schema_extensions();
    if let Some(path) = args.output {
        let document = nagi_schema::document::api_schema_document(&extensions);
        let text = serde_json::to_string_pretty(&document).unwrap_or_default();
        std::fs::write(&path, format!("{text}\n")).map_err(|error| {
            CliError::Usage(format!("cannot write {}: {error}", path.display()))
        })?;
        if !context.json {
            println!("wrote the nagi API schema to {}", path.display());
        }
    } else if context.json {
        let document = nagi_schema::document::api_schema_document(&extensions);
        println!(
            "{}",
            serde_json::to_string_pretty(&document).unwrap_or_default()
        );
    } else {
        print!("{}", nagi_schema::document::api_schema_summary(&extensions));
    }
    Ok(EXIT_OK)
}
