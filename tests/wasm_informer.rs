//! The informer against the sim with faults injected at random: once churn
//! stops and the informer has caught up, its store equals the sim's state
//! exactly (every key at the same resourceVersion), and so does a map kept
//! only from the add/update/delete handlers. Runs in Node and in Chromium.
#![cfg(target_arch = "wasm32")]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use kubewasm::api::ApiResource;
use kubewasm::cache::{
    Handler, InformerOptions, Notification, ResourceListWatch, ResourceScope, SharedIndexInformer,
};
use kubewasm::rest::Client;
use kubewasm::rt::{real_clock, Clock, Instant, SharedClock, Sleep};
use serde_json::json;
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

#[path = "support/sim.rs"]
mod sim;

use sim::{open_watches, sleep, state as sim_state_of};

async fn sim_state(c: &Client) -> BTreeMap<String, String> {
    sim_state_of(c, "pods").await
}

fn store_state(inf: &SharedIndexInformer) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    inf.store().for_each(|k, o| {
        m.insert(k.to_owned(), o.resource_version().to_owned());
    });
    m
}

/// The real clock, counting timers that fire: after `stop()` none may.
struct CountingClock {
    real: SharedClock,
    fired: Rc<std::cell::Cell<u64>>,
}

impl Clock for CountingClock {
    fn now(&self) -> Instant {
        self.real.now()
    }
    fn wall_millis(&self) -> f64 {
        self.real.wall_millis()
    }
    fn sleep_until(&self, deadline: Instant) -> Sleep {
        let inner = self.real.sleep_until(deadline);
        let fired = self.fired.clone();
        Box::pin(async move {
            inner.await;
            fired.set(fired.get() + 1);
        })
    }
}

#[wasm_bindgen_test]
async fn informer_converges_to_the_sim_under_random_faults() {
    let c = sim::client();
    sim::post(&c, "/sim/faults/clear", json!({})).await;
    sim::post(
        &c,
        "/sim/seed",
        json!({"namespaces": 3, "pods": 120, "seed": 1}),
    )
    .await;
    let watches_before = open_watches(&c).await;

    let scope = ResourceScope::new(ApiResource::builtin("pods").expect("pods"));
    let lw = ResourceListWatch::new(c.clone(), scope.clone());
    let opts = sim::fault_opts();
    let fired = Rc::new(std::cell::Cell::new(0u64));
    let clock: SharedClock = Rc::new(CountingClock {
        real: real_clock(),
        fired: fired.clone(),
    });
    let inf = SharedIndexInformer::new(Rc::new(lw), clock, opts);
    let from_handlers: Rc<RefCell<BTreeMap<String, String>>> = Rc::default();
    let m = from_handlers.clone();
    let handler: Handler = Rc::new(move |n: Notification| {
        let mut m = m.borrow_mut();
        match n {
            Notification::Add(o, _) | Notification::Update(_, o) => {
                if let Ok(k) = kubewasm::cache::object_key(&o) {
                    m.insert(k, o.resource_version().to_owned());
                }
            }
            Notification::Delete(d) => {
                if let Ok(k) = d.key() {
                    m.remove(&k);
                }
            }
        }
        None
    });
    inf.add_handler(handler, false);
    inf.start();
    inf.wait_for_sync().await;
    // A second informer in streaming watch-list mode rides the same faults.
    let mut wl_opts = sim::fault_opts();
    wl_opts.reflector.use_watch_list = true;
    let inf_wl = SharedIndexInformer::new(
        Rc::new(ResourceListWatch::new(c.clone(), scope)),
        real_clock(),
        wl_opts,
    );
    inf_wl.start();
    inf_wl.wait_for_sync().await;

    for seed in 0..20u64 {
        let faults = sim::fault_round(&c, seed, false).await;
        let want = sim_state(&c).await;
        let ok = sim::until(300, 100, async || {
            store_state(&inf) == want
                && *from_handlers.borrow() == want
                && store_state(&inf_wl) == want
        })
        .await;
        if !ok {
            let got = store_state(&inf);
            let missing: Vec<_> = want
                .iter()
                .filter(|(k, v)| got.get(*k) != Some(v))
                .take(5)
                .collect();
            let extra: Vec<_> = got
                .keys()
                .filter(|k| !want.contains_key(*k))
                .take(5)
                .collect();
            panic!(
                "seed {seed} (faults {faults}): store did not converge (watch-list informer equal: {}); {} vs {} keys, differing {missing:?}, extra {extra:?}, status {:?}",
                store_state(&inf_wl) == want,
                got.len(),
                want.len(),
                inf.status_snapshot()
            );
        }
        console_log!("seed {seed}: converged with faults {faults}");
    }

    inf.stop();
    inf_wl.stop();
    let closed = sim::until(50, 100, async || open_watches(&c).await <= watches_before).await;
    assert!(closed, "stop() leaves no open watch at the sim");
    let fired_at_stop = fired.get();
    sleep(1500).await;
    assert_eq!(fired.get(), fired_at_stop, "no timer fires after stop()");
}

#[wasm_bindgen_test]
async fn watch_list_mode_syncs_from_one_stream() {
    let c = sim::client();
    sim::post(&c, "/sim/faults/clear", json!({})).await;
    let lw = ResourceListWatch::new(
        c.clone(),
        ResourceScope::new(ApiResource::builtin("pods").expect("pods")),
    );
    let mut opts = InformerOptions::default();
    opts.reflector.use_watch_list = true;
    let inf = SharedIndexInformer::new(Rc::new(lw), real_clock(), opts);
    inf.start();
    inf.wait_for_sync().await;
    sim::post(&c, "/sim/churn/steps", json!({"steps": 20, "seed": 77})).await;
    let want = sim_state(&c).await;
    let ok = sim::until(100, 100, async || store_state(&inf) == want).await;
    inf.stop();
    assert!(
        ok,
        "watch-list informer converged to the sim: {:?}",
        inf.status_snapshot()
    );
    assert_eq!(inf.status_snapshot().relists, 0);
}
