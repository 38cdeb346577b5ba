//! Corpus cases of `mission.configure` and of starting runs.

use serde_json::json;

use super::*;

pub(super) fn configure_cases(fixture: &Fixture, cases: &mut Vec<Case>) {
    let limits_id = limits_params("")["mission_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut add = |name: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("mission.configure: {name}"),
            line: request("mission.configure", params),
            expected,
        })
    };
    add("the limits plan again", limits_plan(&limits_id), "ok");
    add(
        "the limits plan in another order",
        {
            let mut plan = limits_plan(&limits_id);
            plan["checks"].as_array_mut().unwrap().reverse();
            plan
        },
        "ok",
    );
    add(
        "a different plan for a configured mission",
        configure_params("m-ready", "false", &[]),
        "mission_conflict",
    );
    add(
        "a missing mission",
        configure_params("m-nobody", "true", &[]),
        "mission_not_found",
    );
    add(
        "a traversal mission id",
        configure_params("../m-ready", "true", &[]),
        "mission_not_found",
    );
    // Wrong types and shapes.
    add(
        "checks as an object",
        json!({"mission_id": "m-draft", "checks": {}}),
        "invalid_request",
    );
    add(
        "an unknown kind",
        fixture.configure_with("/kind", json!("shell")),
        "invalid_request",
    );
    add(
        "args as a string",
        fixture.configure_with("/args", json!("test --all")),
        "invalid_request",
    );
    add(
        "required as a string",
        fixture.configure_with("/required", json!("yes")),
        "invalid_request",
    );
    add(
        "a negative cover",
        fixture.configure_with("/covers", json!([-1])),
        "invalid_request",
    );
    add(
        "a fractional cover",
        fixture.configure_with("/covers", json!([0.5])),
        "invalid_request",
    );
    add(
        "an unknown path rule type",
        fixture.configure_with("/relevant_paths", json!([{"type": "glob", "pattern": "*"}])),
        "invalid_request",
    );
    add(
        "no checks key",
        json!({"mission_id": "m-draft"}),
        "invalid_request",
    );
    // Limits, one past each.
    add(
        "zero checks",
        json!({"mission_id": "m-draft", "checks": []}),
        "invalid_closure",
    );
    add(
        "33 checks",
        json!({"mission_id": "m-draft", "checks": (0..33).map(|i| with(fixture.check(), "/id", json!(format!("c{i}")))).collect::<Vec<_>>()}),
        "invalid_closure",
    );
    add(
        "10,000 checks",
        json!({"mission_id": "m-draft", "checks": (0..10_000).map(|i| json!({"kind":"manual","id":format!("c{i}"),"reviewers":["a"],"required":true,"covers":[0]})).collect::<Vec<_>>()}),
        "invalid_closure",
    );
    add(
        "a cover past the last criterion",
        fixture.configure_with("/covers", json!([2])),
        "invalid_closure",
    );
    add(
        "a cover of u64::MAX",
        fixture.configure_with("/covers", json!([u64::MAX])),
        "invalid_closure",
    );
    add(
        "a program of 1025 bytes",
        fixture.configure_with("/program", json!(sized(1025))),
        "invalid_closure",
    );
    add(
        "an empty program",
        fixture.configure_with("/program", json!("")),
        "invalid_closure",
    );
    add(
        "a blank program",
        fixture.configure_with("/program", json!("   ")),
        "invalid_closure",
    );
    add(
        "a NUL in the program",
        fixture.configure_with("/program", json!("car\u{0}go")),
        "invalid_closure",
    );
    add(
        "129 args",
        fixture.configure_with("/args", json!(vec!["x"; 129])),
        "invalid_closure",
    );
    add(
        "an arg of 4097 bytes",
        fixture.configure_with("/args", json!([sized(4097)])),
        "invalid_closure",
    );
    add(
        "a NUL in an arg",
        fixture.configure_with("/args", json!(["te\u{0}st"])),
        "invalid_closure",
    );
    add(
        "65 path rules",
        fixture.configure_with(
            "/relevant_paths",
            json!(
                (0..65)
                    .map(|i| json!({"type":"exact","path":format!("f{i}")}))
                    .collect::<Vec<_>>()
            ),
        ),
        "invalid_closure",
    );
    add(
        "33 required artifacts",
        fixture.configure_with(
            "/required_artifacts",
            json!((0..33).map(|i| format!("a{i}")).collect::<Vec<_>>()),
        ),
        "invalid_closure",
    );
    add(
        "an id of 129 bytes",
        fixture.configure_with("/id", json!(sized(129))),
        "invalid_closure",
    );
    add(
        "a duplicate check id",
        json!({"mission_id": "m-draft", "checks": [fixture.check(), fixture.check()]}),
        "invalid_closure",
    );
    add(
        "a manual check with no reviewer",
        json!({"mission_id": "m-draft", "checks": [{"kind":"manual","id":"r","reviewers":[],"required":true,"covers":[0]}]}),
        "invalid_closure",
    );
    add(
        "33 reviewers",
        json!({"mission_id": "m-draft", "checks": [{"kind":"manual","id":"r","reviewers":(0..33).map(|i| format!("r{i}")).collect::<Vec<_>>(),"required":true,"covers":[0]}]}),
        "invalid_closure",
    );
    add(
        "a reviewer with a slash",
        json!({"mission_id": "m-draft", "checks": [{"kind":"manual","id":"r","reviewers":["a/b"],"required":true,"covers":[0]}]}),
        "invalid_closure",
    );
    add(
        "a check id with Unicode",
        fixture.configure_with("/id", json!("tést")),
        "invalid_closure",
    );
    // Path traversal in every path field.
    add(
        "cwd ..",
        fixture.configure_with("/cwd", json!("..")),
        "invalid_closure",
    );
    add(
        "cwd that walks out",
        fixture.configure_with("/cwd", json!("src/../../..")),
        "invalid_closure",
    );
    add(
        "absolute cwd",
        fixture.configure_with("/cwd", json!("/etc")),
        "invalid_closure",
    );
    add(
        "cwd with a NUL",
        fixture.configure_with("/cwd", json!("src\u{0}")),
        "invalid_closure",
    );
    add(
        "exact path ../secret",
        fixture.configure_with(
            "/relevant_paths",
            json!([{"type":"exact","path":"../secret"}]),
        ),
        "invalid_closure",
    );
    add(
        "absolute exact path",
        fixture.configure_with(
            "/relevant_paths",
            json!([{"type":"exact","path":"/etc/passwd"}]),
        ),
        "invalid_closure",
    );
    add(
        "prefix that walks out",
        fixture.configure_with(
            "/relevant_paths",
            json!([{"type":"prefix","prefix":"src/../../"}]),
        ),
        "invalid_closure",
    );
    add(
        "absolute prefix",
        fixture.configure_with("/relevant_paths", json!([{"type":"prefix","prefix":"/"}])),
        "invalid_closure",
    );
    add(
        "artifact ../../etc/passwd",
        fixture.configure_with("/required_artifacts", json!(["../../etc/passwd"])),
        "invalid_closure",
    );
    add(
        "absolute artifact",
        fixture.configure_with("/required_artifacts", json!(["/tmp/out"])),
        "invalid_closure",
    );
    add(
        "artifact that is the root",
        fixture.configure_with("/required_artifacts", json!(["."])),
        "invalid_closure",
    );
    add(
        "artifact with a NUL",
        fixture.configure_with("/required_artifacts", json!(["out\u{0}.txt"])),
        "invalid_closure",
    );
}

