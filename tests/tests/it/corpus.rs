//! The bad-input corpus (issue 7): a table of malformed and hostile requests across every
//! method nagi answers, each with the code it must get, each leaving the SQLite store
//! byte-for-byte unchanged. Cases cover wrong types, limits and one past them, Unicode edge
//! cases, path traversal in every path parameter, symlinked repositories and worktrees,
//! enormous arrays and nested JSON bombs. A second test holds 1,000 idle connections open
//! and checks that everybody else is still served.
//!
//! `expected` is an error code, or `ok` for a request that must succeed without writing
//! (an idempotent repeat at the exact limits, so both sides of each limit are covered).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use nagi_tests::*;
use serde_json::{Value, json};

/// One corpus entry: a name, the raw request line (without its newline) and the code.
struct Case {
    name: String,
    line: String,
    expected: &'static str,
}

fn request(method: &str, params: Value) -> String {
    json!({"id": "corpus", "method": method, "params": params}).to_string()
}

fn with(mut params: Value, pointer: &str, value: Value) -> Value {
    *params
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer} in the params")) = value;
    params
}

fn without(mut params: Value, key: &str) -> Value {
    params.as_object_mut().unwrap().remove(key);
    params
}

/// `text` repeated until it is exactly `bytes` long (ASCII `text` only).
fn sized(bytes: usize) -> String {
    "a".repeat(bytes)
}

/// The fixture every case runs against: a server with a drafted mission (`m-draft`), a
/// configured one (`m-ready`), one created at every upper limit (`m-limits`), a live pane,
/// and directories and symlinks for the repository cases.
struct Fixture {
    env: TestEnv,
    repo: TestRepo,
    other_repo: TestRepo,
    pane_id: String,
    workspace_id: String,
    tab_id: String,
}

fn limits_params(repository: &str) -> Value {
    // 128-byte id, 256-byte title, 8192-byte objective, 16 criteria of 1024 bytes.
    json!({
        "mission_id": format!("m-{}", sized(126)),
        "title": "é".repeat(128),
        "repository_path": repository,
        "objective": sized(8192),
        "acceptance_criteria": (0..16).map(|index| format!("{index:02}{}", sized(1022))).collect::<Vec<_>>(),
    })
}

fn limits_plan(mission_id: &str) -> Value {
    // 32 checks, one of them with 128 args of 4096 bytes and 64 path rules.
    let mut checks = vec![json!({
        "kind": "command", "id": "wide", "program": sized(1024),
        "args": (0..128).map(|_| sized(4096)).collect::<Vec<_>>(),
        "cwd": ".",
        "relevant_paths": (0..64).map(|index| json!({"type": "prefix", "prefix": format!("src/{index}")})).collect::<Vec<_>>(),
        "required_artifacts": (0..32).map(|index| format!("out/{index}.txt")).collect::<Vec<_>>(),
        "required": true, "covers": [0],
    })];
    for index in 1..32 {
        checks.push(json!({
            "kind": "manual", "id": format!("review-{index}"),
            "reviewers": (0..32).map(|reviewer| format!("r{reviewer}")).collect::<Vec<_>>(),
            "required": true, "covers": [index % 16],
        }));
    }
    json!({"mission_id": mission_id, "checks": checks})
}

