//! Framing and decoding over the real socket (contract §1, preface item 1).

use nagi_tests::*;
use serde_json::{Value, json};

fn code(response: &Value) -> &str {
    response["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("not an error: {response}"))
}

#[test]
fn many_requests_on_one_connection_are_answered_in_order() {
    let mut env = TestEnv::new();
    env.start_server();
    let mut lines = String::new();
    for index in 0..50 {
        lines.push_str(
            &json!({"id": format!("r{index}"), "method": "ping", "params": {}}).to_string(),
        );
        lines.push('\n');
    }
    let responses = env.raw_bytes(lines.as_bytes());
    assert_eq!(responses.len(), 50);
    for (index, response) in responses.iter().enumerate() {
        assert_eq!(response["id"], format!("r{index}"));
        assert_eq!(response["result"]["type"], "pong");
        assert_eq!(response["result"]["protocol"], 16);
        assert_eq!(response["result"]["version"], env!("CARGO_PKG_VERSION"));
    }
}

#[test]
fn decode_errors_use_the_contract_codes_and_keep_the_connection() {
    // An integer id (as JSON-RPC clients send) is a nagi extension: answered with the same
    // id, as given; any other kind of id cannot be echoed.
    let mut env = TestEnv::new();
    env.start_server();
    let input = concat!(
        "this is not json\n",
        "{\"id\":7,\"method\":\"ping\",\"params\":{}}\n",
        "{\"id\":\"no-params\",\"method\":\"ping\"}\n",
        "{\"id\":\"null-params\",\"method\":\"ping\",\"params\":null}\n",
        "{\"id\":\"unknown\",\"method\":\"mission.fly\",\"params\":{}}\n",
        "\n",
        "   \n",
        "{\"id\":\"enum\",\"method\":\"mission.start\",\"params\":{\"mission_id\":\"m\",\"run_id\":\"r\",\"provider\":\"gpt\",\"mode\":\"managed\"}}\n",
        "{\"id\":\"strict\",\"method\":\"mission.start\",\"params\":{\"mission_id\":\"m\",\"run_id\":\"r\",\"provider\":\"codex\",\"mode\":\"managed\",\"workspace_write_confirmed\":true}}\n",
        "{\"id\":\"negative\",\"method\":\"mission.configure\",\"params\":{\"mission_id\":\"m\",\"checks\":[{\"kind\":\"manual\",\"id\":\"c\",\"reviewers\":[\"a\"],\"required\":true,\"covers\":[-1]}]}}\n",
        "{\"id\":\"after\",\"method\":\"ping\",\"params\":{}}\n",
        "{\"id\":1.5,\"method\":\"ping\",\"params\":{}}\n",
        "{\"id\":42,\"method\":\"mission.fly\",\"params\":{}}\n",
    );
    let responses = env.raw_bytes(input.as_bytes());
    assert_eq!(
        responses.len(),
        11,
        "blank lines get no reply: {responses:#?}"
    );
    assert_eq!(code(&responses[0]), "invalid_request");
    assert_eq!(responses[0]["id"], "");
    assert_eq!(
        responses[1]["result"]["type"], "pong",
        "an integer id is answered"
    );
    assert_eq!(responses[1]["id"], 7, "and echoed as the number it was");
    for (response, id) in responses[2..8].iter().zip([
        "no-params",
        "null-params",
        "unknown",
        "enum",
        "strict",
        "negative",
    ]) {
        assert_eq!(code(response), "invalid_request", "{response}");
        assert_eq!(response["id"], id, "a readable string id is echoed");
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("invalid request: ")
        );
    }
    assert_eq!(responses[8]["result"]["type"], "pong");
    assert_eq!(code(&responses[9]), "invalid_request", "{}", responses[9]);
    assert_eq!(responses[9]["id"], "", "a fractional id is not an id");
    assert_eq!(code(&responses[10]), "invalid_request", "{}", responses[10]);
    assert_eq!(responses[10]["id"], 42, "an error keeps the integer id too");
}

