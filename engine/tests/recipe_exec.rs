//! Executing a project recipe with real processes: copy_ignored into real linked worktrees,
//! setup through the trusted runner, services on leased ports with HTTP health checks,
//! adoption after a simulated restart, stopping, and archive cleanup.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use nagi_engine::recipe::exec::{
    CopyOutcome, PortRange, RecipeExecConfig, RecipeExecError, RunTarget, SERVICE_LEASE_MARKER,
    adopt_or_restart_services, archive_cleanup, copy_ignored, provision_run, stop_services,
};
use nagi_engine::recipe::validate_str;
use nagi_engine::worktrees::prepare_mission_worktree;
use nagi_pane::process::{processes_in_group, read_stat};
use nagi_schema::pane::{ReadFormat, ReadSource};
use recipe_support::*;

// ---- copy_ignored -------------------------------------------------------------------------

fn copy_recipe(paths: &[&str]) -> nagi_engine::recipe::ProjectRecipe {
    let list = paths
        .iter()
        .map(|path| format!("{path:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    validate_str(&format!(
        "schema = 1\n[worktree]\ncopy_ignored = [{list}]\n"
    ))
    .unwrap()
}

fn refusal(
    result: Result<Vec<nagi_engine::recipe::exec::CopiedFile>, RecipeExecError>,
) -> (String, String) {
    match result {
        Err(RecipeExecError::CopyRefused { path, reason }) => (path, reason),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn ignored_files_are_copied_with_their_permissions_and_missing_ones_skipped() {
    let repository = TestRepository::new();
    repository.write("config/local.toml", "db = 'dev'\n");
    std::fs::set_permissions(
        repository.path("config/local.toml"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    let destination = tempfile::tempdir().unwrap();
    let copied = copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["config/local.toml", "fixtures/absent.json"]),
    )
    .unwrap();
    assert_eq!(copied[0].outcome, CopyOutcome::Copied);
    assert_eq!(copied[0].bytes, 11);
    assert_eq!(copied[1].outcome, CopyOutcome::MissingSource);
    let target = destination.path().join("config/local.toml");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "db = 'dev'\n");
    assert_eq!(
        std::fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o750
    );
    assert!(
        !destination.path().join("fixtures").exists(),
        "nothing is created for a missing source"
    );
}

#[test]
fn a_file_reached_through_a_symlink_is_refused() {
    let repository = TestRepository::new();
    repository.write("real.toml", "x = 1\n");
    std::os::unix::fs::symlink("real.toml", repository.path("link.toml")).unwrap();
    std::fs::create_dir_all(repository.path("real_dir")).unwrap();
    repository.write("real_dir/inner.toml", "y = 2\n");
    std::os::unix::fs::symlink("real_dir", repository.path("confdir")).unwrap();
    let destination = tempfile::tempdir().unwrap();
    let (path, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["link.toml"]),
    ));
    assert_eq!(path, "link.toml");
    assert!(reason.contains("symbolic link"), "{reason}");
    let (_, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["confdir/inner.toml"]),
    ));
    assert!(
        reason.contains("`confdir`") && reason.contains("symbolic link"),
        "{reason}"
    );
    // The destination must not redirect the copy either.
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), destination.path().join("config")).unwrap();
    repository.write("config/local.toml", "db = 1\n");
    let (_, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["config/local.toml"]),
    ));
    assert!(
        reason.contains("new worktree") && reason.contains("symbolic link"),
        "{reason}"
    );
    assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
}

#[test]
fn files_over_the_size_limits_are_refused_before_anything_is_copied() {
    let repository = TestRepository::new();
    // Sparse files: the limits are checked on sizes, before any byte is read.
    let big = std::fs::File::create(repository.path("data.big")).unwrap();
    big.set_len(16 * 1024 * 1024 + 1).unwrap();
    let destination = tempfile::tempdir().unwrap();
    let (path, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["data.big"]),
    ));
    assert_eq!(path, "data.big");
    assert!(reason.contains("16 MiB"), "{reason}");
    let names: Vec<String> = (0..5).map(|index| format!("part{index}.big")).collect();
    for name in &names {
        std::fs::File::create(repository.path(name))
            .unwrap()
            .set_len(15 * 1024 * 1024)
            .unwrap();
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (path, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&refs),
    ));
    assert_eq!(path, "part4.big");
    assert!(reason.contains("64 MiB"), "{reason}");
    assert!(
        std::fs::read_dir(destination.path())
            .unwrap()
            .next()
            .is_none(),
        "nothing was copied"
    );
}