impl Fixture {
    fn new() -> Fixture {
        let mut env = TestEnv::new();
        env.start_server();
        let repo = TestRepo::new();
        let other_repo = TestRepo::new();
        let repository = repo.path_text();
        env.ok("mission.create", create_params("m-draft", &repository));
        env.ok("mission.create", create_params("m-ready", &repository));
        env.ok(
            "mission.configure",
            configure_params("m-ready", "true", &[]),
        );
        let limits = limits_params(&repository);
        env.ok("mission.create", limits.clone());
        env.ok(
            "mission.configure",
            limits_plan(limits["mission_id"].as_str().unwrap()),
        );
        let workspace = env.ok("workspace.create", json!({"command": ["sleep", "600"]}));
        let pane_id = workspace["root_pane"]["pane_id"]
            .as_str()
            .unwrap()
            .to_string();
        let workspace_id = workspace["workspace"]["workspace_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{workspace}"))
            .to_string();
        let tabs = env.ok("tab.list", json!({"workspace_id": workspace_id}));
        let tab_id = tabs["tabs"][0]["tab_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{tabs}"))
            .to_string();
        let links = env.root().join("links");
        std::fs::create_dir_all(&links).unwrap();
        let link = |name: &str, target: &Path| {
            std::os::unix::fs::symlink(target, links.join(name)).unwrap();
        };
        link("to-subdir", &repo.path.join("src"));
        link("to-file", &repo.path.join("src/lib.rs"));
        link("dangling", &env.root().join("nothing-here"));
        link("to-other-repo", &other_repo.path);
        link("to-plain-dir", &env.root());
        link("loop-a", &links.join("loop-b"));
        link("loop-b", &links.join("loop-a"));
        Fixture {
            env,
            repo,
            other_repo,
            pane_id,
            workspace_id,
            tab_id,
        }
    }

    fn link(&self, name: &str) -> String {
        self.env
            .root()
            .join("links")
            .join(name)
            .display()
            .to_string()
    }

    fn create(&self, mission_id: &str) -> Value {
        create_params(mission_id, &self.repo.path_text())
    }

    fn start(&self) -> Value {
        json!({"mission_id": "m-ready", "run_id": "run-1", "provider": "codex", "mode": "managed"})
    }

    fn check(&self) -> Value {
        configure_params("m-draft", "cargo", &["test"])["checks"][0].clone()
    }

    fn configure_with(&self, pointer: &str, value: Value) -> Value {
        json!({"mission_id": "m-draft", "checks": [with(self.check(), pointer, value)]})
    }
}

