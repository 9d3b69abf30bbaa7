//! SharedInformerFactory: one informer per (resource, namespace, label
//! selector, field selector), shared by every consumer whatever order they
//! ask in. Selectors are keyed in canonical form, so `b=2,a=1` and
//! `a=1, b=2` share one informer (and one watch); the namespace of a
//! cluster-scoped resource is ignored, as its requests ignore it.
//!
//! Asking again for a scope with options that shape the cache differently
//! (transform, resync period, backoff, backlog bound, queue, metadata only,
//! or an indexer name
//! bound to another function) is an [`FactoryError::OptionsConflict`], not
//! a silent reuse of the first informer: its cache would not be what the
//! second caller asked for. Indexers under new names are added to the
//! shared informer (an index changes no cached object).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::rc::{Rc, Weak};

use super::list_watch::{ListerWatcher, ResourceListWatch, ResourceScope};
use super::selector::{FieldSelector, LabelSelector};
use super::shared_informer::{InformerError, InformerOptions, SharedIndexInformer};
use super::store::Indexers;
use crate::rest::Client;
use crate::rt::SharedClock;

/// Builds the lister-watcher for a scope (tests swap in a scripted one).
pub type ListerWatcherFactory = Rc<dyn Fn(&ResourceScope) -> Rc<dyn ListerWatcher>>;

/// Why the factory refused to hand out an informer.
#[derive(Clone, Debug, PartialEq)]
pub enum FactoryError {
    /// The scope's informer exists with other options for `option`.
    OptionsConflict {
        /// The scope's canonical key.
        scope: String,
        /// The first option found to differ.
        option: &'static str,
    },
    /// The shared informer refused the added indexers (it has stopped).
    Informer(InformerError),
    /// No request could be built for the scope (no version, a resource or
    /// namespace that is not a path segment): refused at creation rather
    /// than retried.
    InvalidScope(crate::rest::Error),
}

impl fmt::Display for FactoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FactoryError::OptionsConflict { scope, option } => write!(
                f,
                "the informer for {scope} already exists with a different `{option}`: \
                 ask for it with the same options (pass the same functions), or use \
                 another factory for a differently shaped cache"
            ),
            FactoryError::Informer(e) => write!(f, "{e}"),
            FactoryError::InvalidScope(e) => write!(f, "invalid scope: {e}"),
        }
    }
}

impl std::error::Error for FactoryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FactoryError::Informer(e) => Some(e),
            FactoryError::InvalidScope(e) => Some(e),
            FactoryError::OptionsConflict { .. } => None,
        }
    }
}

/// One shared informer, the options it was made with, and what the layer
/// above attached to it.
struct Entry {
    informer: SharedIndexInformer,
    options: InformerOptions,
    /// Whether its scope asks the server for metadata only.
    metadata_only: bool,
    attachment: Option<Rc<dyn Any>>,
}

type Entries = Rc<RefCell<BTreeMap<String, Entry>>>;

/// Shares informers by scope.
#[derive(Clone)]
pub struct SharedInformerFactory {
    make_lw: ListerWatcherFactory,
    clock: SharedClock,
    defaults: InformerOptions,
    informers: Entries,
    started: Rc<Cell<bool>>,
}

/// A [`SharedInformerFactory`] reference that does not keep it alive.
#[derive(Clone)]
pub struct WeakInformerFactory {
    make_lw: ListerWatcherFactory,
    clock: SharedClock,
    defaults: InformerOptions,
    informers: Weak<RefCell<BTreeMap<String, Entry>>>,
    started: Weak<Cell<bool>>,
}

impl WeakInformerFactory {
    /// The factory, while it is alive.
    pub fn upgrade(&self) -> Option<SharedInformerFactory> {
        Some(SharedInformerFactory {
            make_lw: self.make_lw.clone(),
            clock: self.clock.clone(),
            defaults: self.defaults.clone(),
            informers: self.informers.upgrade()?,
            started: self.started.upgrade()?,
        })
    }
}

