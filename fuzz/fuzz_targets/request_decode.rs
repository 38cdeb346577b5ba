//! One request line, as a client would send it on the socket: UTF-8, the envelope, the
//! params of every method with its unknown-field policy, then the pure validations that
//! follow decoding (mission create/configure decisions and the fold, key combos, pane
//! agent and metadata reports).
//!
//! Properties:
//! - nothing panics, whatever the line;
//! - a refused line maps to a wire error with a message; the echoed id is the line's
//!   string `id` or `""`;
//! - decoded params re-encode to JSON that decodes to the same params (no field is lost
//!   or invented by the decoder);
//! - a created mission is a draft with revision 1, and creating it again is `Unchanged`;
//! - a configured plan is frozen: the same checks, in any order, configure nothing new.

#![no_main]

use std::time::Instant;

use libfuzzer_sys::fuzz_target;
use nagi_engine::api::decode::{MethodParams, decode_method_params, decode_request};
use nagi_engine::errors::wire_error;
use nagi_mission::apply::apply;
use nagi_mission::create::{ConfigureDecision, CreateDecision, decide_configure, decide_create};
use nagi_mission::view::{NoLiveRuns, mission_view};
use nagi_mission::{Mission, MissionEvent};
use nagi_pane::PaneRequest;
use nagi_pane::keys::{encode_key_combos, parse_key_combos};
use nagi_pane::metadata::{PaneMetadata, TokenMap};
use nagi_schema::mission::{MissionCheck, MissionCreateParams, MissionStatus};
use serde_json::value::RawValue;

const NOW: u64 = 1_700_000_000_000;

fuzz_target!(|line: &[u8]| {
    match decode_request(line) {
        Err(rejected) => {
            let (_code, message) = wire_error(&rejected.error);
            assert!(!message.is_empty());
            if !rejected.id.is_unknown() {
                let text = std::str::from_utf8(line).expect("an id is salvaged only from UTF-8");
                let id = rejected.id.as_text();
                assert!(text.contains(id.as_ref()) || text.contains('\\'), "the echoed id comes from the line");
            }
        }
        Ok(decoded) => {
            round_trip(&decoded.method, &decoded.params);
            validate(&decoded.params);
        }
    }
});

fn round_trip(method: &str, params: &MethodParams) {
    let Some(json) = params.params_json().map(|value| value.to_string()) else { return };
    let raw: Box<RawValue> = RawValue::from_string(json.clone()).expect("serde_json wrote valid JSON");
    let again = decode_method_params(method, &raw).unwrap_or_else(|error| panic!("{method}: {json} no longer decodes: {error}"));
    assert_eq!(&again, params, "{method}: decode(encode(params)) differs");
}

fn validate(params: &MethodParams) {
    match params {
        MethodParams::MissionCreate(create) => check_create(create),
        MethodParams::MissionConfigure(configure) => check_configure(&configure.checks),
        MethodParams::Pane(PaneRequest::PaneSendKeys(send)) => check_keys(&send.keys),
        MethodParams::Pane(PaneRequest::PaneSendInput(send)) => check_keys(&send.keys),
        MethodParams::Pane(PaneRequest::PaneReportAgent(report)) => {
            let _ = PaneMetadata::default().report_agent(
                &report.source,
                &report.agent,
                report.state,
                report.message.as_deref(),
                report.agent_session_id.as_deref(),
                report.agent_session_path.as_deref(),
                report.seq,
            );
        }
        MethodParams::Pane(PaneRequest::PaneReportAgentSession(report)) => {
            let _ = PaneMetadata::default().report_agent_session(
                &report.source,
                &report.agent,
                report.agent_session_id.as_deref(),
                report.agent_session_path.as_deref(),
                report.seq,
            );
        }
        MethodParams::Pane(PaneRequest::PaneReportMetadata(report)) => {
            let now = Instant::now();
            let mut metadata = PaneMetadata::default();
            if metadata.report_metadata(report, now).is_ok() {
                let view = metadata.view(now);
                assert!(view.tokens.len() <= 32, "at most 32 tokens are retained");
                assert!(view.title.as_ref().is_none_or(|title| title.chars().count() <= 80));
            }
        }
        MethodParams::Pane(PaneRequest::PaneClearAgentAuthority(clear)) => {
            let _ = PaneMetadata::default().clear_agent_authority(clear.source.as_deref(), clear.seq);
        }
        MethodParams::Pane(PaneRequest::PaneReleaseAgent(release)) => {
            let _ = PaneMetadata::default().release_agent(&release.source, &release.agent, release.seq);
        }
        MethodParams::Pane(PaneRequest::WorkspaceReportMetadata(report)) => {
            let now = Instant::now();
            let mut tokens = TokenMap::default();
            if let Ok(patch) = tokens.validate(&report.tokens, report.ttl_ms, now) {
                tokens.apply(patch, now);
                assert!(tokens.snapshot(now).len() <= 32, "at most 32 tokens are retained");
            }
        }
        _ => {}
    }
}