fn envelope_cases(cases: &mut Vec<Case>) {
    let mut add = |name: &str, line: String, expected| {
        cases.push(Case {
            name: format!("envelope: {name}"),
            line,
            expected,
        })
    };
    add("not JSON", "this is not json".into(), "invalid_request");
    add("a JSON array", "[1,2,3]".into(), "invalid_request");
    add("a JSON string", r#""ping""#.into(), "invalid_request");
    add("null", "null".into(), "invalid_request");
    add(
        "truncated object",
        r#"{"id":"x","method":"ping","params":{}"#.into(),
        "invalid_request",
    );
    add(
        "fractional id",
        r#"{"id":7.5,"method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "null id",
        r#"{"id":null,"method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "object id",
        r#"{"id":{},"method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "missing id",
        r#"{"method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "missing method",
        r#"{"id":"x","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "numeric method",
        r#"{"id":"x","method":5,"params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "missing params",
        r#"{"id":"x","method":"ping"}"#.into(),
        "invalid_request",
    );
    add(
        "null params",
        r#"{"id":"x","method":"ping","params":null}"#.into(),
        "invalid_request",
    );
    add(
        "array params",
        r#"{"id":"x","method":"mission.list","params":[]}"#.into(),
        "invalid_request",
    );
    add(
        "string params",
        r#"{"id":"x","method":"mission.get","params":"m-ready"}"#.into(),
        "invalid_request",
    );
    add(
        "unknown method",
        request("mission.fly", json!({})),
        "invalid_request",
    );
    add(
        "method with a NUL",
        request("mission.get\u{0}", json!({})),
        "invalid_request",
    );
    add(
        "method in upper case",
        request("MISSION.LIST", json!({})),
        "invalid_request",
    );
    add("empty method", request("", json!({})), "invalid_request");
    add(
        "duplicate keys",
        r#"{"id":"x","id":"y","method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "lone surrogate escape in the id",
        r#"{"id":"\ud800","method":"ping","params":{}}"#.into(),
        "invalid_request",
    );
    add(
        "an out-of-range number",
        r#"{"id":"x","method":"events.wait","params":{"match_event":{"event":"mission","mission_id":"m-ready"},"timeout_ms":1e400}}"#.into(),
        "invalid_request",
    );
    add(
        "a method outside nagi's scope",
        request("pane.split", json!({})),
        "feature_unavailable",
    );
    add(
        "layouts",
        request("layout.apply", json!({})),
        "feature_unavailable",
    );
    add(
        "live upgrade",
        request("server.live_handoff", json!({})),
        "feature_unavailable",
    );
    // Nested JSON bombs: deeper than any parser stack should go, in the envelope and in params.
    let depth = 100_000;
    add(
        "array bomb as the whole line",
        format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
        "invalid_request",
    );
    add(
        "object bomb in params",
        format!(
            r#"{{"id":"x","method":"mission.create","params":{{"title":{}1{}}}}}"#,
            r#"{"a":"#.repeat(20_000),
            "}".repeat(20_000)
        ),
        "invalid_request",
    );
    add(
        "array bomb in the id",
        format!(
            r#"{{"id":{}{},"method":"ping","params":{{}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ),
        "invalid_request",
    );
    add(
        "array bomb in an ignored top-level key (skipped without recursion)",
        format!(
            r#"{{"id":"x","method":"ping","params":{{}},"extra":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ),
        "ok",
    );
    add("unterminated bomb", "[".repeat(500_000), "invalid_request");
    add(
        "one byte over the line limit",
        format!(
            r#"{{"id":"x","method":"ping","params":{{"pad":"{}"}}}}"#,
            sized(1024 * 1024 + 1 - 44)
        ),
        "request_too_large",
    );
}

fn create_cases(fixture: &Fixture, cases: &mut Vec<Case>) {
    let base = fixture.create("m-new");
    let limits = limits_params(&fixture.repo.path_text());
    let mut add = |name: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("mission.create: {name}"),
            line: request("mission.create", params),
            expected,
        })
    };
    add("the limits mission again", limits.clone(), "ok");
    add(
        "the same id, another title",
        with(fixture.create("m-draft"), "/title", json!("Other")),
        "mission_conflict",
    );
    // Wrong types.
    add(
        "numeric title",
        with(base.clone(), "/title", json!(5)),
        "invalid_request",
    );
    add(
        "null title",
        with(base.clone(), "/title", Value::Null),
        "invalid_request",
    );
    add(
        "criteria as a string",
        with(base.clone(), "/acceptance_criteria", json!("tests pass")),
        "invalid_request",
    );
    add(
        "a numeric criterion",
        with(base.clone(), "/acceptance_criteria", json!([1])),
        "invalid_request",
    );
    add(
        "a numeric mission id",
        with(base.clone(), "/mission_id", json!(12)),
        "invalid_request",
    );
    add(
        "a boolean repository",
        with(base.clone(), "/repository_path", json!(true)),
        "invalid_request",
    );
    add(
        "no title",
        without(base.clone(), "title"),
        "invalid_request",
    );
    add(
        "no criteria",
        without(base.clone(), "acceptance_criteria"),
        "invalid_request",
    );
    // Limits, one past each.
    add(
        "id of 129 bytes",
        with(
            base.clone(),
            "/mission_id",
            json!(format!("m-{}", sized(127))),
        ),
        "invalid_mission",
    );
    add(
        "empty id",
        with(base.clone(), "/mission_id", json!("")),
        "invalid_mission",
    );
    add(
        "title of 257 bytes",
        with(limits.clone(), "/mission_id", json!("m-257"))
            .pipe(|p| with(p, "/title", json!(format!("{}a", "é".repeat(128))))),
        "invalid_mission",
    );
    add(
        "empty title",
        with(base.clone(), "/title", json!("")),
        "invalid_mission",
    );
    add(
        "blank title",
        with(base.clone(), "/title", json!(" \t\n ")),
        "invalid_mission",
    );
    add(
        "objective of 8193 bytes",
        with(base.clone(), "/objective", json!(sized(8193))),
        "invalid_mission",
    );
    add(
        "empty objective",
        with(base.clone(), "/objective", json!("")),
        "invalid_mission",
    );
    add(
        "17 criteria",
        with(
            base.clone(),
            "/acceptance_criteria",
            json!((0..17).map(|i| format!("c{i}")).collect::<Vec<_>>()),
        ),
        "invalid_mission",
    );
    add(
        "no criterion",
        with(base.clone(), "/acceptance_criteria", json!([])),
        "invalid_mission",
    );
    add(
        "a criterion of 1025 bytes",
        with(base.clone(), "/acceptance_criteria", json!([sized(1025)])),
        "invalid_mission",
    );
    add(
        "a blank criterion",
        with(base.clone(), "/acceptance_criteria", json!(["ok", "   "])),
        "invalid_mission",
    );
    add(
        "200,000 criteria",
        with(
            base.clone(),
            "/acceptance_criteria",
            json!(vec!["c"; 200_000]),
        ),
        "invalid_mission",
    );
    add(
        "repository path of 4097 bytes",
        with(
            base.clone(),
            "/repository_path",
            json!(format!("/{}", sized(4096))),
        ),
        "invalid_repository",
    );
    // Unicode edge cases.
    add(
        "NUL in the title",
        with(base.clone(), "/title", json!("fix\u{0}login")),
        "invalid_mission",
    );
    add(
        "ESC in the objective",
        with(base.clone(), "/objective", json!("make \u{1b}[31mred")),
        "invalid_mission",
    );
    add(
        "DEL in a criterion",
        with(
            base.clone(),
            "/acceptance_criteria",
            json!(["tests\u{7f} pass"]),
        ),
        "invalid_mission",
    );
    add(
        "C1 control (NEL) in the title",
        with(base.clone(), "/title", json!("fix\u{85}login")),
        "invalid_mission",
    );
    add(
        "bell in the title",
        with(base.clone(), "/title", json!("ding\u{7}")),
        "invalid_mission",
    );
    add(
        "a space in the id",
        with(base.clone(), "/mission_id", json!("m new")),
        "invalid_mission",
    );
    add(
        "a non-ASCII id",
        with(base.clone(), "/mission_id", json!("m-é")),
        "invalid_mission",
    );
    add(
        "a zero-width space id",
        with(base.clone(), "/mission_id", json!("m\u{200b}1")),
        "invalid_mission",
    );
    add(
        "an emoji id",
        with(base.clone(), "/mission_id", json!("🚀")),
        "invalid_mission",
    );
    add(
        "a right-to-left override id",
        with(base.clone(), "/mission_id", json!("m\u{202e}1")),
        "invalid_mission",
    );
    add(
        "a NUL in the repository path",
        with(
            base.clone(),
            "/repository_path",
            json!(format!("{}\u{0}", fixture.repo.path_text())),
        ),
        "invalid_repository",
    );
    // Path traversal and symlinks.
    add(
        "id with ..",
        with(base.clone(), "/mission_id", json!("../escape")),
        "invalid_mission",
    );
    add(
        "id with a slash",
        with(base.clone(), "/mission_id", json!("a/b")),
        "invalid_mission",
    );
    add(
        "mission id ..",
        with(base.clone(), "/mission_id", json!("..")),
        "invalid_mission",
    );
    add(
        "mission id .",
        with(base.clone(), "/mission_id", json!(".")),
        "invalid_mission",
    );
    add(
        "title with a right-to-left override",
        with(base.clone(), "/title", json!("Fix \u{202E}nigol")),
        "invalid_mission",
    );
    add(
        "objective with a zero-width space",
        with(base.clone(), "/objective", json!("Make it\u{200B} work")),
        "invalid_mission",
    );
    add(
        "objective with a line separator",
        with(base.clone(), "/objective", json!("one\u{2028}two")),
        "invalid_mission",
    );
    add(
        "id with a backslash",
        with(base.clone(), "/mission_id", json!("a\\b")),
        "invalid_mission",
    );
    add(
        "repository that walks up out of the repo",
        with(
            base.clone(),
            "/repository_path",
            json!(format!("{}/src/../..", fixture.repo.path_text())),
        ),
        "invalid_repository",
    );
    add(
        "repository below the root",
        with(
            base.clone(),
            "/repository_path",
            json!(format!("{}/src", fixture.repo.path_text())),
        ),
        "invalid_repository",
    );
    add(
        "repository /",
        with(base.clone(), "/repository_path", json!("/")),
        "invalid_repository",
    );
    add(
        "repository /etc/../etc",
        with(base.clone(), "/repository_path", json!("/etc/../etc")),
        "invalid_repository",
    );
    add(
        "repository that does not exist",
        with(
            base.clone(),
            "/repository_path",
            json!("/no/such/repository"),
        ),
        "invalid_repository",
    );
    add(
        "relative repository ../../",
        with(base.clone(), "/repository_path", json!("../../../../")),
        "invalid_repository",
    );
    add(
        // Resolved against the server's working directory, this names the fixture's
        // checkout: a relative path must be refused, never resolved there.
        "relative repository path that would resolve to the checkout",
        with(
            base.clone(),
            "/repository_path",
            json!(format!(
                "{}{}",
                "../".repeat(64),
                fixture.repo.path_text().trim_start_matches('/')
            )),
        ),
        "invalid_repository",
    );
    add(
        "empty repository path",
        with(base.clone(), "/repository_path", json!("")),
        "invalid_repository",
    );
    add(
        "repository inside .git",
        with(
            base.clone(),
            "/repository_path",
            json!(format!("{}/.git", fixture.repo.path_text())),
        ),
        "invalid_repository",
    );
    add(
        "symlink to a subdirectory of a repo",
        with(
            base.clone(),
            "/repository_path",
            json!(fixture.link("to-subdir")),
        ),
        "invalid_repository",
    );
    add(
        "symlink to a file",
        with(
            base.clone(),
            "/repository_path",
            json!(fixture.link("to-file")),
        ),
        "invalid_repository",
    );
    add(
        "dangling symlink",
        with(
            base.clone(),
            "/repository_path",
            json!(fixture.link("dangling")),
        ),
        "invalid_repository",
    );
    add(
        "symlink loop",
        with(
            base.clone(),
            "/repository_path",
            json!(fixture.link("loop-a")),
        ),
        "invalid_repository",
    );
    add(
        "symlink to a plain directory",
        with(
            base.clone(),
            "/repository_path",
            json!(fixture.link("to-plain-dir")),
        ),
        "invalid_repository",
    );
    add(
        "an existing id through a symlink to another repository",
        with(
            fixture.create("m-draft"),
            "/repository_path",
            json!(fixture.link("to-other-repo")),
        ),
        "mission_conflict",
    );
}

