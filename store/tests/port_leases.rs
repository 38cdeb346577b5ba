//! Port leases of project-recipe services (migration 2) against a real SQLite file.

use nagi_store::access::PortLeaseRow;
use nagi_store::*;

fn open(dir: &tempfile::TempDir) -> Store {
    Store::open(StoreConfig::new(dir.path().join("nagi.db"))).expect("open store")
}

fn lease(lease_id: &str, run_id: &str, service_id: &str, port: u16) -> PortLeaseRow {
    PortLeaseRow {
        lease_id: lease_id.into(),
        mission_id: "m1".into(),
        run_id: run_id.into(),
        service_id: service_id.into(),
        port,
        pid: None,
        process_start_time: None,
        leased_at_millis: 7,
    }
}

fn insert(store: &Store, row: PortLeaseRow) -> Result<(), StoreError> {
    store
        .write_blocking(move |writer| writer.insert_port_lease(&row))
        .expect("the job ran")
}

#[test]
fn leases_survive_reopening_and_carry_their_process() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(&dir);
        insert(&store, lease("l1", "r1", "web", 41000)).unwrap();
        let updated = store
            .write_blocking(|writer| writer.set_port_lease_process("l1", Some(4242), Some(987654)))
            .unwrap()
            .unwrap();
        assert!(updated);
        store.close();
    }
    let store = open(&dir);
    let row = store
        .read(|reader| reader.port_lease("m1", "r1", "web"))
        .unwrap()
        .expect("the lease is durable");
    assert_eq!(row.port, 41000);
    assert_eq!(row.pid, Some(4242));
    assert_eq!(row.process_start_time, Some(987654));
    assert_eq!(row.leased_at_millis, 7);
    assert_eq!(
        store
            .read(|reader| reader.port_leases_of_run("m1", "r1"))
            .unwrap(),
        vec![row]
    );
    assert!(
        store
            .read(|reader| reader.port_leases_of_run("m1", "r2"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_port_and_a_service_key_are_each_leased_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    insert(&store, lease("l1", "r1", "web", 41000)).unwrap();
    let same_port = insert(&store, lease("l2", "r2", "web", 41000)).expect_err("the port is taken");
    assert!(same_port.message.contains("UNIQUE"), "{same_port:?}");
    let same_key = insert(&store, lease("l3", "r1", "web", 41001))
        .expect_err("the service already has a lease");
    assert!(same_key.message.contains("UNIQUE"), "{same_key:?}");
    insert(&store, lease("l4", "r2", "web", 41001)).unwrap();
    let ports: Vec<u16> = store
        .read(|reader| reader.port_leases())
        .unwrap()
        .iter()
        .map(|row| row.port)
        .collect();
    assert_eq!(ports, vec![41000, 41001]);
}

#[test]
fn a_released_port_can_be_leased_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir);
    insert(&store, lease("l1", "r1", "web", 41000)).unwrap();
    assert!(
        store
            .write_blocking(|writer| writer.release_port_lease("l1"))
            .unwrap()
            .unwrap()
    );
    assert!(
        !store
            .write_blocking(|writer| writer.release_port_lease("l1"))
            .unwrap()
            .unwrap(),
        "already released"
    );
    assert!(
        !store
            .write_blocking(|writer| writer.set_port_lease_process("l1", Some(1), Some(1)))
            .unwrap()
            .unwrap()
    );
    insert(&store, lease("l2", "r2", "api", 41000)).unwrap();
    assert_eq!(
        store
            .read(|reader| reader.port_lease("m1", "r2", "api"))
            .unwrap()
            .unwrap()
            .lease_id,
        "l2"
    );
}
