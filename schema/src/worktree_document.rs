//! The `worktree.*` part of `nagi api schema --json`, as a [`SchemaExtension`]: the
//! methods (unknown params fields ignored, as in the reference) and their results. Their
//! events are lifecycle events of the pane extension's envelope.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

use crate::document::SchemaExtension;
use crate::git_worktrees::{
    WorktreeCreateParams, WorktreeListParams, WorktreeMethodResult, WorktreeOpenParams,
    WorktreeRemoveParams,
};
use crate::methods::{MethodSpec, UnknownFields};

fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// The worktree methods, in the method-table shape (unknown params fields ignored, as in
/// the reference).
pub static WORKTREE_METHODS: &[MethodSpec] = &[
    MethodSpec {
        name: "worktree.list",
        summary: "The checkouts of the repository a workspace or directory is in.",
        unknown_fields: UnknownFields::Ignored,
        params_schema: schema_of::<WorktreeListParams>,
    },
    MethodSpec {
        name: "worktree.create",
        summary: "Add a linked checkout on a branch and open a workspace in it.",
        unknown_fields: UnknownFields::Ignored,
        params_schema: schema_of::<WorktreeCreateParams>,
    },
    MethodSpec {
        name: "worktree.open",
        summary: "Open a workspace in an existing checkout (or return the open one).",
        unknown_fields: UnknownFields::Ignored,
        params_schema: schema_of::<WorktreeOpenParams>,
    },
    MethodSpec {
        name: "worktree.remove",
        summary: "Remove a linked checkout and close its workspace; the branch stays.",
        unknown_fields: UnknownFields::Ignored,
        params_schema: schema_of::<WorktreeRemoveParams>,
    },
];

fn worktree_results(generator: &mut SchemaGenerator) -> Vec<Schema> {
    let union = WorktreeMethodResult::json_schema(generator).to_value();
    union
        .get("oneOf")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|variant| Schema::try_from(variant).expect("a oneOf variant is a schema object"))
        .collect()
}

fn no_schemas(_: &mut SchemaGenerator) -> Vec<Schema> {
    Vec::new()
}

fn no_named(_: &mut SchemaGenerator) -> Vec<(&'static str, Schema)> {
    Vec::new()
}

/// The extension for [`crate::document::api_schema_document`].
pub fn worktree_schema_extension() -> SchemaExtension {
    SchemaExtension {
        methods: WORKTREE_METHODS,
        results: worktree_results,
        events: no_schemas,
        named: no_named,
    }
}