/// `x.pipe(f)` is `f(x)`; keeps the long table rows readable.
trait Pipe: Sized {
    fn pipe<T>(self, function: impl FnOnce(Self) -> T) -> T {
        function(self)
    }
}
impl Pipe for Value {}

fn read_cases(cases: &mut Vec<Case>) {
    let mut add = |name: &str, method: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("{method}: {name}"),
            line: request(method, params),
            expected,
        })
    };
    for method in ["mission.get", "mission.proof.get"] {
        add(
            "traversal id",
            method,
            json!({"mission_id": "../../etc/passwd"}),
            "invalid_mission",
        );
        add(
            "empty id",
            method,
            json!({"mission_id": ""}),
            "invalid_mission",
        );
        add(
            "id of 129 bytes",
            method,
            json!({"mission_id": sized(129)}),
            "invalid_mission",
        );
        add(
            "numeric id",
            method,
            json!({"mission_id": 1}),
            "invalid_request",
        );
        add("no id", method, json!({}), "invalid_request");
        add(
            "a missing mission",
            method,
            json!({"mission_id": "m-nobody"}),
            "mission_not_found",
        );
    }
    add(
        "a list of ids",
        "mission.get",
        json!({"mission_id": ["m-ready"]}),
        "invalid_request",
    );
    add(
        "a string for include_closed",
        "attention.list",
        json!({"mission_id": "m-ready", "include_closed": "yes"}),
        "invalid_request",
    );
    // attention.list's mission_id is a filter (§2.11): no mission, no items.
    add(
        "traversal mission id",
        "attention.list",
        json!({"mission_id": "../m-ready"}),
        "ok",
    );
    add(
        "a missing mission",
        "attention.list",
        json!({"mission_id": "m-nobody"}),
        "ok",
    );
    add(
        "a missing item",
        "attention.get",
        json!({"attention_id": "att-nobody"}),
        "attention_not_found",
    );
    add(
        "a traversal item id",
        "attention.get",
        json!({"attention_id": "../../attention"}),
        "attention_not_found",
    );
    add(
        "a numeric item id",
        "attention.get",
        json!({"attention_id": 5}),
        "invalid_request",
    );
    add("no item id", "attention.get", json!({}), "invalid_request");
}

