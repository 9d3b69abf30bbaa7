//! The informer options that shape a cache, as a JS caller gave them: kept
//! with each shared informer so asking for its scope again with other
//! options is an `OptionsConflict` error instead of a cache that silently
//! ignores them. Indexers under new names are added to the shared informer
//! instead (an index changes no cached object); a name bound to another
//! function is a conflict.

use std::cell::RefCell;

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::error::KubeErrorInit;
use super::options;
use crate::cache::{FactoryError, QueueKind, ResourceScope};

/// `transform`, `indexers`, `resyncMs`, `backoff`, `maxBacklog`,
/// `stripManagedFields`, `metadataOnly` and `queue` of `InformerOptions`.
pub(crate) struct Shape {
    pub transform: Option<Function>,
    /// By name, in the order added.
    pub indexers: RefCell<Vec<(String, Function)>>,
    pub resync_ms: Option<f64>,
    pub backoff_initial_ms: Option<f64>,
    pub backoff_cap_ms: Option<f64>,
    pub max_backlog: Option<f64>,
    pub strip_managed_fields: bool,
    pub metadata_only: bool,
    pub queue: QueueKind,
}

use options::flag;

impl Shape {
    /// Read (and check the types of) the shaping options.
    pub fn read(opts: &JsValue) -> Result<Shape, KubeErrorInit> {
        let mut indexers = Vec::new();
        if let Some(ix) = options::prop(opts, "indexers") {
            if !ix.is_object() {
                return Err(KubeErrorInit::invalid(
                    "`indexers` must map names to functions",
                ));
            }
            for e in Object::entries(ix.unchecked_ref()).iter() {
                let name = Reflect::get_u32(&e, 0).ok().and_then(|v| v.as_string());
                let f = Reflect::get_u32(&e, 1)
                    .ok()
                    .and_then(|v| v.dyn_into::<Function>().ok());
                match (name, f) {
                    (Some(n), _) if n.is_empty() => {
                        return Err(KubeErrorInit::invalid("an index needs a name"))
                    }
                    (Some(n), Some(f)) => indexers.push((n, f)),
                    _ => {
                        return Err(KubeErrorInit::invalid(
                            "`indexers` must map names to functions",
                        ))
                    }
                }
            }
        }
        // Each as it takes effect: a default written out is the default
        // (asking again without it, or with it, is the same shape).
        let (mut backoff_initial_ms, mut backoff_cap_ms) = (None, None);
        if let Some(b) = options::prop(opts, "backoff") {
            options::known_members(&b, &["initialMs", "capMs"], "backoff")?;
            let d = crate::cache::ReflectorOptions::default().backoff;
            backoff_initial_ms =
                options::number(&b, "initialMs")?.filter(|ms| options::millis(*ms) != d.initial);
            backoff_cap_ms =
                options::number(&b, "capMs")?.filter(|ms| options::millis(*ms) != d.max);
        }
        let default_backlog = crate::cache::DEFAULT_MAX_PENDING as f64;
        Ok(Shape {
            transform: options::function(opts, "transform")?,
            indexers: RefCell::new(indexers),
            resync_ms: options::number(opts, "resyncMs")?
                .filter(|ms| options::resync_period(*ms).is_some()),
            backoff_initial_ms,
            backoff_cap_ms,
            max_backlog: options::number(opts, "maxBacklog")?
                .filter(|n| n.min(u32::MAX as f64) != default_backlog),
            strip_managed_fields: flag(opts, "stripManagedFields", true)?,
            metadata_only: flag(opts, "metadataOnly", false)?,
            queue: match options::string(opts, "queue")?.as_deref() {
                None | Some("delta") => QueueKind::DeltaFifo,
                Some("real") => QueueKind::RealFifo,
                Some(other) => {
                    return Err(KubeErrorInit::invalid(format!(
                        "option `queue` must be 'delta' or 'real', not {other:?}"
                    )))
                }
            },
        })
    }