#[test]
fn invalid_utf8_gets_an_error_and_the_connection_goes_on() {
    let mut env = TestEnv::new();
    env.start_server();
    let mut input =
        b"{\"id\":\"x\",\"method\":\"ping\",\"params\":{\"a\":\"\xff\xfe\"}}\n".to_vec();
    input.extend_from_slice(b"{\"id\":\"ok\",\"method\":\"ping\",\"params\":{}}\n");
    let responses = env.raw_bytes(&input);
    assert_eq!(responses.len(), 2);
    assert_eq!(code(&responses[0]), "invalid_request");
    assert!(
        responses[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("UTF-8")
    );
    assert_eq!(responses[1]["id"], "ok");
}

#[test]
fn an_unterminated_two_mebibyte_line_gets_an_error_reply_and_others_are_served() {
    let mut env = TestEnv::new();
    env.start_server();
    let huge = vec![b'a'; 2 * 1024 * 1024];
    let responses = env.raw_bytes(&huge);
    assert_eq!(responses.len(), 1, "one error, then the connection closes");
    assert_eq!(code(&responses[0]), "request_too_large");
    // Exactly at the limit is fine; one byte over is not.
    let padding = |length: usize| {
        format!(
            "{{\"id\":\"p\",\"method\":\"ping\",\"params\":{{}},\"pad\":\"{}\"}}",
            "x".repeat(length)
        )
    };
    let base = padding(0).len();
    let at_limit = padding(1024 * 1024 - base);
    assert_eq!(at_limit.len(), 1024 * 1024);
    assert_eq!(env.raw_line(&at_limit).unwrap()["result"]["type"], "pong");
    let over = padding(1024 * 1024 - base + 1);
    assert_eq!(code(&env.raw_line(&over).unwrap()), "request_too_large");
    assert_eq!(env.ok("ping", json!({}))["type"], "pong");
}

#[test]
fn a_partial_line_at_end_of_input_gets_no_reply() {
    let mut env = TestEnv::new();
    env.start_server();
    let responses = env.raw_bytes(b"{\"id\":\"half\",\"method\":\"pi");
    assert!(responses.is_empty(), "{responses:?}");
    assert_eq!(env.ok("ping", json!({}))["type"], "pong");
}

#[test]
fn garbage_on_one_connection_does_not_disturb_another() {
    let mut env = TestEnv::new();
    env.start_server();
    let repo = TestRepo::new();
    let mut steady = env.client();
    let garbage = std::thread::scope(|scope| {
        let handle = scope.spawn(|| {
            let mut junk = Vec::new();
            for index in 0..200u32 {
                junk.extend_from_slice(format!("{{\"id\":{index},garbage\n").as_bytes());
            }
            env.raw_bytes(&junk)
        });
        for index in 0..20 {
            let result = steady
                .request(
                    "mission.create",
                    create_params(&format!("m{index}"), &repo.path_text()),
                )
                .unwrap();
            assert_eq!(result["created"], true);
        }
        handle.join().unwrap()
    });
    assert_eq!(garbage.len(), 200);
    assert!(
        garbage
            .iter()
            .all(|response| code(response) == "invalid_request")
    );
}

#[test]
fn methods_outside_our_scope_name_themselves() {
    let mut env = TestEnv::new();
    env.start_server();
    for method in ["pane.split", "layout.apply", "plugin.list", "pane.zoom"] {
        let response = env.call(method, json!({}));
        assert_eq!(code(&response), "feature_unavailable");
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .contains(method)
        );
    }
}

