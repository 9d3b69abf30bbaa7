//! Listers: read-only, selector-aware views of a [`Store`].
//!
//! A namespaced list reads only the intersection of the buckets that must
//! hold every match: the namespace's bucket of the `namespace` index and,
//! for each equality requirement on a label with an index
//! (`Indexer::add_label_index`), that label value's bucket.

use std::fmt;

use super::keys::split_key;
use super::reader::Store;
use super::selector::{LabelSelector, Operator};
use super::store::{label_index_name, label_ns_index_name, NAMESPACE_INDEX};
use crate::rest::KubeObject;

/// `get` found nothing under the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotFound {
    /// The key looked up.
    pub key: String,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} not found", self.key)
    }
}

impl std::error::Error for NotFound {}

/// A read-only view of an informer's store.
#[derive(Clone, Debug)]
pub struct Lister {
    store: Store,
}

/// Whether `obj` is among what [`Lister::for_each_in`] visits for these
/// arguments (`""` or no namespace: every namespace).
pub fn in_scope(namespace: Option<&str>, selector: &LabelSelector, obj: &KubeObject) -> bool {
    !selector.is_nothing()
        && namespace
            .filter(|n| !n.is_empty())
            .is_none_or(|n| obj.namespace().unwrap_or("") == n)
        && selector.matches(obj)
}

