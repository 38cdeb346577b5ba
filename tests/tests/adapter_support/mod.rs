//! Helpers for the adapter tests: launch a fake provider through `nagi_providers::launch`
//! and read its events.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nagi_providers::{
    LaunchSpec, ProviderCommand, ProviderEvent, ProviderHandle, ProviderKind, Response, Sandbox,
    Timeouts, TranscriptLine, TurnOutcome,
};
use serde_json::Value;

/// Only guards against a hung test; no assertion depends on it.
const SAFETY_TIMEOUT: Duration = Duration::from_secs(60);

pub struct Fixture {
    pub worktree: tempfile::TempDir,
    pub log_path: PathBuf,
}

impl Fixture {
    pub fn new() -> Fixture {
        let worktree = tempfile::tempdir().expect("temp worktree");
        let log_dir = worktree.path().join(".fake-log");
        std::fs::create_dir(&log_dir).expect("log dir");
        let log_path = log_dir.join("received.jsonl");
        Fixture { worktree, log_path }
    }

    pub fn spec(&self, kind: ProviderKind, program: &str, script: &str) -> LaunchSpec {
        let mut env = BTreeMap::new();
        env.insert("NAGI_FAKE_SCRIPT".to_string(), script.to_string());
        env.insert(
            "NAGI_FAKE_LOG".to_string(),
            self.log_path.display().to_string(),
        );
        LaunchSpec {
            kind,
            program: PathBuf::from(program),
            leading_args: Vec::new(),
            worktree: self.worktree.path().to_path_buf(),
            env,
            extra_args: Vec::new(),
            sandbox: Sandbox::ReadOnly,
            confinement: None,
            resume_session_id: None,
            initial_input: Some("Objective: say hello".to_string()),
            model: None,
            reasoning_effort: None,
            timeouts: Timeouts::default(),
        }
    }

    /// Every event the fake logged, in order.
    pub fn log(&self) -> Vec<Value> {
        let Ok(text) = std::fs::read_to_string(&self.log_path) else {
            return Vec::new();
        };
        text.lines()
            .map(|line| serde_json::from_str(line).expect("log line is JSON"))
            .collect()
    }

    pub fn logged(&self, event: &str) -> Vec<Value> {
        self.log()
            .into_iter()
            .filter(|entry| entry["event"] == event)
            .collect()
    }

    /// Frames the fake received whose `method` (or `type`) is `name`.
    pub fn received(&self, name: &str) -> Vec<Value> {
        self.logged("received")
            .into_iter()
            .map(|entry| entry["frame"].clone())
            .filter(|frame| frame["method"] == name || frame["type"] == name)
            .collect()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.worktree.path().join(relative)
    }
}

pub struct Run {
    pub handle: ProviderHandle,
    pub seen: Vec<ProviderEvent>,
}

impl Run {
    pub fn launch(spec: LaunchSpec) -> Run {
        let handle = nagi_providers::launch(spec).expect("launch");
        Run {
            handle,
            seen: Vec::new(),
        }
    }

    pub async fn next(&mut self) -> Option<ProviderEvent> {
        let event = tokio::time::timeout(SAFETY_TIMEOUT, self.handle.events.recv())
            .await
            .unwrap_or_else(|_| panic!("no event arrived; seen so far: {:#?}", self.seen));
        if let Some(event) = &event {
            self.seen.push(event.clone());
        }
        event
    }

    /// Reads events until one matches, returning it.
    pub async fn until(
        &mut self,
        what: &str,
        matches: impl Fn(&ProviderEvent) -> bool,
    ) -> ProviderEvent {
        loop {
            match self.next().await {
                Some(event) if matches(&event) => return event,
                Some(_) => continue,
                None => panic!("event stream ended before {what}; seen: {:#?}", self.seen),
            }
        }
    }

    pub async fn session_bound(&mut self) -> String {
        match self
            .until("SessionBound", |event| {
                matches!(event, ProviderEvent::SessionBound { .. })
            })
            .await
        {
            ProviderEvent::SessionBound { session_id } => session_id,
            _ => unreachable!(),
        }
    }

