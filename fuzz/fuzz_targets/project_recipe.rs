//! `.nagi/project.toml` text, as a hostile or broken repository could ship it.
//!
//! Properties:
//! - parsing and validation never panic;
//! - validation is deterministic (same text, same recipe or the same problems in the same
//!   order), and so is the consent digest of a valid recipe;
//! - a refusal lists at least one problem, each with a message;
//! - a valid recipe keeps the limits the validator promises (argv commands are non-empty,
//!   every service health URL holds `{port}` exactly once and, rendered, points at the
//!   loopback host; the worktree location cannot climb out of the repository).

#![no_main]

use libfuzzer_sys::fuzz_target;
use nagi_engine::recipe::{scope_digest, validate_str};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let first = validate_str(text);
    let second = validate_str(text);
    assert_eq!(first, second, "validation is not deterministic");
    match first {
        Ok(recipe) => {
            let digest = scope_digest(&recipe);
            assert_eq!(digest.len(), 64);
            assert!(digest.bytes().all(|byte| byte.is_ascii_hexdigit()));
            assert_eq!(digest, scope_digest(&recipe));
            if let Some(location) = &recipe.worktree.location {
                assert!(!location.starts_with('/') && !location.split(['/', '\\']).any(|part| part == ".."), "location {location:?}");
            }
            if let Some(setup) = &recipe.setup {
                assert!(!setup.command.is_empty(), "setup with an empty argv");
            }
            for (id, service) in &recipe.services {
                assert!(!service.command.is_empty(), "service {id} with an empty argv");
                assert_eq!(service.health.matches("{port}").count(), 1, "service {id}: {}", service.health);
                let rendered = service.health.replace("{port}", "41234");
                let rest = ["http://127.0.0.1:41234", "http://localhost:41234"]
                    .iter()
                    .find_map(|prefix| rendered.strip_prefix(prefix))
                    .unwrap_or_else(|| panic!("service {id}: {rendered} is not on the loopback host"));
                assert!(rest.is_empty() || rest.starts_with(['/', '?', '#']), "service {id}: {rendered} leaves the loopback host");
            }
            for check in &recipe.checks {
                assert!(!check.command.is_empty(), "check {} with an empty argv", check.id);
            }
            for cleanup in &recipe.cleanup {
                assert!(!cleanup.command.is_empty(), "cleanup with an empty argv");
            }
        }
        Err(problems) => {
            assert!(!problems.is_empty(), "refused without a problem");
            for problem in &problems {
                assert!(!problem.message.is_empty(), "a problem at {:?} has no message", problem.path);
            }
        }
    }
});