fn check_create(params: &MissionCreateParams) {
    let Ok(CreateDecision::Create(event)) = decide_create(None, params, &params.repository_path, NOW) else { return };
    let mission = apply(None, &event);
    assert_eq!(mission.status, MissionStatus::Draft);
    assert_eq!(mission.revision, 1);
    assert_eq!(mission.criteria.len(), params.acceptance_criteria.len());
    let view = mission_view(&mission, &NoLiveRuns);
    serde_json::to_string(&view).expect("views serialize");
    let again = decide_create(Some(&mission), params, &params.repository_path, NOW + 1).expect("an identical create is not a conflict");
    assert!(matches!(again, CreateDecision::Unchanged), "creating the same mission twice writes nothing");
}

/// A draft with three criteria, for configure decisions.
fn draft_mission() -> Mission {
    let params = MissionCreateParams {
        mission_id: "fuzz-mission".into(),
        title: "Fuzzed plan".into(),
        repository_path: "/repo".into(),
        objective: "Configure whatever the fuzzer sends".into(),
        acceptance_criteria: vec!["first".into(), "second".into(), "third".into()],
        host: None,
    };
    let Ok(CreateDecision::Create(event)) = decide_create(None, &params, "/repo", NOW) else {
        panic!("the fixed draft mission is valid")
    };
    apply(None, &event)
}

fn check_configure(checks: &[MissionCheck]) {
    let mission = draft_mission();
    let Ok(ConfigureDecision::Configure(event)) = decide_configure(&mission, checks, NOW + 1) else { return };
    let MissionEvent::ClosureConfigured { declarations, .. } = &event else { panic!("configure emits closure_configured") };
    assert_eq!(declarations.len(), checks.len());
    let configured = apply(Some(mission), &event);
    assert_eq!(configured.revision, 2);
    assert!(configured.plan.is_some());
    let view = mission_view(&configured, &NoLiveRuns);
    assert!(view.closure_configured);
    serde_json::to_string(&view).expect("views serialize");
    let reversed: Vec<MissionCheck> = checks.iter().rev().cloned().collect();
    for same_plan in [checks, reversed.as_slice()] {
        match decide_configure(&configured, same_plan, NOW + 2) {
            Ok(ConfigureDecision::Unchanged) => {}
            Ok(ConfigureDecision::Configure(_)) => panic!("a frozen plan was configured again"),
            Err(error) => panic!("re-sending the frozen plan is refused: {error}"),
        }
    }
}

fn check_keys(keys: &[String]) {
    if let Ok(combos) = parse_key_combos(keys) {
        for application_cursor in [false, true] {
            let bytes = encode_key_combos(&combos, application_cursor);
            assert!(bytes.len() >= combos.len(), "every combo sends at least one byte");
        }
    }
}
