//! The pane, tab, workspace and session parts of `nagi api schema --json`, as a
//! [`SchemaExtension`]: the implemented pane methods (unknown params fields ignored, as in
//! the reference), their results, the live event envelopes and the attach protocol's
//! messages.

use std::sync::LazyLock;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

use crate::document::SchemaExtension;
use crate::methods::{MethodSpec, UnknownFields};
use crate::pane::PaneMethodResult;
use crate::pane_events::{PaneLifecycleEnvelope, PaneSubscriptionEnvelope, SubscriptionNotice};
use crate::pane_methods::PANE_METHODS;
use crate::session_protocol::{SessionClientMessage, SessionServerMessage};

/// The pane methods nagi answers, in the method-table shape. Methods of the protocol that
/// nagi does not offer are left out: they answer `feature_unavailable`.
static PANE_METHOD_SPECS: LazyLock<Vec<MethodSpec>> = LazyLock::new(|| {
    PANE_METHODS
        .iter()
        .filter(|spec| spec.implemented)
        .map(|spec| MethodSpec {
            name: spec.name,
            summary: spec.summary,
            unknown_fields: UnknownFields::Ignored,
            params_schema: spec.params_schema,
        })
        .collect()
});

/// The variants of [`PaneMethodResult`] except `ok`, which the engine's own result union
/// already has (a `oneOf` must not match twice).
fn pane_results(generator: &mut SchemaGenerator) -> Vec<Schema> {
    let union = PaneMethodResult::json_schema(generator).to_value();
    let variants = union
        .get("oneOf")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    variants
        .into_iter()
        .filter(|variant| {
            variant
                .pointer("/properties/type/const")
                .and_then(Value::as_str)
                != Some("ok")
        })
        .map(|variant| Schema::try_from(variant).expect("a oneOf variant is a schema object"))
        .collect()
}

fn pane_events(generator: &mut SchemaGenerator) -> Vec<Schema> {
    vec![
        generator.subschema_for::<PaneLifecycleEnvelope>(),
        generator.subschema_for::<PaneSubscriptionEnvelope>(),
        generator.subschema_for::<SubscriptionNotice>(),
    ]
}

fn session_messages(generator: &mut SchemaGenerator) -> Vec<(&'static str, Schema)> {
    vec![
        (
            "subscription_event",
            generator.subschema_for::<PaneSubscriptionEnvelope>(),
        ),
        (
            "session_client_message",
            generator.subschema_for::<SessionClientMessage>(),
        ),
        (
            "session_server_message",
            generator.subschema_for::<SessionServerMessage>(),
        ),
    ]
}

/// The extension for [`crate::document::api_schema_document`].
pub fn pane_schema_extension() -> SchemaExtension {
    SchemaExtension {
        methods: &PANE_METHOD_SPECS,
        results: pane_results,
        events: pane_events,
        named: session_messages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::api_schema_document;
    use crate::methods::{EventMatch, EventsSubscribeParams, EventsWaitParams, Subscription};
    use crate::pane_events::{PaneEventMatch, PaneSubscription};

    #[test]
    fn the_document_lists_pane_methods_results_and_session_messages() {
        let document = api_schema_document(&[pane_schema_extension()]);
        let methods: Vec<&str> = document["methods"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|method| method["name"].as_str())
            .collect();
        for name in [
            "workspace.create",
            "pane.read",
            "pane.wait_for_output",
            "session.snapshot",
            "pane.close",
        ] {
            assert!(methods.contains(&name), "{name} is missing");
        }
        assert!(
            !methods.contains(&"pane.split"),
            "methods nagi does not offer are not listed"
        );
        let results = document["schemas"]["success_response"]["properties"]["result"]["oneOf"]
            .as_array()
            .unwrap();
        let ok_variants = results
            .iter()
            .filter(|variant| variant.pointer("/properties/type/const") == Some(&Value::from("ok")))
            .count();
        assert_eq!(
            ok_variants, 0,
            "the pane `ok` is not repeated next to the engine's own union"
        );
        for name in [
            "session_client_message",
            "session_server_message",
            "subscription_event",
        ] {
            assert!(document["schemas"].get(name).is_some(), "{name} is missing");
        }
    }

    #[test]
    fn subscriptions_decode_mission_and_pane_kinds() {
        let params: EventsSubscribeParams = serde_json::from_value(serde_json::json!({"subscriptions": [
            {"type": "mission", "mission_id": "m1"},
            {"type": "pane.exited"},
            {"type": "pane.output_matched", "pane_id": "w1:p1", "source": "recent", "match": {"type": "regex", "value": "a+"}},
        ]}))
        .unwrap();
        assert!(
            matches!(&params.subscriptions[0], Subscription::Mission(mission) if mission.mission_id.as_deref() == Some("m1"))
        );
        assert_eq!(
            params.subscriptions[1],
            Subscription::Pane(PaneSubscription::PaneExited)
        );
        assert!(matches!(
            &params.subscriptions[2],
            Subscription::Pane(PaneSubscription::PaneOutputMatched(_))
        ));
        assert_eq!(
            serde_json::to_value(&params.subscriptions[1]).unwrap(),
            serde_json::json!({"type": "pane.exited"})
        );
        assert!(
            serde_json::from_value::<Subscription>(serde_json::json!({"type": "pane.nonsense"}))
                .is_err()
        );
    }

    #[test]
    fn wait_matches_decode_mission_and_pane_kinds() {
        let params: EventsWaitParams = serde_json::from_value(
            serde_json::json!({"match_event": {"event": "pane_exited", "pane_id": "w1:p1"}}),
        )
        .unwrap();
        assert_eq!(
            params.match_event,
            EventMatch::Pane(PaneEventMatch::PaneExited {
                pane_id: "w1:p1".into()
            })
        );
        let params: EventsWaitParams = serde_json::from_value(
            serde_json::json!({"match_event": {"event": "mission", "mission_id": "m1"}}),
        )
        .unwrap();
        assert!(matches!(params.match_event, EventMatch::Mission(_)));
    }
}
