//! The JSON Schema document printed by `nagi api schema --json`, generated from the same
//! types the server decodes and encodes.
//!
//! Layout: `{"$schema", "title", "protocol", "version", "schemas": {request,
//! success_response, error_response, event, mission_view_v1, proof_receipt_v1,
//! attention_item_v1, error_codes}, "$defs": {...}}`. Every `$ref` points into the root
//! `$defs`, so validate an instance against `#/schemas/<name>` of the whole document.

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::attention::AttentionItemV1;
use crate::codes::ErrorCode;
use crate::envelope::ErrorResponse;
use crate::events::MissionEventEnvelope;
use crate::methods::{ENGINE_METHODS, MethodSpec, UnknownFields};
use crate::mission::MissionViewV1;
use crate::proof::ProofReceiptV1;
use crate::results::ResponseResult;
use crate::{PROTOCOL_VERSION, SERVER_VERSION};

/// Extra schema parts contributed by other method families (panes, sessions).
pub struct SchemaExtension {
    pub methods: &'static [MethodSpec],
    /// Result variants (each a schema of an object with a `type` const).
    pub results: fn(&mut SchemaGenerator) -> Vec<schemars::Schema>,
    /// Event envelopes.
    pub events: fn(&mut SchemaGenerator) -> Vec<schemars::Schema>,
    /// Other named top-level schemas (e.g. session-protocol messages).
    pub named: fn(&mut SchemaGenerator) -> Vec<(&'static str, schemars::Schema)>,
}

fn request_variant(generator: &mut SchemaGenerator, spec: &MethodSpec) -> Value {
    let params = (spec.params_schema)(generator);
    let mut params_value = params.to_value();
    if spec.unknown_fields == UnknownFields::Rejected {
        // The $ref'd definition carries `additionalProperties: false` already when the type
        // denies unknown fields; say it in the method entry too for readers.
        params_value = json!({"allOf": [params_value], "unevaluatedProperties": false});
    }
    json!({
        "type": "object",
        "description": spec.summary,
        "properties": {
            "method": {"type": "string", "const": spec.name},
            "params": params_value,
        },
        "required": ["method", "params"],
    })
}

/// Builds the whole document.
pub fn api_schema_document(extensions: &[SchemaExtension]) -> Value {
    let settings = SchemaSettings::draft2020_12();
    let mut generator = settings.into_generator();

    let mut request_variants = Vec::new();
    let mut all_methods: Vec<&MethodSpec> = ENGINE_METHODS.iter().collect();
    for extension in extensions {
        all_methods.extend(extension.methods.iter());
    }
    for spec in &all_methods {
        request_variants.push(request_variant(&mut generator, spec));
    }

    let mut result_variants = vec![generator.subschema_for::<ResponseResult>().to_value()];
    let mut event_variants = vec![generator.subschema_for::<MissionEventEnvelope>().to_value()];
    let mut named = Map::new();
    for extension in extensions {
        result_variants.extend(
            (extension.results)(&mut generator)
                .into_iter()
                .map(|schema| schema.to_value()),
        );
        event_variants.extend(
            (extension.events)(&mut generator)
                .into_iter()
                .map(|schema| schema.to_value()),
        );
        for (name, schema) in (extension.named)(&mut generator) {
            named.insert(name.to_string(), schema.to_value());
        }
    }

    let error_response = generator.subschema_for::<ErrorResponse>().to_value();
    let mission_view = generator.subschema_for::<MissionViewV1>().to_value();
    let proof_receipt = generator.subschema_for::<ProofReceiptV1>().to_value();
    let attention_item = generator.subschema_for::<AttentionItemV1>().to_value();
    let error_codes: Map<String, Value> = ErrorCode::ALL
        .iter()
        .map(|code| {
            (
                code.as_str().to_string(),
                Value::String(code.description().to_string()),
            )
        })
        .collect();

    let mut schemas = Map::new();
    schemas.insert(
        "request".into(),
        json!({
            "title": "Request",
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "oneOf": request_variants,
        }),
    );
    schemas.insert(
        "success_response".into(),
        json!({
            "title": "SuccessResponse",
            "type": "object",
            "properties": {"id": {"type": "string"}, "result": {"oneOf": result_variants}},
            "required": ["id", "result"],
        }),
    );
    schemas.insert("error_response".into(), error_response);
    schemas.insert(
        "event".into(),
        json!({"title": "EventEnvelope", "oneOf": event_variants}),
    );
    schemas.insert("mission_view_v1".into(), mission_view);
    schemas.insert("proof_receipt_v1".into(), proof_receipt);
    schemas.insert("attention_item_v1".into(), attention_item);
    for (name, schema) in named {
        schemas.insert(name, schema);
    }

    let definitions: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "nagi API",
        "protocol": PROTOCOL_VERSION,
        "version": SERVER_VERSION,
        "methods": all_methods.iter().map(|spec| json!({
            "name": spec.name,
            "summary": spec.summary,
            "unknown_fields": match spec.unknown_fields { UnknownFields::Ignored => "ignored", UnknownFields::Rejected => "rejected" },
        })).collect::<Vec<_>>(),
        "unavailable_methods": crate::methods::unavailable_methods(),
        "error_codes": error_codes,
        "schemas": schemas,
        "$defs": definitions,
    })
}

/// A one-screen summary for `nagi api schema`.
pub fn api_schema_summary(extensions: &[SchemaExtension]) -> String {
    let mut text =
        format!("nagi API, protocol {PROTOCOL_VERSION}, server {SERVER_VERSION}\n\nMethods:\n");
    let mut all_methods: Vec<&MethodSpec> = ENGINE_METHODS.iter().collect();
    for extension in extensions {
        all_methods.extend(extension.methods.iter());
    }
    let width = all_methods
        .iter()
        .map(|spec| spec.name.len())
        .max()
        .unwrap_or(0);
    for spec in all_methods {
        let strict = if spec.unknown_fields == UnknownFields::Rejected {
            " [strict params]"
        } else {
            ""
        };
        text.push_str(&format!(
            "  {:width$}  {}{}\n",
            spec.name, spec.summary, strict
        ));
    }
    let unavailable = crate::methods::unavailable_methods();
    text.push_str(&format!(
        "\nNot offered ({} methods, each answers feature_unavailable naming itself):\n  {}\n",
        unavailable.len(),
        unavailable.join(", ")
    ));
    text.push_str(&format!("\nError codes: {}\n", ErrorCode::ALL.len()));
    text.push_str("Full document: nagi api schema --json   (or --output PATH)\n");
    text
}