#[test]
fn a_file_git_does_not_ignore_is_refused_and_nothing_is_copied() {
    let repository = TestRepository::new();
    repository.write("config/local.toml", "db = 'dev'\n");
    repository.write("notes.txt", "untracked, not ignored\n");
    let destination = tempfile::tempdir().unwrap();
    let (path, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["config/local.toml", "notes.txt"]),
    ));
    assert_eq!(path, "notes.txt");
    assert!(reason.contains("not ignored by Git"), "{reason}");
    assert!(
        !destination.path().join("config/local.toml").exists(),
        "the refusal came before any copy"
    );
}

#[test]
fn identical_destinations_are_accepted_and_different_ones_refused() {
    let repository = TestRepository::new();
    // A tracked file arrives with the checkout: identical bytes, no ignore needed.
    let destination = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(destination.path().join("docs")).unwrap();
    std::fs::write(destination.path().join("docs/guide.md"), "# Guide\n").unwrap();
    let copied = copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["docs/guide.md"]),
    )
    .unwrap();
    assert_eq!(copied[0].outcome, CopyOutcome::AlreadyPresent);
    repository.write("config/local.toml", "db = 'dev'\n");
    std::fs::create_dir_all(destination.path().join("config")).unwrap();
    std::fs::write(
        destination.path().join("config/local.toml"),
        "db = 'other'\n",
    )
    .unwrap();
    let (_, reason) = refusal(copy_ignored(
        &repository.root(),
        destination.path(),
        &copy_recipe(&["config/local.toml"]),
    ));
    assert!(reason.contains("different content"), "{reason}");
    assert_eq!(
        std::fs::read_to_string(destination.path().join("config/local.toml")).unwrap(),
        "db = 'other'\n"
    );
}

// ---- the mission worktree -----------------------------------------------------------------

#[test]
fn the_mission_worktree_is_a_linked_checkout_on_its_branch_with_the_ignored_files() {
    let repository = TestRepository::new();
    repository.write("config/local.toml", "db = 'dev'\n");
    let recipe = copy_recipe(&["config/local.toml"]);
    let prepared = prepare_mission_worktree(&repository.root(), "m-1", Some(&recipe)).unwrap();
    assert!(prepared.worktree.created);
    assert_eq!(
        prepared.worktree.path,
        repository.root().join(".worktrees/m-1")
    );
    assert_eq!(
        git_in(
            &prepared.worktree.path,
            &["rev-parse", "--abbrev-ref", "HEAD"]
        ),
        "mission/m-1"
    );
    assert_eq!(
        git_in(&prepared.worktree.path, &["rev-parse", "HEAD"]),
        repository.head()
    );
    assert_eq!(
        std::fs::read_to_string(prepared.worktree.path.join("config/local.toml")).unwrap(),
        "db = 'dev'\n"
    );
    assert_eq!(
        std::fs::read_to_string(prepared.worktree.path.join("src/lib.rs")).unwrap(),
        repository_file(&repository, "src/lib.rs")
    );
    // Asking again finds the same worktree; the copy finds identical bytes.
    let again = prepare_mission_worktree(&repository.root(), "m-1", Some(&recipe)).unwrap();
    assert!(!again.worktree.created);
    assert_eq!(again.worktree.path, prepared.worktree.path);
    assert_eq!(again.copied[0].outcome, CopyOutcome::AlreadyPresent);
}

