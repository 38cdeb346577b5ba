//! Corpus cases of `mission.create` and the read methods.

use serde_json::json;

use super::*;

pub(super) fn create_cases(fixture: &Fixture, cases: &mut Vec<Case>) {
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

pub(super) fn read_cases(cases: &mut Vec<Case>) {
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