fn configure_cases(fixture: &Fixture, cases: &mut Vec<Case>) {
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

fn start_cases(fixture: &Fixture, cases: &mut Vec<Case>) {
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

fn event_cases(cases: &mut Vec<Case>) {
    let mut add = |name: &str, method: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("{method}: {name}"),
            line: request(method, params),
            expected,
        })
    };
    add(
        "an unknown subscription type",
        "events.subscribe",
        json!({"subscriptions": [{"type": "everything"}]}),
        "invalid_request",
    );
    add(
        "subscriptions as an object",
        "events.subscribe",
        json!({"subscriptions": {}}),
        "invalid_request",
    );
    add(
        "a negative sequence",
        "events.subscribe",
        json!({"subscriptions": [{"type": "mission", "mission_id": "m-ready"}], "after_seq": -1}),
        "invalid_request",
    );
    add(
        "a traversal mission id",
        "events.subscribe",
        json!({"subscriptions": [{"type": "mission", "mission_id": "../../m"}]}),
        "invalid_mission",
    );
    add(
        "an unknown event kind",
        "events.subscribe",
        json!({"subscriptions": [{"type": "mission", "mission_id": "m-ready", "kinds": ["explosion"]}]}),
        "invalid_params",
    );
    add(
        "no match",
        "events.wait",
        json!({"timeout_ms": 10}),
        "invalid_request",
    );
    add(
        "a string timeout",
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "m-ready"}, "timeout_ms": "10"}),
        "invalid_request",
    );
    add(
        "an unknown status",
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "m-ready", "status": "exploded"}, "timeout_ms": 10}),
        "invalid_request",
    );
    add(
        "a traversal mission id",
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "../m"}, "timeout_ms": 10}),
        "invalid_mission",
    );
    add(
        "an unknown kind",
        "events.wait",
        json!({"match_event": {"event": "mission", "kind": "mission_exploded"}, "timeout_ms": 10}),
        "invalid_params",
    );
    add(
        "nothing happens in time",
        "events.wait",
        json!({"match_event": {"event": "mission", "mission_id": "m-ready", "status": "archived"}, "timeout_ms": 50}),
        "timeout",
    );
}