    /// The key a stored copy (`persist`) of `scope_key` goes under: the
    /// scope, plus what shapes the stored objects when it is not the
    /// default, so a copy is never read into a cache of another shape. A
    /// transform is known by its source text: one whose result depends on
    /// captured state needs a `persist.name` of its own per state.
    pub fn stored_key(&self, scope_key: &str) -> String {
        let mut key = self.stored_family(scope_key);
        if let Some(t) = &self.transform {
            let source = String::from(t.to_string());
            // FNV-1a: stable across releases and hosts.
            let hash = source.bytes().fold(0x811c_9dc5_u32, |h, b| {
                (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
            });
            key.push_str("|transform:");
            key.push_str(&hash.to_string());
        }
        key
    }

    /// The stored key without the transform: copies of one family differ
    /// only in their transform's source text, which a new deploy changes
    /// (minified), so a copy written under one replaces the others.
    pub fn stored_family(&self, scope_key: &str) -> String {
        let mut key = scope_key.to_owned();
        if self.metadata_only {
            key.push_str("|metadata-only");
        } else if !self.strip_managed_fields {
            key.push_str("|managed-fields");
        }
        key
    }

    /// The first option `other` gives differently (functions compare by
    /// identity: pass the same function, not an equal one).
    pub fn conflict(&self, other: &Shape) -> Option<&'static str> {
        let same_fn = |a: &Function, b: &Function| Object::is(a, b);
        let same_transform = match (&self.transform, &other.transform) {
            (None, None) => true,
            (Some(a), Some(b)) => same_fn(a, b),
            _ => false,
        };
        if !same_transform {
            return Some("transform");
        }
        let mine = self.indexers.borrow();
        let rebound = other
            .indexers
            .borrow()
            .iter()
            .any(|(n, f)| mine.iter().any(|(m, g)| n == m && !same_fn(f, g)));
        if rebound {
            return Some("indexers");
        }
        if self.resync_ms != other.resync_ms {
            return Some("resyncMs");
        }
        if (self.backoff_initial_ms, self.backoff_cap_ms)
            != (other.backoff_initial_ms, other.backoff_cap_ms)
        {
            return Some("backoff");
        }
        if self.max_backlog != other.max_backlog {
            return Some("maxBacklog");
        }
        if self.metadata_only != other.metadata_only {
            return Some("metadataOnly");
        }
        if self.strip_managed_fields != other.strip_managed_fields {
            return Some("stripManagedFields");
        }
        if self.queue != other.queue {
            return Some("queue");
        }
        None
    }

    /// The indexers of `other` under names this shape lacks (to be added).
    pub fn new_indexers(&self, other: &Shape) -> Vec<(String, Function)> {
        let mine = self.indexers.borrow();
        other
            .indexers
            .borrow()
            .iter()
            .filter(|(n, _)| !mine.iter().any(|(m, _)| m == n))
            .cloned()
            .collect()
    }

    /// Record indexers added to the informer.
    pub fn record_indexers(&self, added: &[(String, Function)]) {
        self.indexers.borrow_mut().extend_from_slice(added);
    }
}

/// A readable name for a scope in messages.
/// The scope as messages name it: `group/version/plural in "ns"`, selectors.
pub(crate) fn describe(scope: &ResourceScope) -> String {
    let r = &scope.resource;
    let mut out = if r.group.is_empty() {
        format!("{}/{}", r.version, r.plural)
    } else {
        format!("{}/{}/{}", r.group, r.version, r.plural)
    };
    match scope.effective_namespace() {
        Some(ns) => out.push_str(&format!(" in {ns:?}")),
        None if r.namespaced => out.push_str(" in all namespaces"),
        None => {}
    }
    for s in [&scope.label_selector, &scope.field_selector]
        .into_iter()
        .flatten()
    {
        out.push_str(&format!(" matching {s:?}"));
    }
    out
}

/// The `KubeError` (reason `OptionsConflict`) for a scope asked for again
/// with a different `option`.
pub(crate) fn options_conflict(scope: &ResourceScope, option: &str) -> KubeErrorInit {
    KubeErrorInit {
        message: format!(
            "{}the informer for {} already exists with a different `{option}`: ask for it \
             with the same options (the same functions, defined once), or use another \
             InformerFactory for a differently shaped cache",
            if option == "indexers" {
                "indexer conflict: "
            } else {
                ""
            },
            describe(scope)
        ),
        reason: "OptionsConflict".into(),
        ..Default::default()
    }
}

/// A factory refusal as a `KubeError`.
pub(crate) fn factory_error(scope: &ResourceScope, e: &FactoryError) -> KubeErrorInit {
    match e {
        FactoryError::OptionsConflict { option, .. } => options_conflict(scope, option),
        FactoryError::Informer(e) => KubeErrorInit::invalid(e.to_string()),
        FactoryError::InvalidScope(e) => {
            KubeErrorInit::invalid(format!("cannot list or watch {}: {e}", describe(scope)))
        }
    }
}
