//! `POST /sim/flood`: MODIFIED events as fast as watchers take them, for
//! benchmarks. Each event bumps one object's resourceVersion by splicing it
//! into the stored bytes (no serialization), round robin over the objects
//! present when the flood starts. The writer stays within half the history
//! of the slowest open watch, so a fast reader never falls out of the
//! window (a stalled one holds the flood back instead).

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::state::{lock, Sim};
use crate::store::Key;

/// Touches per lock hold.
const BATCH: usize = 1000;

/// Write `events` MODIFIED events on resource `res`; returns how many were written.
pub fn flood(sim: &Sim, res: usize, events: u64) -> u64 {
    let (keys, window): (Vec<Key>, u64) = {
        let st = lock(&sim.store);
        (
            st.iter(res).map(|(k, _)| k.clone()).collect(),
            (st.history_cap as u64 / 2).max(1),
        )
    };
    if keys.is_empty() {
        return 0;
    }
    let mut done = 0u64;
    let mut cursor = 0usize;
    let mut misses = 0usize;
    while done < events {
        let rv = lock(&sim.store).rv;
        if sim
            .slowest_watch()
            .is_some_and(|s| rv.saturating_sub(s) > window)
        {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let wrote = sim.write(|st| {
            let mut wrote = 0u64;
            while wrote < BATCH as u64 && done + wrote < events && misses < keys.len() {
                let Some(key) = keys.get(cursor % keys.len()) else {
                    break;
                };
                cursor = cursor.wrapping_add(1);
                if st.touch(res, key) {
                    wrote += 1;
                    misses = 0;
                } else {
                    misses += 1; // deleted since the flood began
                }
            }
            wrote
        });
        done += wrote;
        sim.stats.flood_events.fetch_add(wrote, Ordering::Relaxed);
        if wrote == 0 {
            break; // every object is gone
        }
    }
    done
}