fn cockpit_cases(cases: &mut Vec<Case>) {
    // The test process is not the cockpit's peer class: same uid, but the server checks the
    // peer and refuses consent from anything it does not trust; shapes are refused first.
    let mut add = |name: &str, method: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("{method}: {name}"),
            line: request(method, params),
            expected,
        })
    };
    add(
        "an unknown action kind",
        "cockpit.preview",
        json!({"action": {"kind": "become_root"}}),
        "invalid_request",
    );
    add("no action", "cockpit.preview", json!({}), "invalid_request");
    add(
        "an unknown decision",
        "cockpit.decide",
        json!({"action": {"kind": "dismiss_attention", "attention_id": "a", "reason": "r"}, "shown_digest": "0", "decision": "yes"}),
        "invalid_request",
    );
    add(
        "a forged field",
        "cockpit.hello",
        json!({"trusted": true}),
        "invalid_request",
    );
}

fn pane_cases(fixture: &Fixture, cases: &mut Vec<Case>) {
    let pane = fixture.pane_id.as_str();
    let workspace = fixture.workspace_id.as_str();
    let tab = fixture.tab_id.as_str();
    let mut add = |name: &str, method: &str, params: Value, expected| {
        cases.push(Case {
            name: format!("{method}: {name}"),
            line: request(method, params),
            expected,
        })
    };
    add(
        "a missing pane",
        "pane.get",
        json!({"pane_id": "w99:p1"}),
        "pane_not_found",
    );
    add(
        "a traversal pane id",
        "pane.get",
        json!({"pane_id": "../../p1"}),
        "pane_not_found",
    );
    add(
        "a numeric pane id",
        "pane.get",
        json!({"pane_id": 1}),
        "invalid_params",
    );
    add(
        "an unknown source",
        "pane.read",
        json!({"pane_id": pane, "source": "everything"}),
        "invalid_params",
    );
    add(
        "negative lines",
        "pane.read",
        json!({"pane_id": pane, "source": "recent", "lines": -5}),
        "invalid_params",
    );
    add(
        "lines past u32",
        "pane.read",
        json!({"pane_id": pane, "source": "recent", "lines": 1u64 << 40}),
        "invalid_params",
    );
    add(
        "an invalid key combo",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["ctrl+"]}),
        "invalid_key",
    );
    add(
        "a prefix combo",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["prefix+c"]}),
        "invalid_key",
    );
    add(
        "one bad combo among good ones",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["a", "enter", "hyper+x"]}),
        "invalid_key",
    );
    add(
        "a Unicode modifier",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": ["ctrl+é"]}),
        "invalid_key",
    );
    add(
        "100,000 keys with a bad one last",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": (0..100_000).map(|i| if i == 99_999 { "f13".to_string() } else { "a".to_string() }).collect::<Vec<_>>()}),
        "invalid_key",
    );
    add(
        "keys as a string",
        "pane.send_keys",
        json!({"pane_id": pane, "keys": "enter"}),
        "invalid_params",
    );
    add(
        "text as a number",
        "pane.send_text",
        json!({"pane_id": pane, "text": 5}),
        "invalid_params",
    );
    add(
        "input with a bad key",
        "pane.send_input",
        json!({"pane_id": pane, "text": "ls", "keys": ["nope"]}),
        "invalid_key",
    );
    add(
        "an invalid regex",
        "pane.wait_for_output",
        json!({"pane_id": pane, "source": "visible", "match": {"type": "regex", "value": "(unclosed"}, "timeout_ms": 10}),
        "invalid_regex",
    );
    add(
        "an unknown match type",
        "pane.wait_for_output",
        json!({"pane_id": pane, "source": "visible", "match": {"type": "glob", "value": "*"}, "timeout_ms": 10}),
        "invalid_params",
    );
    add(
        "a missing workspace",
        "workspace.get",
        json!({"workspace_id": "w999"}),
        "workspace_not_found",
    );
    add(
        "a traversal workspace id",
        "workspace.close",
        json!({"workspace_id": "../w1"}),
        "workspace_not_found",
    );
    add(
        "a command that is not a list",
        "workspace.create",
        json!({"command": "sh -c 'rm -rf /'"}),
        "invalid_params",
    );
    add(
        "an empty command",
        "workspace.create",
        json!({"command": []}),
        "invalid_params",
    );
    add(
        "a cwd that does not exist",
        "workspace.create",
        json!({"command": ["true"], "cwd": "/no/such/../dir"}),
        "invalid_params",
    );
    add(
        "env values that are not strings",
        "workspace.create",
        json!({"command": ["true"], "env": {"A": 1}}),
        "invalid_params",
    );
    add(
        "a missing tab",
        "tab.get",
        json!({"tab_id": "w1:t99"}),
        "tab_not_found",
    );
    add(
        "a tab in a missing workspace",
        "tab.create",
        json!({"workspace_id": "w999"}),
        "workspace_not_found",
    );
    add(
        "a move to a huge index",
        "tab.move",
        json!({"tab_id": tab, "insert_index": -1}),
        "invalid_params",
    );
    add(
        "17 metadata tokens",
        "workspace.report_metadata",
        json!({"workspace_id": workspace, "source": "ci", "tokens": (0..17).map(|i| (format!("t{i}"), json!("v"))).collect::<serde_json::Map<_, _>>()}),
        "invalid_params",
    );
    add(
        "a ttl past a day",
        "workspace.report_metadata",
        json!({"workspace_id": workspace, "source": "ci", "tokens": {"a": "b"}, "ttl_ms": 86_400_001u64}),
        "invalid_params",
    );
    add(
        "an unknown agent state",
        "pane.report_agent",
        json!({"pane_id": pane, "source": "hook", "agent": "claude", "state": "dancing"}),
        "invalid_params",
    );
}

