//! A password hash gives its memory back to the system when it ends. In a process of its own:
//! the resident set is the whole process's, which other tests running beside it would move.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use ars_domain::credentials::{hash_password, verify_password};

/// This process's resident set, in MiB.
fn resident_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb / 1024.0
}

#[test]
fn a_hash_gives_its_memory_back_to_the_system_when_it_ends() {
    let before = resident_mib();
    // Each hash writes 19 MiB of memory; kept by its thread or by the allocator's arenas, the
    // resident set would grow by that much for each thread that hashed.
    let hash = hash_password("correct horse").unwrap();
    for _ in 0..3 {
        assert!(verify_password("correct horse", &hash));
    }
    // Other threads, one after the other (the server hashes on a thread per core).
    for _ in 0..2 {
        std::thread::spawn({
            let hash = hash.clone();
            move || {
                assert!(verify_password("correct horse", &hash));
                assert!(!verify_password("battery staple", &hash));
            }
        })
        .join()
        .unwrap();
        let after = resident_mib();
        assert!(
            after - before < 8.0,
            "{before:.1} MiB before the hashes, {after:.1} MiB after another thread's"
        );
    }
    let after = resident_mib();
    assert!(
        after - before < 8.0,
        "{before:.1} MiB before the hashes, {after:.1} MiB after"
    );
}
