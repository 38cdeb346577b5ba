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
    ("nagi", 5),
    ("nagi-tests", 6),
];

fn workspace_dependencies() -> BTreeMap<String, Vec<(String, String)>> {
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline", "--manifest-path", manifest])
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).expect("metadata is JSON");
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
                (dependency["name"].as_str().expect("dependency name").to_owned(), kind)
            })
            .collect();
        graph.insert(name, dependencies);
    }
    graph
}

fn layer_of(name: &str) -> Option<u32> {
    LAYERS.iter().find(|(crate_name, _)| *crate_name == name).map(|(_, layer)| *layer)
}

#[test]
fn every_workspace_crate_has_a_layer_and_names_only_lower_layers() {
    let graph = workspace_dependencies();
    let mut violations = Vec::new();
    for (name, dependencies) in &graph {
        let Some(layer) = layer_of(name) else {
            violations.push(format!("{name} has no layer in tests/tests/it/layering.rs LAYERS"));
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
    for required in ["nagi-mission", "nagi-exec", "nagi-proof", "nagi-pane", "nagi-engine"] {
        assert!(graph.contains_key(required), "{required} is missing from the workspace: {graph:#?}");
    }
}

#[test]
fn the_mission_state_machine_depends_on_no_io_crate() {
    let graph = workspace_dependencies();
    let output = Command::new(option_env!("CARGO").unwrap_or("cargo"))
        .args(["tree", "--offline", "-e", "normal", "-p", "nagi-mission", "--prefix", "none", "--manifest-path"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml"))
        .output()
        .expect("run cargo tree");
    assert!(output.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&output.stderr));
    let tree = String::from_utf8_lossy(&output.stdout);
    for io_crate in ["tokio ", "rusqlite ", "git2 ", "portable-pty "] {
        assert!(
            !tree.lines().any(|line| line.starts_with(io_crate)),
            "nagi-mission pulls in {io_crate}; the state machine must stay free of I/O:\n{tree}\n{graph:#?}"
        );
    }
}