#[test]
fn every_hostile_request_gets_its_code_and_writes_nothing() {
    let fixture = Fixture::new();
    let mut cases = Vec::new();
    envelope_cases(&mut cases);
    create_cases(&fixture, &mut cases);
    read_cases(&mut cases);
    configure_cases(&fixture, &mut cases);
    start_cases(&fixture, &mut cases);
    event_cases(&mut cases);
    cockpit_cases(&mut cases);
    pane_cases(&fixture, &mut cases);

    let before = fixture.env.store_fingerprint();
    let mut failures = Vec::new();
    for case in &cases {
        let response = fixture.env.raw_line(&case.line);
        let got = match &response {
            None => "no reply".to_string(),
            Some(response) if response.get("result").is_some() => "ok".to_string(),
            Some(response) => response
                .pointer("/error/code")
                .and_then(Value::as_str)
                .unwrap_or("malformed reply")
                .to_string(),
        };
        let after = fixture.env.store_fingerprint();
        if got != case.expected || after != before {
            let excerpt: String = case.line.chars().take(160).collect();
            failures.push(format!(
                "{}\n    expected {}, got {got}{}\n    request: {excerpt}\n    reply: {}",
                case.name,
                case.expected,
                if after == before {
                    ""
                } else {
                    "; THE STORE CHANGED"
                },
                response.map_or("none".into(), |r| r
                    .to_string()
                    .chars()
                    .take(300)
                    .collect::<String>()),
            ));
        }
    }
    // The server is still healthy after all of it.
    assert_eq!(fixture.env.ok("ping", json!({}))["type"], "pong");
    let methods: std::collections::BTreeSet<&str> = cases
        .iter()
        .filter_map(|case| case.name.split(':').next())
        .collect();
    println!(
        "corpus: {} cases over {} methods, {} failures, store unchanged: {}",
        cases.len(),
        methods.len(),
        failures.len(),
        fixture.env.store_fingerprint() == before
    );
    assert!(
        cases.len() >= 150,
        "the corpus has only {} cases",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} corpus cases failed:\n{}\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n"),
        fixture.env.server_log()
    );
}