pub(super) fn start_cases(fixture: &Fixture, cases: &mut Vec<Case>) {
    let start = fixture.start();
    let mut add = |name: &str, method: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("{method}: {name}"),
            line: request(method, params),
            expected,
        })
    };
    let m = "mission.start";
    add(
        "the project recipe over the socket",
        m,
        with(start.clone(), "/run_id", json!("run-1")).pipe(|mut p| {
            p["execute_project_recipe"] = json!(true);
            p
        }),
        "interactive_consent_required",
    );
    add(
        "an ACP agent over the socket",
        m,
        with(start.clone(), "/provider", json!("acp")),
        "interactive_consent_required",
    );
    add(
        "passthrough mode",
        m,
        with(start.clone(), "/mode", json!("passthrough")),
        "provider_mode_unavailable",
    );
    add(
        "a forged write flag",
        m,
        start.clone().pipe(|mut p| {
            p["workspace_write_confirmed"] = json!(true);
            p
        }),
        "invalid_request",
    );
    add(
        "a forged consent id",
        m,
        start.clone().pipe(|mut p| {
            p["consent_id"] = json!("c-1");
            p
        }),
        "invalid_request",
    );
    add(
        "an unknown provider",
        m,
        with(start.clone(), "/provider", json!("gpt")),
        "invalid_request",
    );
    add(
        "a provider in upper case",
        m,
        with(start.clone(), "/provider", json!("CODEX")),
        "invalid_request",
    );
    add(
        "a numeric run id",
        m,
        with(start.clone(), "/run_id", json!(1)),
        "invalid_request",
    );
    add(
        "a string for execute_declared_checks",
        m,
        with(start.clone(), "/run_id", json!("r")).pipe(|mut p| {
            p["execute_declared_checks"] = json!("true");
            p
        }),
        "invalid_request",
    );
    add(
        "no mode",
        m,
        without(start.clone(), "mode"),
        "invalid_request",
    );
    add(
        "a missing mission",
        m,
        with(start.clone(), "/mission_id", json!("m-nobody")),
        "mission_not_found",
    );
    add(
        "an empty run id",
        m,
        with(start.clone(), "/run_id", json!("")),
        "invalid_run",
    );
    add(
        "a run id of 129 bytes",
        m,
        with(start.clone(), "/run_id", json!(sized(129))),
        "invalid_run",
    );
    add(
        "a mission with no plan",
        m,
        with(start.clone(), "/mission_id", json!("m-draft")),
        "invalid_closure",
    );
    add(
        "worktree ..",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!(format!("{}/..", fixture.repo.path_text()));
            p
        }),
        "invalid_repository",
    );
    add(
        "worktree below the root",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!(format!("{}/src", fixture.repo.path_text()));
            p
        }),
        "invalid_repository",
    );
    add(
        "worktree /",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!("/");
            p
        }),
        "invalid_repository",
    );
    add(
        "worktree of another repository",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!(fixture.other_repo.path_text());
            p
        }),
        "invalid_repository",
    );
    add(
        "worktree through a symlink to another repository",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!(fixture.link("to-other-repo"));
            p
        }),
        "invalid_repository",
    );
    add(
        "worktree through a dangling symlink",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!(fixture.link("dangling"));
            p
        }),
        "invalid_repository",
    );
    add(
        "worktree through a symlink loop",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!(fixture.link("loop-b"));
            p
        }),
        "invalid_repository",
    );
    add(
        "worktree through a symlink to a subdirectory",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!(fixture.link("to-subdir"));
            p
        }),
        "invalid_repository",
    );
    add(
        "a worktree path of 4097 bytes",
        m,
        start.clone().pipe(|mut p| {
            p["worktree_path"] = json!(format!("/{}", sized(4096)));
            p
        }),
        "invalid_repository",
    );

    let m = "mission.verify";
    add(
        "a missing mission",
        m,
        json!({"mission_id": "m-nobody"}),
        "mission_not_found",
    );
    add(
        "a traversal id",
        m,
        json!({"mission_id": "../m-ready"}),
        "mission_not_found",
    );
    add(
        "no consent to run the checks",
        m,
        json!({"mission_id": "m-ready"}),
        "interactive_consent_required",
    );
    add(
        "a mission with no run",
        m,
        json!({"mission_id": "m-ready", "execute_declared_checks": true}),
        "mission_not_ready",
    );

    let m = "mission.respond";
    let respond = json!({"mission_id": "m-ready", "run_id": "run-1", "attention_id": "a-1", "decision": "approve_once"});
    add(
        "any answer on the public socket",
        m,
        respond.clone(),
        "interactive_consent_required",
    );
    add(
        "an unknown decision",
        m,
        with(respond.clone(), "/decision", json!("maybe")),
        "invalid_request",
    );
    add(
        "a forged cockpit flag",
        m,
        respond.clone().pipe(|mut p| {
            p["from_cockpit"] = json!(true);
            p
        }),
        "invalid_request",
    );
    add(
        "answers as a list",
        m,
        respond.clone().pipe(|mut p| {
            p["answers"] = json!(["yes"]);
            p
        }),
        "invalid_request",
    );

    let m = "mission.handoff.preview";
    add(
        "an unknown target",
        m,
        json!({"mission_id": "m-ready", "to": "gemini"}),
        "invalid_request",
    );
    add(
        "an unknown field",
        m,
        json!({"mission_id": "m-ready", "to": "claude_code", "force": true}),
        "invalid_request",
    );
    add(
        "a traversal id",
        m,
        json!({"mission_id": "../../m", "to": "claude_code"}),
        "invalid_mission",
    );
    add(
        "a missing mission",
        m,
        json!({"mission_id": "m-nobody", "to": "claude_code"}),
        "mission_not_found",
    );
    add(
        "a mission with no run",
        m,
        json!({"mission_id": "m-ready", "to": "claude_code"}),
        "invalid_handoff_state",
    );

    let m = "mission.handoff.start";
    let handoff = json!({"mission_id": "m-ready", "to": "open_code", "generated_at_millis": 1, "artifact_sha256": "0".repeat(64)});
    add(
        "ACP over the socket",
        m,
        with(handoff.clone(), "/to", json!("acp")),
        "interactive_consent_required",
    );
    add(
        "a negative time",
        m,
        with(handoff.clone(), "/generated_at_millis", json!(-1)),
        "invalid_request",
    );
    add(
        "a time as a string",
        m,
        with(handoff.clone(), "/generated_at_millis", json!("now")),
        "invalid_request",
    );
    add(
        "a digest as a number",
        m,
        with(handoff.clone(), "/artifact_sha256", json!(0)),
        "invalid_request",
    );
    add(
        "a forged write flag",
        m,
        handoff.clone().pipe(|mut p| {
            p["write_scope"] = json!(true);
            p
        }),
        "invalid_request",
    );
    add(
        "a missing mission",
        m,
        with(handoff.clone(), "/mission_id", json!("m-nobody")),
        "mission_not_found",
    );
    add(
        "a mission with no run",
        m,
        handoff.clone(),
        "invalid_handoff_state",
    );

    let m = "mission.close";
    add(
        "a draft mission",
        m,
        json!({"mission_id": "m-draft"}),
        "mission_not_ready",
    );
    add(
        "a configured mission",
        m,
        json!({"mission_id": "m-ready"}),
        "mission_not_ready",
    );
    add(
        "a missing mission",
        m,
        json!({"mission_id": "m-nobody"}),
        "mission_not_found",
    );
    // §2.10: a missing or invalid id is mission_not_found.
    add(
        "a traversal id",
        m,
        json!({"mission_id": "../m-ready"}),
        "mission_not_found",
    );
    add(
        "a numeric id",
        m,
        json!({"mission_id": 3}),
        "invalid_request",
    );
}