/// The first option that shapes the cache differently in `a` and `b`.
/// Functions are compared by identity.
fn options_conflict(a: &InformerOptions, b: &InformerOptions) -> Option<&'static str> {
    let same_transform = match (&a.transform, &b.transform) {
        (None, None) => true,
        (Some(x), Some(y)) => Rc::ptr_eq(x, y),
        _ => false,
    };
    if !same_transform {
        return Some("transform");
    }
    let rebound = b
        .indexers
        .iter()
        .any(|(k, f)| a.indexers.get(k).is_some_and(|g| !Rc::ptr_eq(f, g)));
    if rebound {
        return Some("indexers");
    }
    if a.reflector.resync_period != b.reflector.resync_period {
        return Some("resync period");
    }
    if a.reflector.backoff != b.reflector.backoff {
        return Some("backoff");
    }
    if a.max_pending != b.max_pending {
        return Some("backlog bound");
    }
    if a.queue != b.queue {
        return Some("queue");
    }
    None
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

    /// A reference that does not keep the factory alive.
    pub fn downgrade(&self) -> WeakInformerFactory {
        WeakInformerFactory {
            make_lw: self.make_lw.clone(),
            clock: self.clock.clone(),
            defaults: self.defaults.clone(),
            informers: Rc::downgrade(&self.informers),
            started: Rc::downgrade(&self.started),
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
        let r = &scope.resource;
        format!(
            "{}/{}/{}|{}|{}|{}",
            r.group,
            r.version,
            r.plural,
            scope.effective_namespace().unwrap_or(""),
            canon_l,
            canon_f
        )
    }

    /// The informer for `scope`, created (with `opts`, else the factory's
    /// defaults) on first request; later requests get the same informer,
    /// provided their options shape the cache the same way. Started at once
    /// if the factory was started.
    pub fn informer(
        &self,
        scope: ResourceScope,
        opts: Option<InformerOptions>,
    ) -> Result<SharedIndexInformer, FactoryError> {
        self.informer_with(scope, opts, |_| None)
    }

    /// Like [`informer`](Self::informer); a new informer also gets what
    /// `attach` returns, which [`attachment`](Self::attachment) hands back
    /// (the JS layer keeps its per-informer state there).
    pub fn informer_with(
        &self,
        scope: ResourceScope,
        opts: Option<InformerOptions>,
        attach: impl FnOnce(&SharedIndexInformer) -> Option<Rc<dyn Any>>,
    ) -> Result<SharedIndexInformer, FactoryError> {
        scope.validate().map_err(FactoryError::InvalidScope)?;
        let key = Self::scope_key(&scope);
        let opts = opts.unwrap_or_else(|| self.defaults.clone());
        let existing = self.informers.borrow().get(&key).map(|e| {
            let conflict = options_conflict(&e.options, &opts)
                .or_else(|| (e.metadata_only != scope.metadata_only).then_some("metadata_only"));
            let added: Indexers = opts
                .indexers
                .iter()
                .filter(|(k, _)| !e.options.indexers.contains_key(*k))
                .map(|(k, f)| (k.clone(), f.clone()))
                .collect();
            (e.informer.clone(), conflict, added)
        });
        if let Some((informer, conflict, added)) = existing {
            if let Some(option) = conflict {
                return Err(FactoryError::OptionsConflict { scope: key, option });
            }
            if !added.is_empty() {
                // Index functions run over the cache here: no borrow is held,
                // so one may use the factory.
                informer
                    .add_indexers(added.clone())
                    .map_err(FactoryError::Informer)?;
                if let Some(e) = self.informers.borrow_mut().get_mut(&key) {
                    e.options.indexers.extend(added);
                }
            }
            return Ok(informer);
        }
        let lw = (self.make_lw)(&scope);
        let mut run_opts = opts.clone();
        if run_opts.reflector.expected_kind.is_none() && !scope.resource.kind.is_empty() {
            run_opts.reflector.expected_kind = Some(scope.resource.kind.clone());
        }
        let inf = SharedIndexInformer::new(lw, self.clock.clone(), run_opts);
        let attachment = attach(&inf);
        self.informers.borrow_mut().insert(
            key,
            Entry {
                informer: inf.clone(),
                options: opts,
                metadata_only: scope.metadata_only,
                attachment,
            },
        );
        if self.started.get() {
            inf.start();
        }
        Ok(inf)
    }

    /// Drop `informer` from the factory and stop it: asking for its scope
    /// again makes a new one. Whoever still holds the old one keeps a
    /// stopped informer with its last cache. Returns whether it was here.
    pub fn forget(&self, informer: &SharedIndexInformer) -> bool {
        let key = self
            .informers
            .borrow()
            .iter()
            .find(|(_, e)| e.informer.ptr_eq(informer))
            .map(|(k, _)| k.clone());
        let found = key.is_some_and(|k| self.informers.borrow_mut().remove(&k).is_some());
        if found {
            informer.stop();
        }
        found
    }

    /// The informer for `scope`, if one was created.
    pub fn get(&self, scope: &ResourceScope) -> Option<SharedIndexInformer> {
        let key = Self::scope_key(scope);
        self.informers
            .borrow()
            .get(&key)
            .map(|e| e.informer.clone())
    }

    /// What was attached to the informer for `scope` when it was created.
    pub fn attachment(&self, scope: &ResourceScope) -> Option<Rc<dyn Any>> {
        let key = Self::scope_key(scope);
        self.informers
            .borrow()
            .get(&key)
            .and_then(|e| e.attachment.clone())
    }

    /// Every attachment, in scope-key order.
    pub fn attachments(&self) -> Vec<Rc<dyn Any>> {
        self.informers
            .borrow()
            .values()
            .filter_map(|e| e.attachment.clone())
            .collect()
    }

    /// Start every informer (and any created later).
    pub fn start(&self) {
        self.started.set(true);
        for i in self.informers() {
            i.start();
        }
    }

    /// Resolves when every informer the factory holds at this call has
    /// synced: true, or false if one stopped first (a `shutdown` meanwhile,
    /// too). One [`forget`](Self::forget)'s before the call is not waited for.
    /// The informers are taken at the call, not when the future first runs.
    pub fn wait_for_sync(&self) -> impl std::future::Future<Output = bool> {
        let all = self.informers();
        async move { super::shared_informer::wait_for_cache_sync(&all).await }
    }

    /// Stop every informer and forget them; the factory can be used again.
    pub fn shutdown(&self) {
        let all: Vec<Entry> = std::mem::take(&mut *self.informers.borrow_mut())
            .into_values()
            .collect();
        for e in &all {
            e.informer.stop();
        }
        self.started.set(false);
    }

    /// The informers, in scope-key order.
    pub fn informers(&self) -> Vec<SharedIndexInformer> {
        self.informers
            .borrow()
            .values()
            .map(|e| e.informer.clone())
            .collect()
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
    use crate::api::ApiResource;
    use crate::cache::scripted::ScriptedListerWatcher;
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
            namespace: ns.map(str::to_owned),
            label_selector: labels.map(str::to_owned),
            ..ResourceScope::new(ApiResource::builtin("pods").expect("pods"))
        }
    }

    #[test]
    fn a_forgotten_informer_is_stopped_and_its_scope_made_anew() {
        let (f, made) = factory();
        let a = f.informer(pods(Some("ns"), None), None).expect("made");
        let other = f.informer(pods(Some("other"), None), None).expect("made");
        assert!(f.forget(&a));
        assert!(a.is_stopped() && !other.is_stopped());
        assert!(!f.forget(&a), "already gone");
        assert_eq!(f.len(), 1);
        let b = f.informer(pods(Some("ns"), None), None).expect("made anew");
        assert!(!b.ptr_eq(&a) && !b.is_stopped());
        assert_eq!(made.borrow().len(), 3);
    }

    #[test]
    fn a_scope_no_request_could_serve_is_refused_before_an_informer_exists() {
        let (f, made) = factory();
        let mut bad = pods(Some("a/b"), None);
        assert!(matches!(
            f.informer(bad.clone(), None),
            Err(FactoryError::InvalidScope(
                crate::rest::Error::InvalidRequest { .. }
            ))
        ));
        bad.namespace = None;
        bad.resource.version.clear();
        assert!(matches!(
            f.informer(bad, None),
            Err(FactoryError::InvalidScope(_))
        ));
        assert!(f.is_empty() && made.borrow().is_empty(), "nothing was made");
        assert!(f.informer(pods(Some("ns"), None), None).is_ok());
    }

    #[test]
    fn an_informer_of_a_known_kind_skips_watch_events_of_another() {
        let (f, made) = factory();
        let inf = f.informer(pods(None, None), None).unwrap();
        f.start();
        run_until_stalled();
        let ev = |kind: &str, name: &str| {
            let o = crate::rest::KubeObject::from_value(&serde_json::json!({
                "kind": kind, "apiVersion": "v1",
                "metadata": {"name": name, "namespace": "ns", "resourceVersion": "5"}
            }))
            .unwrap();
            Ok(crate::rest::WatchEvent::Added(o))
        };
        let lw = made.borrow()[0].clone();
        assert!(lw.send(ev("Service", "svc")));
        assert!(lw.send(ev("Pod", "web")));
        run_until_stalled();
        let keys: Vec<String> = inf.store().list_keys();
        assert_eq!(keys, vec!["ns/web".to_owned()]);
        assert_eq!(inf.status_snapshot().skipped, 1);
    }

    #[test]
    fn factory_shares_one_informer_per_scope_whatever_the_selector_order() {
        let (f, made) = factory();
        let a = f.informer(pods(Some("ns"), Some("b=2,a=1")), None).unwrap();
        let b = f
            .informer(pods(Some("ns"), Some("a=1, b=2")), None)
            .unwrap();
        assert!(a.same_as(&b));
        let _c = f.informer(pods(None, Some("a=1,b=2")), None).unwrap();
        let _d = f.informer(pods(Some("ns"), None), None).unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(made.borrow().len(), 3);
    }

    #[test]
    fn factory_start_wait_and_shutdown() {
        let (f, made) = factory();
        let a = f.informer(pods(None, None), None).unwrap();
        assert!(!a.is_started());
        f.start();
        let b = f.informer(pods(Some("late"), None), None).unwrap();
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

    #[test]
    fn a_wait_taken_before_shutdown_resolves_false() {
        let (f, _made) = factory();
        let _a = f.informer(pods(None, None), None).unwrap();
        f.start();
        let wait = f.wait_for_sync();
        f.shutdown();
        assert!(
            !block_on(wait),
            "nothing synced: the shutdown stopped the informer first"
        );
    }

    #[test]
    fn a_cluster_scoped_scope_ignores_the_namespace() {
        let (f, made) = factory();
        let nodes = ResourceScope::new(ApiResource::builtin("nodes").expect("nodes"));
        let a = f.informer(nodes.clone().namespace("x"), None).unwrap();
        let b = f.informer(nodes, None).unwrap();
        assert!(a.same_as(&b));
        assert_eq!(made.borrow().len(), 1);
    }

    #[test]
    fn asking_again_with_other_cache_options_is_an_error() {
        let (f, _) = factory();
        let t: crate::cache::Transformer = Rc::new(Ok);
        let with_t = InformerOptions {
            transform: Some(t.clone()),
            ..Default::default()
        };
        let a = f.informer(pods(None, None), Some(with_t.clone())).unwrap();
        let same = InformerOptions {
            transform: Some(t),
            ..Default::default()
        };
        assert!(f
            .informer(pods(None, None), Some(same))
            .unwrap()
            .same_as(&a));
        let other: crate::cache::Transformer = Rc::new(Ok);
        for (opts, option) in [
            (None, "transform"),
            (
                Some(InformerOptions {
                    transform: Some(other),
                    ..Default::default()
                }),
                "transform",
            ),
            (
                Some(InformerOptions {
                    max_pending: Some(5),
                    ..with_t.clone()
                }),
                "backlog bound",
            ),
        ] {
            let err = f.informer(pods(None, None), opts).err();
            assert!(
                matches!(&err, Some(FactoryError::OptionsConflict { option: o, .. }) if *o == option),
                "{err:?}"
            );
        }
        let mut resync = with_t.clone();
        resync.reflector.resync_period = Some(std::time::Duration::from_secs(1));
        let err = f
            .informer(pods(None, None), Some(resync))
            .err()
            .expect("a conflict");
        assert!(err.to_string().contains("`resync period`"), "{err}");
        // An indexer under a new name is added; the same name bound to
        // another function is a conflict.
        let mut ix = with_t;
        let by: crate::cache::IndexFunc =
            Rc::new(|o: &crate::rest::KubeObject| Ok(vec![o.name().to_owned()]));
        ix.indexers.insert("by".into(), by);
        assert!(f
            .informer(pods(None, None), Some(ix.clone()))
            .unwrap()
            .same_as(&a));
        assert!(a.store().by_index("by", "x").is_ok(), "the index was added");
        assert!(f.informer(pods(None, None), Some(ix.clone())).is_ok());
        let rebound: crate::cache::IndexFunc = Rc::new(|_: &crate::rest::KubeObject| Ok(vec![]));
        ix.indexers.insert("by".into(), rebound);
        let err = f.informer(pods(None, None), Some(ix)).err();
        assert!(
            matches!(
                err,
                Some(FactoryError::OptionsConflict {
                    option: "indexers",
                    ..
                })
            ),
            "{err:?}"
        );
        assert_eq!(f.len(), 1);
    }
}
