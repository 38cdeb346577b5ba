//! `nagi demo`, the README's first command: a real mission end to end, offline, in a temp
//! dir of its own, ending with the proof and the commands to look around.

use nagi_tests::*;

#[test]
fn the_demo_runs_a_mission_to_archived_and_prints_its_proof() {
    let env = TestEnv::new();
    let scratch = env.root().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let run: CliRun = env
        .command()
        .arg("demo")
        .env("TMPDIR", &scratch)
        .output()
        .expect("nagi demo runs")
        .into();
    assert_eq!(run.status, 0, "{}", run.describe());
    for fragment in [
        "mission_proof_sealed demo → ready_to_close",
        "proof of mission demo (ready_to_close)",
        "readme-names-project grep -q demo-project README.md → exit 0",
        "mission_proof_sealed demo → archived",
        "proof of mission demo (archived)",
        "nagi pane attach w1:p1 --observe",
    ] {
        assert!(
            run.stdout.contains(fragment),
            "missing {fragment:?}\n{}",
            run.describe()
        );
    }
    // The commands it prints work: the mission is there, archived, and the server stops.
    let config_dir = run
        .stdout
        .lines()
        .find_map(|line| line.trim().strip_prefix("NAGI_CONFIG_DIR="))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the demo prints its NAGI_CONFIG_DIR")
        .to_owned();
    assert!(
        config_dir.starts_with(scratch.to_str().unwrap()),
        "the demo stays in its temp dir: {config_dir}"
    );
    let server = DemoServer { config_dir };
    // The follow-up commands run as printed, from a shell where `nagi` is not installed.
    let printed = run
        .stdout
        .lines()
        .find(|line| line.contains("mission get demo"))
        .expect("the demo prints how to look at the mission")
        .trim()
        .to_owned();
    let as_printed: CliRun = std::process::Command::new("sh")
        .arg("-c")
        .arg(&printed)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("NAGI_SOCKET_PATH")
        .env_remove("NAGI_SESSION")
        .output()
        .unwrap()
        .into();
    assert_eq!(as_printed.status, 0, "{printed}\n{}", as_printed.describe());
    assert!(
        as_printed.stdout.contains("archived"),
        "{}",
        as_printed.describe()
    );
    let mission = server.nagi(&["mission", "get", "demo", "--json"]);
    assert_eq!(mission.status, 0, "{}", mission.describe());
    assert!(
        mission.stdout.contains("\"archived\""),
        "{}",
        mission.describe()
    );
    // The demo agent read the project it was started in (the README), not some other folder.
    let transcript = server.nagi(&[
        "pane", "read", "w1:p1", "--source", "recent", "--lines", "1000",
    ]);
    assert_eq!(transcript.status, 0, "{}", transcript.describe());
    assert!(
        transcript.stdout.contains("demo-project")
            && !transcript.stdout.contains("cannot read README.md"),
        "the agent read the project's README:\n{}",
        transcript.describe()
    );
    // The list a person reads hides archived missions, and says so; --all shows them.
    let listed = server.nagi(&["mission", "list"]);
    assert!(
        !listed.stdout.contains("demo ")
            && listed
                .stdout
                .contains("1 archived mission hidden; --all shows it"),
        "{}",
        listed.describe()
    );
    let everything = server.nagi(&["mission", "list", "--all"]);
    let row = everything
        .stdout
        .lines()
        .find(|line| line.starts_with("demo "))
        .unwrap_or_else(|| panic!("--all lists the archived demo: {}", everything.describe()));
    assert!(
        row.contains("archived") && row.trim_end().len() > "demo  archived".len(),
        "a title: {row}"
    );
    let stopped = server.nagi(&["server", "stop"]);
    assert_eq!(stopped.status, 0, "{}", stopped.describe());
}

/// The server the demo left running; stopped on drop, also when an assertion failed.
struct DemoServer {
    config_dir: String,
}

impl DemoServer {
    fn nagi(&self, args: &[&str]) -> CliRun {
        std::process::Command::new(nagi_binary())
            .args(args)
            .env("NAGI_CONFIG_DIR", &self.config_dir)
            .env_remove("NAGI_SOCKET_PATH")
            .env_remove("NAGI_SESSION")
            .output()
            .unwrap()
            .into()
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        let _ = self.nagi(&["server", "stop"]);
    }
}