/// A client that sends each request as soon as it has the last answer has its socket
/// polled after each reply (`[server] reply_poll_microseconds`); requests that arrive
/// during a poll, after it gave up, split across writes, or two in one write are each
/// answered once and in order.
#[test]
fn a_prompt_client_on_a_polled_socket_gets_every_answer_in_order() {
    use std::io::{BufRead, BufReader, Write};
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::write(
        env.config_dir.join("config.toml"),
        "[server]\nreply_poll_microseconds = 1000\n",
    )
    .unwrap();
    env.start_server();
    let repo = TestRepo::new();
    let stream = std::os::unix::net::UnixStream::connect(&env.socket).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut read_answer = || {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the server hung up"
        );
        serde_json::from_str::<Value>(&line).unwrap()
    };
    let create = |index: usize| {
        json!({"id": format!("c{index}"), "method": "mission.create", "params": {
            "mission_id": format!("polled-{index}"), "title": "Polled",
            "repository_path": repo.path_text(), "objective": "Stay in order",
            "acceptance_criteria": ["Every answer arrives once"]}})
        .to_string()
            + "\n"
    };
    for index in 0..100 {
        writer.write_all(create(index).as_bytes()).unwrap();
        let answer = read_answer();
        assert_eq!(answer["id"], format!("c{index}"), "{answer}");
        assert_eq!(answer["result"]["created"], true, "{answer}");
    }
    // Split across two writes, the second long after any poll has given up.
    let split = create(100);
    let (head, tail) = split.split_at(split.len() / 2);
    writer.write_all(head.as_bytes()).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    writer.write_all(tail.as_bytes()).unwrap();
    assert_eq!(read_answer()["id"], "c100");
    // Two requests in one write, then a request that comes late.
    writer
        .write_all((create(101) + &create(102)).as_bytes())
        .unwrap();
    assert_eq!(read_answer()["id"], "c101");
    assert_eq!(read_answer()["id"], "c102");
    std::thread::sleep(std::time::Duration::from_millis(20));
    writer.write_all(create(103).as_bytes()).unwrap();
    assert_eq!(read_answer()["id"], "c103");
    // Half a line, then the client hangs up: no answer, nothing created.
    writer.write_all(&create(104).as_bytes()[..40]).unwrap();
    writer.shutdown(std::net::Shutdown::Both).unwrap();
    let listed = env.ok("mission.list", json!({}));
    assert_eq!(
        listed["missions"].as_array().unwrap().len(),
        104,
        "{listed}"
    );
}

fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// The security review held 4,000 connections with ~1 MiB of an unfinished line each and
/// pinned 4.7 GB of the server. The unfinished lines of all connections now share one
/// budget: past it a line is refused with `server_unavailable`, the server stays small,
/// and a fresh request is still served.
#[test]
fn unfinished_lines_of_many_connections_share_one_budget() {
    use std::io::{Read, Write};
    let mut env = TestEnv::new();
    std::fs::create_dir_all(&env.config_dir).unwrap();
    std::fs::write(
        env.config_dir.join("config.toml"),
        "[server]\npartial_line_budget_mib = 4\n",
    )
    .unwrap();
    let pid = env.start_server();
    env.ok("ping", json!({}));
    let baseline = resident_kib(pid);
    let chunk = vec![b'x'; 512 * 1024];
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..200 {
        let mut stream = std::os::unix::net::UnixStream::connect(&env.socket).unwrap();
        // A refused connection is closed by the server while we write: that is expected.
        let _ = stream.write_all(b"{\"id\":\"1\",\"method\":\"ping\",\"params\":{\"pad\":\"");
        let _ = stream.write_all(&chunk);
        stream
            .set_read_timeout(Some(std::time::Duration::from_millis(100)))
            .unwrap();
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => answer.extend_from_slice(&buffer[..read]),
                Err(_) => break,
            }
        }
        if !answer.is_empty() {
            let text = String::from_utf8_lossy(&answer);
            assert!(text.contains("\"server_unavailable\""), "{text}");
            assert!(text.contains("unfinished request lines"), "{text}");
            refused += 1;
        }
        held.push(stream);
    }
    let holding = resident_kib(pid);
    assert!(refused >= 150, "only {refused} of 200 lines were refused");
    // Fresh, complete requests are still served.
    env.ok("ping", json!({}));
    // 200 × 512 KiB would be 100 MiB; the budget holds 4 MiB, plus each connection's read
    // buffer (64 KiB) and line allowance (16 KiB).
    assert!(
        holding < baseline + 40 * 1024,
        "the server grew from {baseline} KiB to {holding} KiB"
    );
    drop(held);
    env.ok("ping", json!({}));
    // And the memory goes back to the system once the connections are gone (a memory
    // figure, not a timing: the wait only lets the server notice the hang-ups).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut after = resident_kib(pid);
    while after > baseline + 12 * 1024 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        after = resident_kib(pid);
    }
    assert!(
        after <= baseline + 12 * 1024,
        "the server held {after} KiB after the connections closed (baseline {baseline} KiB, {holding} KiB while held)"
    );
}