#[test]
fn an_existing_mission_branch_is_reused_and_the_recipe_location_is_honoured() {
    let repository = TestRepository::new();
    repository.git(&["branch", "mission/m-2"]);
    repository.write(
        "src/lib.rs",
        "pub fn login() -> &'static str { \"later\" }\n",
    );
    repository.git(&["commit", "-q", "-am", "later"]);
    let recipe = validate_str("schema = 1\n[worktree]\nlocation = \"trees/missions\"\n").unwrap();
    let prepared = prepare_mission_worktree(&repository.root(), "m-2", Some(&recipe)).unwrap();
    assert_eq!(
        prepared.worktree.path,
        repository.root().join("trees/missions/m-2")
    );
    assert_eq!(
        git_in(
            &prepared.worktree.path,
            &["rev-parse", "--abbrev-ref", "HEAD"]
        ),
        "mission/m-2"
    );
    assert_ne!(
        git_in(&prepared.worktree.path, &["rev-parse", "HEAD"]),
        repository.head(),
        "the existing branch keeps its commit"
    );
    let refused = prepare_mission_worktree(&repository.root(), "a:b", None).unwrap_err();
    assert!(
        refused.to_string().contains("cannot name the Git branch"),
        "{refused}"
    );
}

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

fn repository_file(repository: &TestRepository, path: &str) -> String {
    std::fs::read_to_string(repository.path(path)).unwrap()
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

/// Fixtures: real Git repositories, engines on real session directories, progress capture.
mod recipe_support {
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::{Arc, Mutex, OnceLock};
    use std::time::{Duration, Instant};

    use nagi_engine::config::{EngineConfig, UserConfig};
    use nagi_engine::engine::{Engine, Shutdown};
    use nagi_engine::live::claims::ClaimLocks;
    use nagi_engine::live::registry::RunRegistry;
    use nagi_engine::missions::Missions;
    use nagi_engine::paths::SessionPaths;
    use nagi_pane::{PaneHost, PaneHostConfig};
    use nagi_store::access::PortLeaseRow;
    use nagi_store::{Store, StoreConfig};

    pub fn git_in(directory: &Path, args: &[&str]) -> String {
        let output = Command::new("git")
            .args([
                "-c",
                "user.name=Test",
                "-c",
                "user.email=test@example.com",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(directory)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// A Git checkout with one commit and a `.gitignore` for the copy tests.
    pub struct TestRepository {
        directory: tempfile::TempDir,
    }

    impl TestRepository {
        pub fn new() -> TestRepository {
            let repository = TestRepository {
                directory: tempfile::tempdir().unwrap(),
            };
            repository.git(&["init", "-q", "-b", "main", "."]);
            repository.write(
                ".gitignore",
                "config/local.toml\n*.big\nlink.toml\nreal.toml\nconfdir\nreal_dir/\nfixtures/\n.worktrees/\ntrees/\n",
            );
            repository.write("src/lib.rs", "pub fn login() -> &'static str { \"ok\" }\n");
            repository.write("docs/guide.md", "# Guide\n");
            repository.git(&["add", "-A"]);
            repository.git(&["commit", "-q", "-m", "initial"]);
            repository
        }

        pub fn root(&self) -> PathBuf {
            self.directory.path().canonicalize().unwrap()
        }

        pub fn path(&self, relative: &str) -> PathBuf {
            self.root().join(relative)
        }

        pub fn write(&self, relative: &str, content: &str) {
            let path = self.path(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }

        pub fn git(&self, args: &[&str]) -> String {
            git_in(&self.root(), args)
        }

        pub fn head(&self) -> String {
            self.git(&["rev-parse", "HEAD"])
        }
    }

    /// An engine on a real session directory (store, panes), as the server builds it.
    pub struct TestSession {
        _directory: Option<tempfile::TempDir>,
        pub engine: Arc<Engine>,
    }

    impl TestSession {
        pub async fn new() -> TestSession {
            let directory = tempfile::tempdir().unwrap();
            let mut session = TestSession::at(directory.path()).await;
            session._directory = Some(directory);
            session
        }

        pub async fn at(root: &Path) -> TestSession {
            let root = root.canonicalize().unwrap();
            let data_dir = root.join("session");
            std::fs::create_dir_all(&data_dir).unwrap();
            let paths = SessionPaths {
                config_dir: root.join("config"),
                socket_path: data_dir.join("nagi.sock"),
                data_dir,
                session_name: None,
            };
            let store = Arc::new(Store::open(StoreConfig::new(paths.database_path())).unwrap());
            let missions = Missions::new(store).unwrap();
            let engine = Arc::new(Engine {
                config: nagi_engine::config::ConfigCell::new(EngineConfig::new(
                    paths.clone(),
                    UserConfig::default(),
                )),
                missions,
                runs: Arc::new(RunRegistry::default()),
                panes: PaneHost::new(PaneHostConfig::default()),
                checkouts: Default::default(),
                claim_locks: ClaimLocks::new(paths.claim_lock_dir()),
                provider_versions: Default::default(),
                supervisors: Default::default(),
                shutdown: Shutdown::new(),
                // SAFETY: geteuid has no preconditions.
                server_uid: unsafe { libc::geteuid() },
                server_pid: std::process::id(),
                fleet: std::sync::OnceLock::new(),
            });
            TestSession {
                _directory: None,
                engine,
            }
        }

        pub fn leases(&self, run_id: &str) -> Vec<PortLeaseRow> {
            self.engine
                .missions
                .store()
                .read(|reader| reader.port_leases_of_run("m1", run_id))
                .unwrap()
        }

        /// What a stopping server does: its panes end, its store closes. Services live on.
        pub async fn shutdown(&self) {
            self.engine.panes.shutdown().await;
            self.engine.missions.store().close();
        }
    }

    /// Collects the progress lines a launch reports.
    #[derive(Clone, Default)]
    pub struct ProgressLines(Arc<Mutex<Vec<String>>>);

    impl ProgressLines {
        pub fn sink(&self) -> impl Fn(&str) + Send + Sync + 'static {
            let lines = self.0.clone();
            move |line: &str| lines.lock().unwrap().push(line.to_owned())
        }

        pub fn joined(&self) -> String {
            self.0.lock().unwrap().join("\n")
        }
    }

    pub fn eventually<T>(timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(value) = probe() {
                return Some(value);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The real interpreter (not a version-manager shim), so the service's pid is Python's.
    pub fn python3() -> String {
        static PYTHON: OnceLock<String> = OnceLock::new();
        PYTHON
            .get_or_init(|| {
                let output = Command::new("python3")
                    .args(["-c", "import sys; print(sys.executable)"])
                    .output()
                    .expect("python3 runs");
                String::from_utf8(output.stdout).unwrap().trim().to_owned()
            })
            .clone()
    }

    /// A `[services.<id>]` table: Python's `http.server` on `$PORT`.
    pub fn http_service_toml(id: &str, timeout_seconds: u32) -> String {
        format!(
            "[services.{id}]\ncommand = [\"sh\", \"-c\", \"exec {} -m http.server \\\"$PORT\\\" --bind 127.0.0.1\"]\nport_env = \"PORT\"\nhealth = \"http://127.0.0.1:{{port}}/\"\ntimeout_seconds = {timeout_seconds}\n",
            python3()
        )
    }

    pub fn process_environment(pid: u32) -> Vec<String> {
        let bytes = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        bytes
            .split(|byte| *byte == 0)
            .map(|entry| String::from_utf8_lossy(entry).into_owned())
            .collect()
    }
}

// The same hostile configuration the engine's scan tests plant.
#[path = "../../exec/src/workspace/hostile_config_fixture.rs"]
mod hostile_config_fixture;

#[test]
fn creating_a_mission_worktree_runs_no_program_the_repository_config_names() {
    // libgit2 checks the new worktree out: it must run neither the smudge
    // filters nor the post-checkout hook the repository names, and the ignore
    // check of copy_ignored must run nothing either.
    let repository = TestRepository::new();
    let scratch = tempfile::tempdir().unwrap();
    let fixture =
        hostile_config_fixture::HostileGitConfig::plant(&repository.root(), scratch.path());
    repository.write("config/local.toml", "db = 'dev'\n");
    let recipe = copy_recipe(&["config/local.toml"]);
    let prepared = prepare_mission_worktree(&repository.root(), "m-h", Some(&recipe));
    let ran = fixture.programs_that_ran();
    assert!(
        ran.is_empty(),
        "programs named by the repository ran: {ran:#?}"
    );
    let prepared = prepared.unwrap();
    for file in hostile_config_fixture::HostileGitConfig::stirred_files() {
        assert_eq!(
            std::fs::read_to_string(prepared.worktree.path.join(file)).unwrap(),
            format!("contents of {file}\n"),
            "{file} is checked out as committed"
        );
    }
}
