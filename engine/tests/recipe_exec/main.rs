//! Executing a project recipe with real processes: copy_ignored into real linked worktrees
//! (`copy_ignored.rs`),
//! setup through the trusted runner, services on leased ports with HTTP health checks,
//! adoption after a simulated restart, stopping, and archive cleanup.

use std::time::Duration;

use nagi_engine::recipe::exec::{
    PortRange, RecipeExecConfig, RecipeExecError, RunTarget, SERVICE_LEASE_MARKER,
    adopt_or_restart_services, archive_cleanup, provision_run, stop_services,
};
use nagi_engine::recipe::validate_str;
use nagi_pane::process::{processes_in_group, read_stat};
use nagi_schema::pane::{ReadFormat, ReadSource};
use recipe_support::*;

mod copy_ignored;
mod recipe_support;
#[path = "../support/mod.rs"]
mod support;

// ---- setup --------------------------------------------------------------------------------

fn target(worktree: &std::path::Path, run_id: &str) -> RunTarget {
    RunTarget {
        mission_id: nagi_schema::ids::MissionId::parse("m1").unwrap(),
        run_id: nagi_schema::ids::RunId::parse(run_id).unwrap(),
        worktree: worktree.to_path_buf(),
    }
}

fn config(first_port: u16) -> RecipeExecConfig {
    RecipeExecConfig {
        port_range: PortRange {
            first: first_port,
            last: first_port + 40,
        },
        stop_grace: Duration::from_secs(2),
        open_panes: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_runs_in_the_worktree_with_markers_and_shows_in_the_project_pane() {
    let session = TestSession::new().await;
    let worktree = tempfile::tempdir().unwrap();
    let recipe = validate_str(
        "schema = 1\n[setup]\ncommand = [\"sh\", \"-c\", \"echo preparing-the-checkout; env > setup-env.txt\"]\ntimeout_seconds = 30\n",
    )
    .unwrap();
    let lines = ProgressLines::default();
    let provisioned = provision_run(
        &session.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &RecipeExecConfig {
            open_panes: true,
            ..config(42100)
        },
        &lines.sink(),
    )
    .await
    .unwrap();
    assert!(provisioned.setup_ran);
    let environment = std::fs::read_to_string(worktree.path().join("setup-env.txt")).unwrap();
    assert!(environment.contains("NAGI_RUN_ID=r1"), "{environment}");
    assert!(
        environment.contains(&format!(
            "NAGI_SESSION_MARKER={}",
            nagi_engine::leftovers::session_marker_value(
                &session.engine.config.current().paths.data_dir
            )
        )),
        "{environment}"
    );
    assert!(
        lines.joined().contains("setup finished"),
        "{}",
        lines.joined()
    );
    let pane = provisioned.project_pane.expect("a project pane");
    let shown = eventually(Duration::from_secs(10), || {
        let text = session
            .engine
            .panes
            .read(
                &pane.pane_id,
                ReadSource::Recent,
                Some(200),
                ReadFormat::Text,
                true,
            )
            .ok()?
            .text;
        text.contains("preparing-the-checkout").then_some(text)
    });
    assert!(
        shown.is_some(),
        "the setup output never appeared in the project pane"
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_setup_aborts_with_its_exit_code_and_stderr() {
    let session = TestSession::new().await;
    let worktree = tempfile::tempdir().unwrap();
    let recipe = validate_str(&format!(
        "schema = 1\n[setup]\ncommand = [\"sh\", \"-c\", \"echo some-progress; echo 'npm ERR! cannot install {}' >&2; exit 4\"]\n{}",
        "x".repeat(3000),
        http_service_toml("web", 30)
    ))
    .unwrap();
    let error = provision_run(
        &session.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &config(42150),
        &ProgressLines::default().sink(),
    )
    .await
    .unwrap_err();
    let RecipeExecError::SetupFailed { message } = &error else {
        panic!("expected a setup failure, got {error:?}")
    };
    assert!(message.contains("exited with code 4"), "{message}");
    let (_, excerpt) = message
        .split_once("; stderr:\n")
        .unwrap_or_else(|| panic!("no stderr excerpt: {message}"));
    assert!(excerpt.ends_with("xxxx"), "{excerpt}");
    assert!(
        !excerpt.contains("some-progress"),
        "stderr is quoted, not stdout: {excerpt}"
    );
    assert!(
        excerpt.chars().count() <= 2049,
        "at most 2048 characters (+ an ellipsis) are quoted"
    );
    assert!(
        session.leases("r1").is_empty(),
        "no service started after a failed setup"
    );
    session.shutdown().await;
}

// ---- services -----------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_serving_http_on_its_port_becomes_healthy_with_its_markers() {
    let session = TestSession::new().await;
    let worktree = tempfile::tempdir().unwrap();
    let recipe = validate_str(&format!("schema = 1\n{}", http_service_toml("web", 30))).unwrap();
    let provisioned = provision_run(
        &session.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &config(42200),
        &ProgressLines::default().sink(),
    )
    .await
    .unwrap();
    let web = &provisioned.services[0];
    assert!(!web.adopted);
    assert!((42200..=42240).contains(&web.port));
    assert_eq!(web.health_url, format!("http://127.0.0.1:{}/", web.port));
    let environ = process_environment(web.pid);
    assert!(
        environ.contains(&format!("PORT={}", web.port)),
        "{environ:?}"
    );
    assert!(environ.contains(&format!("{SERVICE_LEASE_MARKER}={}", web.lease_id)));
    assert!(
        !environ
            .iter()
            .any(|entry| entry.starts_with("NAGI_SESSION_MARKER=")),
        "services must survive leftover cleanup"
    );
    let lease = &session.leases("r1")[0];
    assert_eq!((lease.pid, lease.port), (Some(web.pid), web.port));
    stop_services(&session.engine, "m1", "r1", &config(42200))
        .await
        .unwrap();
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_that_never_listens_times_out_and_is_stopped() {
    let session = TestSession::new().await;
    let worktree = tempfile::tempdir().unwrap();
    let recipe = validate_str(
        "schema = 1\n[services.idle]\ncommand = [\"sh\", \"-c\", \"echo idle-service-started; exec sleep 60\"]\nport_env = \"PORT\"\nhealth = \"http://127.0.0.1:{port}/health\"\ntimeout_seconds = 1\n",
    )
    .unwrap();
    let lines = ProgressLines::default();
    let error = provision_run(
        &session.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &config(42250),
        &lines.sink(),
    )
    .await
    .unwrap_err();
    let RecipeExecError::ServiceFailed {
        service_id,
        message,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(service_id, "idle");
    assert!(
        message.contains("within 1 s") && message.contains("was stopped"),
        "{message}"
    );
    assert!(
        message.contains("idle-service-started"),
        "the log is quoted: {message}"
    );
    let pid = started_pid(&lines.joined());
    assert!(process_gone(pid), "the timed-out service {pid} still runs");
    assert!(session.leases("r1").is_empty(), "its lease was released");
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_service_that_exits_early_fails_with_its_exit_code() {
    let session = TestSession::new().await;
    let worktree = tempfile::tempdir().unwrap();
    let recipe = validate_str(&format!(
        "schema = 1\n{}[services.broken]\ncommand = [\"sh\", \"-c\", \"echo 'address already in use' >&2; exit 3\"]\nport_env = \"PORT\"\nhealth = \"http://localhost:{{port}}/\"\ntimeout_seconds = 30\n",
        http_service_toml("another", 30)
    ))
    .unwrap();
    let error = provision_run(
        &session.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &config(42300),
        &ProgressLines::default().sink(),
    )
    .await
    .unwrap_err();
    let RecipeExecError::ServiceFailed {
        service_id,
        message,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(service_id, "broken");
    assert!(
        message.contains("exited with code 3") && message.contains("address already in use"),
        "{message}"
    );
    assert!(
        session.leases("r1").is_empty(),
        "the healthy service started before it was stopped too"
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_adopts_a_healthy_service_and_restarts_a_dead_one() {
    let data = tempfile::tempdir().unwrap();
    let worktree = tempfile::tempdir().unwrap();
    let recipe = validate_str(&format!(
        "schema = 1\n[setup]\ncommand = [\"sh\", \"-c\", \"echo run >> setup-count.txt\"]\n{}",
        http_service_toml("web", 30)
    ))
    .unwrap();
    let first = TestSession::at(data.path()).await;
    let provisioned = provision_run(
        &first.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &config(42350),
        &ProgressLines::default().sink(),
    )
    .await
    .unwrap();
    let original = provisioned.services[0].clone();
    first.shutdown().await;
    drop(first);

    // A new engine on the same session: only the store remembers the service.
    let second = TestSession::at(data.path()).await;
    let adopted = adopt_or_restart_services(
        &second.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &config(42350),
        &ProgressLines::default().sink(),
    )
    .await
    .unwrap();
    assert!(adopted.services[0].adopted);
    assert_eq!(
        (adopted.services[0].pid, adopted.services[0].port),
        (original.pid, original.port)
    );
    assert!(!adopted.setup_ran);
    assert_eq!(
        std::fs::read_to_string(worktree.path().join("setup-count.txt")).unwrap(),
        "run\n",
        "setup never runs again"
    );

    // A service that died is started again on its leased port, still without setup.
    kill_group(original.pid);
    assert!(
        eventually(Duration::from_secs(5), || process_gone(original.pid)
            .then_some(()))
        .is_some()
    );
    let restarted = adopt_or_restart_services(
        &second.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &config(42350),
        &ProgressLines::default().sink(),
    )
    .await
    .unwrap();
    let web = &restarted.services[0];
    assert!(!web.adopted);
    assert_ne!(web.pid, original.pid);
    assert_eq!(web.port, original.port);
    assert_eq!(
        std::fs::read_to_string(worktree.path().join("setup-count.txt")).unwrap(),
        "run\n"
    );
    stop_services(&second.engine, "m1", "r1", &config(42350))
        .await
        .unwrap();
    second.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_ends_the_whole_process_group_and_releases_the_lease() {
    let session = TestSession::new().await;
    let worktree = tempfile::tempdir().unwrap();
    let python = python3();
    let recipe = validate_str(&format!(
        "schema = 1\n[services.web]\ncommand = [\"sh\", \"-c\", \"sleep 300 & exec {python} -m http.server \\\"$PORT\\\" --bind 127.0.0.1\"]\nport_env = \"PORT\"\nhealth = \"http://127.0.0.1:{{port}}/\"\ntimeout_seconds = 30\n"
    ))
    .unwrap();
    let provisioned = provision_run(
        &session.engine,
        &target(worktree.path(), "r1"),
        &recipe,
        &config(42400),
        &ProgressLines::default().sink(),
    )
    .await
    .unwrap();
    let leader = provisioned.services[0].pid as i32;
    let group = processes_in_group(leader);
    assert!(
        group.len() >= 2,
        "the service and its background sleep share a group: {group:?}"
    );
    let stopped = stop_services(&session.engine, "m1", "r1", &config(42400))
        .await
        .unwrap();
    assert_eq!(stopped[0].service_id, "web");
    assert!(
        eventually(Duration::from_secs(5), || processes_in_group(leader)
            .is_empty()
            .then_some(()))
        .is_some(),
        "{:?}",
        processes_in_group(leader)
    );
    assert!(group.iter().all(|pid| process_gone(*pid as u32)));
    assert!(session.leases("r1").is_empty());
    assert!(
        stop_services(&session.engine, "m1", "r1", &config(42400))
            .await
            .unwrap()
            .is_empty(),
        "stopping again is a no-op"
    );
    session.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archive_stops_services_then_runs_cleanup_in_order_logging_failures() {
    let session = TestSession::new().await;
    let worktree = tempfile::tempdir().unwrap();
    let recipe = validate_str(&format!(
        "schema = 1\n{}\
         [[cleanup]]\ncommand = [\"sh\", \"-c\", \"echo one >> order.txt\"]\n\
         [[cleanup]]\ncommand = [\"sh\", \"-c\", \"echo cleanup-broke >&2; exit 7\"]\n\
         [[cleanup]]\ncommand = [\"sh\", \"-c\", \"echo three >> order.txt\"]\n",
        http_service_toml("web", 30)
    ))
    .unwrap();
    let run = target(worktree.path(), "r1");
    let provisioned = provision_run(
        &session.engine,
        &run,
        &recipe,
        &config(42450),
        &ProgressLines::default().sink(),
    )
    .await
    .unwrap();
    let pid = provisioned.services[0].pid;
    let report = archive_cleanup(&session.engine, &run, &recipe, &config(42450)).await;
    assert_eq!(report.stopped.len(), 1);
    assert!(report.stop_failure.is_none());
    assert!(process_gone(pid));
    assert_eq!(
        std::fs::read_to_string(worktree.path().join("order.txt")).unwrap(),
        "one\nthree\n"
    );
    assert_eq!(report.commands.len(), 3);
    assert!(report.commands[0].failure.is_none() && report.commands[2].failure.is_none());
    let failure = report.commands[1].failure.as_deref().unwrap();
    assert!(
        failure.contains("exited with code 7") && failure.contains("cleanup-broke"),
        "{failure}"
    );
    let transcript = std::fs::read_to_string(&provisioned.transcript_path).unwrap();
    assert!(
        transcript.contains("cleanup failed (archive continues)"),
        "{transcript}"
    );
    assert!(session.leases("r1").is_empty());
    session.shutdown().await;
}

/// Three consecutive ports below the kernel's ephemeral range (where no outgoing
/// connection takes one by chance), the first held by a listener of this test and the
/// other two free when found.
fn busy_port_then_two_free() -> (std::net::TcpListener, u16) {
    let ephemeral_start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    (20_000..ephemeral_start.saturating_sub(3))
        .step_by(7)
        .find_map(|first| {
            let busy = std::net::TcpListener::bind(("127.0.0.1", first)).ok()?;
            for next in [first + 1, first + 2] {
                std::net::TcpListener::bind(("127.0.0.1", next)).ok()?;
            }
            Some((busy, first))
        })
        .expect("three consecutive free ports below the ephemeral range")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_leases_are_durable_unique_across_runs_and_skip_busy_ports() {
    let data = tempfile::tempdir().unwrap();
    let (busy, first_port) = busy_port_then_two_free();
    let session = TestSession::at(data.path()).await;
    let run_one = target(data.path(), "r1");
    let run_two = target(data.path(), "r2");
    let range = PortRange {
        first: first_port,
        last: first_port + 2,
    };
    let engine = &session.engine;
    let first = nagi_engine::recipe::exec::ports::lease_port(engine, &run_one, "web", range, None)
        .await
        .unwrap();
    assert_ne!(
        first.port, first_port,
        "the first port is in use by another program"
    );
    let again = nagi_engine::recipe::exec::ports::lease_port(engine, &run_one, "web", range, None)
        .await
        .unwrap();
    assert_eq!(again, first, "the same key keeps its lease");
    let second = nagi_engine::recipe::exec::ports::lease_port(engine, &run_two, "web", range, None)
        .await
        .unwrap();
    let mut both = vec![first.port, second.port];
    both.sort();
    assert_eq!(
        both,
        vec![first_port + 1, first_port + 2],
        "each run has its own port"
    );
    let exhausted =
        nagi_engine::recipe::exec::ports::lease_port(engine, &run_two, "api", range, None)
            .await
            .unwrap_err();
    assert!(
        matches!(exhausted, RecipeExecError::PortsExhausted { .. }),
        "{exhausted:?}"
    );
    session.shutdown().await;
    drop(session);
    drop(busy);
    let reopened = TestSession::at(data.path()).await;
    let mut ports: Vec<u16> = reopened
        .leases("r1")
        .iter()
        .chain(reopened.leases("r2").iter())
        .map(|lease| lease.port)
        .collect();
    ports.sort();
    assert_eq!(
        ports,
        vec![first_port + 1, first_port + 2],
        "leases survive a restart"
    );
    reopened.shutdown().await;
}

/// The pid of "service <id>: started pid <pid>; …".
fn started_pid(progress: &str) -> u32 {
    progress
        .lines()
        .find_map(|line| {
            line.split("pid ").nth(1).and_then(|rest| {
                rest.split(|c: char| !c.is_ascii_digit())
                    .next()?
                    .parse()
                    .ok()
            })
        })
        .unwrap_or_else(|| panic!("no pid in the progress lines:\n{progress}"))
}

fn kill_group(pid: u32) {
    // SAFETY: signalling the test's own service group.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

fn process_gone(pid: u32) -> bool {
    read_stat(pid as i32).is_none_or(|stat| stat.is_zombie())
}