    pub async fn turn_completed(&mut self) -> TurnOutcome {
        match self
            .until("TurnCompleted", |event| {
                matches!(event, ProviderEvent::TurnCompleted(_))
            })
            .await
        {
            ProviderEvent::TurnCompleted(outcome) => outcome,
            _ => unreachable!(),
        }
    }

    pub async fn attention(&mut self) -> nagi_providers::AttentionRequest {
        match self
            .until("AttentionRequested", |event| {
                matches!(event, ProviderEvent::AttentionRequested(_))
            })
            .await
        {
            ProviderEvent::AttentionRequested(request) => request,
            _ => unreachable!(),
        }
    }

    pub async fn command(&self, command: ProviderCommand) {
        self.handle
            .commands
            .send(command)
            .await
            .expect("adapter accepts commands");
    }

    pub async fn respond(&self, request_key: &str, response: Response) {
        self.command(ProviderCommand::Respond {
            request_key: request_key.to_string(),
            response,
        })
        .await;
    }

    /// Reads to the end of the stream and returns the exit code of `Stopped`, checking that
    /// `Stopped` is the last event.
    pub async fn stopped(&mut self) -> Option<i32> {
        let mut exit = None;
        let mut stopped_seen = false;
        while let Some(event) = self.next().await {
            assert!(!stopped_seen, "an event came after Stopped: {event:?}");
            if let ProviderEvent::Stopped { exit_code } = event {
                exit = exit_code;
                stopped_seen = true;
            }
        }
        assert!(
            stopped_seen,
            "the stream ended without Stopped: {:#?}",
            self.seen
        );
        exit
    }

    pub async fn shutdown(&mut self) -> Option<i32> {
        let _ = self.handle.commands.send(ProviderCommand::Shutdown).await;
        self.stopped().await
    }

    pub fn agent_texts(&self) -> Vec<String> {
        self.seen
            .iter()
            .filter_map(|event| match event {
                ProviderEvent::Transcript(TranscriptLine::AgentText(text)) => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    /// The agent's text as the adapter streamed it, its pieces joined.
    pub fn streamed_text(&self) -> String {
        self.seen
            .iter()
            .filter_map(|event| match event {
                ProviderEvent::Transcript(TranscriptLine::AgentDelta(piece)) => {
                    Some(piece.as_str())
                }
                _ => None,
            })
            .collect()
    }

    /// What every fake reports for a completed turn (`fake_support`'s numbers), with `cost`
    /// in micro-dollars where the protocol carries one.
    pub fn fake_turn_usage(cost_micro_usd: Option<u64>) -> nagi_schema::usage::TokenUsage {
        nagi_schema::usage::TokenUsage {
            input_tokens: 100,
            cached_input_tokens: 40,
            output_tokens: 20,
            reasoning_output_tokens: 5,
            cost_micro_usd,
        }
    }

    /// Every usage report seen, in order.
    pub fn usage_reports(&self) -> Vec<nagi_schema::usage::TokenUsage> {
        self.seen
            .iter()
            .filter_map(|event| match event {
                ProviderEvent::Usage(usage) => Some(*usage),
                _ => None,
            })
            .collect()
    }

    pub fn saw(&self, matches: impl Fn(&ProviderEvent) -> bool) -> bool {
        self.seen.iter().any(matches)
    }

    pub fn transport_failure(&self) -> Option<(nagi_providers::FailureKind, String)> {
        self.seen.iter().find_map(|event| match event {
            ProviderEvent::TransportFailed { kind, reason } => Some((*kind, reason.clone())),
            _ => None,
        })
    }
}

/// Whether a process is gone (or a zombie nobody reaped yet).
pub fn process_is_gone(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    match status {
        Err(_) => true,
        Ok(text) => text
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits (bounded) for a process to disappear; returns whether it did.
pub async fn wait_until_gone(pid: u32) -> bool {
    for _ in 0..100 {
        if process_is_gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

pub fn program(path: &str) -> String {
    assert!(
        Path::new(path).exists(),
        "fake provider {path} is not built"
    );
    path.to_string()
}