impl Lister {
    /// A lister over `store` (an informer's [`store`](super::SharedIndexInformer::store),
    /// or [`Indexer::reader`](super::Indexer::reader) of a store of your own).
    pub fn new(store: Store) -> Self {
        Lister { store }
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Every object matching `selector` (LS: the empty selector matches all).
    pub fn list(&self, selector: &LabelSelector) -> Vec<KubeObject> {
        self.list_in(None, selector)
    }

    /// Objects in `namespace` (all namespaces for `None` or `""`, client-go's
    /// `NamespaceAll`) matching `selector`.
    pub fn list_in(&self, namespace: Option<&str>, selector: &LabelSelector) -> Vec<KubeObject> {
        let mut out = Vec::new();
        self.for_each_in(namespace, selector, |o| out.push(o.clone()));
        out
    }

    /// Visit the matching objects without collecting them.
    ///
    /// Every bucket that must hold all matches is used at once: the
    /// namespace's, and per equality requirement on an indexed label its
    /// label bucket (or, namespaced, its `namespace/value` bucket, which
    /// also stands for the namespace's). The smallest is walked and the
    /// others are probed by slot id, so objects outside the intersection are
    /// never read — reading objects spread over the heap is the cost (cache
    /// misses). When the buckets cover the namespace and every requirement,
    /// the hits are not re-checked either.
    pub fn for_each_in(
        &self,
        namespace: Option<&str>,
        selector: &LabelSelector,
        mut f: impl FnMut(&KubeObject),
    ) {
        if selector.is_nothing() {
            return;
        }
        // `""` is every namespace (client-go's `metav1.NamespaceAll`).
        let namespace = namespace.filter(|n| !n.is_empty());
        let ix = &self.store.indexer;
        let mut probes: Vec<(String, String)> = Vec::new();
        let mut ns_covered = namespace.is_none();
        let mut all_covered = true;
        for r in selector.requirements() {
            let v = match (&r.op, r.values.as_slice()) {
                (Operator::Equals | Operator::In, [v]) => v,
                _ => {
                    all_covered = false;
                    continue;
                }
            };
            if let Some(ns) = namespace {
                let name = label_ns_index_name(&r.key);
                if ix.has_index(&name) {
                    probes.push((name, format!("{ns}/{v}")));
                    ns_covered = true;
                    continue;
                }
            }
            let name = label_index_name(&r.key);
            if ix.has_index(&name) {
                probes.push((name, v.clone()));
            } else {
                all_covered = false;
            }
        }
        if let (false, Some(ns)) = (ns_covered, namespace) {
            if ix.has_index(NAMESPACE_INDEX) {
                probes.push((NAMESPACE_INDEX.to_owned(), ns.to_owned()));
                ns_covered = true;
            }
        }
        let exact = ns_covered && all_covered;
        let mut visit = |o: &KubeObject| {
            if exact || in_scope(namespace, selector, o) {
                f(o);
            }
        };
        let refs: Vec<(&str, &str)> = probes
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        // `false`: an index vanished between the checks above and the walk
        // (indexes are only ever added, so this is defensive): scan instead.
        if refs.is_empty() || !ix.for_each_in_all(&refs, &mut visit) {
            ix.for_each(|_, o| visit(o));
        }
    }

    /// The object `namespace/name` (or `name` for cluster-scoped objects).
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Result<KubeObject, NotFound> {
        let key = match namespace.filter(|n| !n.is_empty()) {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_owned(),
        };
        self.get_by_key(&key)
    }

    /// The object under a cache key.
    pub fn get_by_key(&self, key: &str) -> Result<KubeObject, NotFound> {
        self.store.get_by_key(key).ok_or_else(|| NotFound {
            key: key.to_owned(),
        })
    }

    /// The namespace and name encoded in a key.
    pub fn split(key: &str) -> Option<(&str, &str)> {
        split_key(key).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Indexer;
    use serde_json::json;

    fn pod(ns: &str, name: &str, app: &str) -> KubeObject {
        KubeObject::from_value(
            &json!({"metadata": {"name": name, "namespace": ns, "labels": {"app": app}}}),
        )
        .unwrap()
    }

    fn names(mut v: Vec<KubeObject>) -> Vec<String> {
        v.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
        v.iter()
            .map(|o| format!("{}/{}", o.namespace().unwrap_or(""), o.name()))
            .collect()
    }

    #[test]
    fn ls_list_by_namespace_and_selector_with_and_without_label_index() {
        let ix = Indexer::with_namespace_index();
        for (ns, n, app) in [
            ("a", "1", "web"),
            ("a", "2", "db"),
            ("b", "3", "web"),
            ("b", "4", "web"),
        ] {
            ix.add(pod(ns, n, app)).unwrap();
        }
        let l = Lister::new(ix.reader());
        let web = LabelSelector::parse("app=web").unwrap();
        let everything = LabelSelector::default();
        assert_eq!(names(l.list(&everything)).len(), 4);
        assert_eq!(names(l.list(&web)), vec!["a/1", "b/3", "b/4"]);
        assert_eq!(names(l.list_in(Some("a"), &everything)), vec!["a/1", "a/2"]);
        assert_eq!(names(l.list_in(Some("b"), &web)), vec!["b/3", "b/4"]);
        assert!(l.list_in(Some("zzz"), &everything).is_empty());
        // `""` is every namespace, as `None` is (client-go's `NamespaceAll`).
        assert_eq!(names(l.list_in(Some(""), &web)), vec!["a/1", "b/3", "b/4"]);
        ix.add_label_index("app").unwrap();
        assert_eq!(names(l.list_in(Some("a"), &web)), vec!["a/1"]);
        assert_eq!(names(l.list_in(Some(""), &web)), vec!["a/1", "b/3", "b/4"]);
        assert_eq!(
            names(l.list(&LabelSelector::parse("app in (db)").unwrap())),
            vec!["a/2"]
        );
        assert_eq!(
            names(l.list(&LabelSelector::parse("app=web,app!=db").unwrap())),
            vec!["a/1", "b/3", "b/4"]
        );
        // LS-08: a null API selector lists nothing, with or without indexes.
        let nothing = LabelSelector::from_spec(None).unwrap();
        assert!(l.list(&nothing).is_empty());
        assert!(l.list_in(Some("a"), &nothing).is_empty());
        let spec: crate::cache::LabelSelectorSpec =
            serde_json::from_value(serde_json::json!({"matchLabels": {"app": "web"}})).unwrap();
        let from_spec = LabelSelector::from_spec(Some(&spec)).unwrap();
        assert_eq!(names(l.list_in(Some("b"), &from_spec)), vec!["b/3", "b/4"]);
    }

    #[test]
    fn ls_get_returns_typed_not_found() {
        let ix = Indexer::with_namespace_index();
        ix.add(pod("a", "1", "web")).unwrap();
        let l = Lister::new(ix.reader());
        assert_eq!(l.get(Some("a"), "1").unwrap().name(), "1");
        assert_eq!(
            l.get(Some("a"), "nope").unwrap_err(),
            NotFound {
                key: "a/nope".into()
            }
        );
    }
}
