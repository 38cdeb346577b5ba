//! The crate graph is the layering (ARCHITECTURE.md, "Crates and layers"): a crate names
//! only crates of a lower layer, so a lower crate cannot reach into a higher one and a
//! cycle between crates cannot be written. This reads the real `cargo metadata`.

use std::collections::BTreeMap;
use std::process::Command;

/// Each workspace crate's layer. Crates of the same layer may not name each other.
const LAYERS: &[(&str, u32)] = &[
    ("nagi-schema", 0),
    ("nagi-os", 0),
    ("nagi-store", 1),
    ("nagi-providers", 1),
    ("nagi-mission", 1),
    ("nagi-pane", 1),
    ("nagi-cockpit", 1),
    ("nagi-exec", 2),
    ("nagi-proof", 3),
    ("nagi-engine", 4),
    ("nagi-fleet", 5),
    ("nagi", 6),
    ("nagi-tests", 7),
];

fn workspace_dependencies() -> BTreeMap<String, Vec<(String, String)>> {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
            "--manifest-path",
            manifest,
        ])
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("metadata is JSON");
    let mut graph = BTreeMap::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().expect("name").to_owned();
        let dependencies = package["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|dependency| dependency["path"].is_string())
            .map(|dependency| {
                let kind = dependency["kind"].as_str().unwrap_or("normal").to_owned();
                (
                    dependency["name"]
                        .as_str()
                        .expect("dependency name")
                        .to_owned(),
                    kind,
                )
            })
            .collect();
        graph.insert(name, dependencies);
    }
    graph
}

fn layer_of(name: &str) -> Option<u32> {
    LAYERS
        .iter()
        .find(|(crate_name, _)| *crate_name == name)
        .map(|(_, layer)| *layer)
}

#[test]
fn every_workspace_crate_has_a_layer_and_names_only_lower_layers() {
    let graph = workspace_dependencies();
    let mut violations = Vec::new();
    for (name, dependencies) in &graph {
        let Some(layer) = layer_of(name) else {
            violations.push(format!(
                "{name} has no layer in tests/tests/it/layering.rs LAYERS"
            ));
            continue;
        };
        for (dependency, kind) in dependencies {
            match layer_of(dependency) {
                None => violations.push(format!("{name} depends on {dependency}, which has no layer")),
                Some(dependency_layer) if dependency_layer >= layer => violations.push(format!(
                    "{name} (layer {layer}) depends on {dependency} (layer {dependency_layer}, {kind})"
                )),
                Some(_) => {}
            }
        }
    }
    assert!(
        violations.is_empty(),
        "the crate graph breaks the layering:\n  {}\nthe graph: {graph:#?}",
        violations.join("\n  ")
    );
    // The layering is only a promise if the crates that carry it exist.
    for required in [
        "nagi-mission",
        "nagi-exec",
        "nagi-proof",
        "nagi-pane",
        "nagi-engine",
    ] {
        assert!(
            graph.contains_key(required),
            "{required} is missing from the workspace: {graph:#?}"
        );
    }
}

#[test]
fn the_mission_state_machine_depends_on_no_io_crate() {
    let graph = workspace_dependencies();
    let output = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "-p",
            "nagi-mission",
            "--prefix",
            "none",
            "--manifest-path",
        ])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml"))
        .output()
        .expect("run cargo tree");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tree = String::from_utf8_lossy(&output.stdout);
    for io_crate in ["tokio ", "rusqlite ", "git2 ", "portable-pty "] {
        assert!(
            !tree.lines().any(|line| line.starts_with(io_crate)),
            "nagi-mission pulls in {io_crate}; the state machine must stay free of I/O:\n{tree}\n{graph:#?}"
        );
    }
}

/// The top-level modules of a crate that `source` (one module's files) names through
/// `crate::<module>`.
fn named_modules(source: &str, modules: &[String]) -> Vec<String> {
    modules
        .iter()
        .filter(|module| {
            let needle = format!("crate::{module}");
            source.match_indices(&needle).any(|(at, _)| {
                let after = source[at + needle.len()..].chars().next();
                !after.is_some_and(|next| next.is_alphanumeric() || next == '_')
            })
        })
        .cloned()
        .collect()
}

fn rust_sources(path: &std::path::Path, into: &mut String) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        entries.sort();
        for entry in entries {
            rust_sources(&entry, into);
        }
    } else if path.is_file() && path.extension().is_some_and(|extension| extension == "rs") {
        // Comments may name modules freely; only code counts.
        for line in std::fs::read_to_string(path).unwrap().lines() {
            if !line.trim_start().starts_with("//") {
                into.push_str(line);
                into.push('\n');
            }
        }
    }
}

/// A cycle in `graph`, if there is one, as the modules along it.
fn find_cycle(graph: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, Vec<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(node.to_owned(), 1);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            match state.get(next.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|module| module == next).unwrap();
                    let mut cycle = path[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(cycle) = visit(next, graph, state, path) {
                        return Some(cycle);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(node.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for node in graph.keys() {
        if state.get(node.as_str()).copied().unwrap_or(0) == 0 {
            let mut path = Vec::new();
            if let Some(cycle) = visit(node, graph, &mut state, &mut path) {
                return Some(cycle);
            }
        }
    }
    None
}

#[test]
fn no_crate_has_a_cycle_between_its_top_level_modules() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut cycles = Vec::new();
    let mut crates_seen = 0;
    for member in std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
    {
        let source_dir = member.join("src");
        if !member.join("Cargo.toml").is_file() || !source_dir.is_dir() {
            continue;
        }
        crates_seen += 1;
        let mut modules = Vec::new();
        for entry in std::fs::read_dir(&source_dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
        {
            let name = entry.file_stem().unwrap().to_string_lossy().to_string();
            let is_module = (entry.is_dir() && entry.join("mod.rs").is_file())
                || (entry.extension().is_some_and(|extension| extension == "rs")
                    && name != "lib"
                    && name != "main");
            // Test-only modules (compiled under `cfg(test)`) may use what they test.
            let test_only = name == "tests" || name == "test_support";
            if is_module && !test_only {
                modules.push(name);
            }
        }
        let mut graph = BTreeMap::new();
        for module in &modules {
            let mut source = String::new();
            rust_sources(&source_dir.join(module), &mut source);
            rust_sources(&source_dir.join(format!("{module}.rs")), &mut source);
            let named: Vec<String> = named_modules(&source, &modules)
                .into_iter()
                .filter(|named| named != module)
                .collect();
            graph.insert(module.clone(), named);
        }
        if let Some(cycle) = find_cycle(&graph) {
            cycles.push(format!("{}: {}", member.display(), cycle.join(" -> ")));
        }
    }
    assert!(
        crates_seen >= 10,
        "the workspace's crates were not found from {}",
        root.display()
    );
    assert!(
        cycles.is_empty(),
        "modules that import each other in a cycle:\n  {}",
        cycles.join("\n  ")
    );
}
