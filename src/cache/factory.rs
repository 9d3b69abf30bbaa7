//! SharedInformerFactory: one informer per (resource, namespace, label
//! selector, field selector), shared by every consumer whatever order they
//! ask in. Selectors are keyed in canonical form, so `b=2,a=1` and
//! `a=1, b=2` share one informer (and one watch).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use super::list_watch::{ListerWatcher, ResourceListWatch, ResourceScope};
use super::selector::{FieldSelector, LabelSelector};
use super::shared_informer::{InformerOptions, SharedIndexInformer};
use crate::rest::Client;
use crate::rt::SharedClock;

/// Builds the lister-watcher for a scope (tests swap in a scripted one).
pub type ListerWatcherFactory = Rc<dyn Fn(&ResourceScope) -> Rc<dyn ListerWatcher>>;

/// Shares informers by scope.
#[derive(Clone)]
pub struct SharedInformerFactory {
    make_lw: ListerWatcherFactory,
    clock: SharedClock,
    defaults: InformerOptions,
    informers: Rc<RefCell<BTreeMap<String, SharedIndexInformer>>>,
    started: Rc<Cell<bool>>,
}

impl SharedInformerFactory {
    /// A factory listing and watching through `client`.
    pub fn new(client: Client, defaults: InformerOptions) -> Self {
        let clock = client.clock().clone();
        let make_lw: ListerWatcherFactory = Rc::new(move |scope: &ResourceScope| {
            Rc::new(ResourceListWatch::new(client.clone(), scope.clone())) as Rc<dyn ListerWatcher>
        });
        Self::with_lister_watchers(make_lw, clock, defaults)
    }

    /// A factory over any source of lister-watchers.
    pub fn with_lister_watchers(
        make_lw: ListerWatcherFactory,
        clock: SharedClock,
        defaults: InformerOptions,
    ) -> Self {
        SharedInformerFactory {
            make_lw,
            clock,
            defaults,
            informers: Rc::default(),
            started: Rc::default(),
        }
    }

    /// The canonical identity of a scope (selectors in canonical form; an
    /// unparsable selector is kept verbatim — the server will reject it).
    pub fn scope_key(scope: &ResourceScope) -> String {
        let canon_l = scope
            .label_selector
            .as_deref()
            .map(|s| {
                LabelSelector::parse(s)
                    .map(|x| x.to_string())
                    .unwrap_or_else(|_| s.to_owned())
            })
            .unwrap_or_default();
        let canon_f = scope
            .field_selector
            .as_deref()
            .map(|s| {
                FieldSelector::parse(s)
                    .map(|x| x.to_string())
                    .unwrap_or_else(|_| s.to_owned())
            })
            .unwrap_or_default();
        format!(
            "{}/{}/{}|{}|{}|{}{}",
            scope.group,
            scope.version,
            scope.resource,
            scope.namespace.as_deref().unwrap_or(""),
            canon_l,
            canon_f,
            // Metadata-only objects differ from whole ones: another informer.
            if scope.metadata_only { "|meta" } else { "" }
        )
    }

    /// The informer for `scope`, created (with `opts`, else the factory's
    /// defaults) on first request; later requests get the same informer and
    /// their `opts` are ignored. Started at once if the factory was started.
    pub fn informer(
        &self,
        scope: ResourceScope,
        opts: Option<InformerOptions>,
    ) -> SharedIndexInformer {
        let key = Self::scope_key(&scope);
        if let Some(i) = self.informers.borrow().get(&key) {
            return i.clone();
        }
        let lw = (self.make_lw)(&scope);
        let inf = SharedIndexInformer::new(
            lw,
            self.clock.clone(),
            opts.unwrap_or_else(|| self.defaults.clone()),
        );
        self.informers.borrow_mut().insert(key, inf.clone());
        if self.started.get() {
            inf.start();
        }
        inf
    }

    /// Start every informer (and any created later).
    pub fn start(&self) {
        self.started.set(true);
        let all: Vec<SharedIndexInformer> = self.informers.borrow().values().cloned().collect();
        for i in all {
            i.start();
        }
    }

    /// Resolves when every informer created so far has synced: true, or
    /// false if one stopped first.
    pub async fn wait_for_sync(&self) -> bool {
        let all: Vec<SharedIndexInformer> = self.informers.borrow().values().cloned().collect();
        super::shared_informer::wait_for_cache_sync(&all).await
    }

    /// Stop every informer and forget them; the factory can be used again.
    pub fn shutdown(&self) {
        let all: Vec<SharedIndexInformer> = std::mem::take(&mut *self.informers.borrow_mut())
            .into_values()
            .collect();
        for i in all {
            i.stop();
        }
        self.started.set(false);
    }

    /// The informers, in scope-key order.
    pub fn informers(&self) -> Vec<SharedIndexInformer> {
        self.informers.borrow().values().cloned().collect()
    }

    /// Number of informers created.
    pub fn len(&self) -> usize {
        self.informers.borrow().len()
    }

    /// Whether no informer was created.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::cache::list_watch::ScriptedListerWatcher;
    use crate::rt::{block_on, run_until_stalled, FakeClock};

    fn factory() -> (
        SharedInformerFactory,
        Rc<RefCell<Vec<ScriptedListerWatcher>>>,
    ) {
        let made: Rc<RefCell<Vec<ScriptedListerWatcher>>> = Rc::default();
        let m = made.clone();
        let clock = FakeClock::new();
        let f = SharedInformerFactory::with_lister_watchers(
            Rc::new(move |_s: &ResourceScope| {
                let lw = ScriptedListerWatcher::new();
                m.borrow_mut().push(lw.clone());
                Rc::new(lw) as Rc<dyn ListerWatcher>
            }),
            clock.shared(),
            InformerOptions::default(),
        );
        (f, made)
    }

    fn pods(ns: Option<&str>, labels: Option<&str>) -> ResourceScope {
        ResourceScope {
            version: "v1".into(),
            resource: "pods".into(),
            namespace: ns.map(str::to_owned),
            label_selector: labels.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn factory_shares_one_informer_per_scope_whatever_the_selector_order() {
        let (f, made) = factory();
        let a = f.informer(pods(Some("ns"), Some("b=2,a=1")), None);
        let b = f.informer(pods(Some("ns"), Some("a=1, b=2")), None);
        assert!(a.same_as(&b));
        let _c = f.informer(pods(None, Some("a=1,b=2")), None);
        let _d = f.informer(pods(Some("ns"), None), None);
        assert_eq!(f.len(), 3);
        assert_eq!(made.borrow().len(), 3);
    }

    #[test]
    fn factory_start_wait_and_shutdown() {
        let (f, made) = factory();
        let a = f.informer(pods(None, None), None);
        assert!(!a.is_started());
        f.start();
        let b = f.informer(pods(Some("late"), None), None);
        assert!(
            a.is_started() && b.is_started(),
            "started, also when created later"
        );
        run_until_stalled();
        assert!(block_on(f.wait_for_sync()));
        assert!(made.borrow().iter().all(|lw| lw.open_watches() == 1));
        f.shutdown();
        run_until_stalled();
        assert!(a.is_stopped() && b.is_stopped());
        assert!(f.is_empty());
        assert!(made.borrow().iter().all(|lw| lw.open_watches() == 0));
    }
}