#[test]
fn a_thousand_idle_connections_do_not_starve_anyone() {
    raise_open_file_limit();
    let fixture = Fixture::new();
    let before = fixture.env.store_fingerprint();
    let mut idle = Vec::new();
    for index in 0..1000 {
        let mut stream = UnixStream::connect(&fixture.env.socket)
            .unwrap_or_else(|error| panic!("connection {index}: {error}"));
        if index % 2 == 0 {
            // Half of them send the start of a request and never finish it.
            stream
                .write_all(br#"{"id":"idle","method":"mission.li"#)
                .unwrap();
        }
        idle.push(stream);
    }
    // Everybody else is still served, on new connections, while the 1,000 stay open.
    for _ in 0..20 {
        assert_eq!(fixture.env.ok("ping", json!({}))["type"], "pong");
        let mission = fixture
            .env
            .ok("mission.get", json!({"mission_id": "m-ready"}));
        assert_eq!(mission["mission"]["status"], "draft");
    }
    fixture
        .env
        .ok("mission.create", fixture.create("m-during-idle"));
    // The idle ones got nothing: a partial line is not a request.
    let mut replied = 0;
    for stream in idle.iter().take(50) {
        stream
            .set_read_timeout(Some(std::time::Duration::from_millis(20)))
            .unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        if matches!(reader.read_line(&mut line), Ok(n) if n > 0) {
            replied += 1;
        }
    }
    assert_eq!(replied, 0, "an idle connection got a reply");
    drop(idle);
    let after = fixture.env.store_fingerprint();
    assert_ne!(
        after, before,
        "the create made while others idled is stored"
    );
    assert_eq!(fixture.env.ok("ping", json!({}))["type"], "pong");
    println!("idle connections: 1000 held open, 20 rounds of requests served meanwhile");
}

fn raise_open_file_limit() {
    // SAFETY: plain getrlimit/setrlimit on a local struct.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}
