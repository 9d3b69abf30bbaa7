//! The local cache: object keys, Store/Indexer, label and field selectors,
//! listers, DeltaFIFO, and on top of them the reflector and informers.
//!
//! Data path: reflector → [`DeltaFifo`] → controller loop → [`Indexer`] →
//! listers and event handlers. Objects are [`KubeObject`](crate::rest::KubeObject)s
//! (raw JSON + parsed metadata, shared by reference count), so the queue,
//! the store, every index bucket and every handler share one copy.
//!
//! Behaviour coverage (IDs from the client-go behaviour specification):
//!
//! | IDs | where | tests |
//! |---|---|---|
//! | KF-01..03 | `keys.rs` | `keys::tests::kf_*` |
//! | ST-01..14 (ST-15 transactions are not provided) | `store.rs` | `tests::store_tests::st_*` |
//! | LS | `selector.rs`, `lister.rs` | `selector::tests::ls_*`, `lister::tests::ls_*` |
//! | DF-01..14 | `delta_fifo.rs` | `tests::fifo_tests::df_*` |
//! | RL, PG (reflector side), CT, SI | informer layer | the table in `shared_informer.rs` |
//! | PG-01..04 | `api/pager.rs` | `api::tests::pg_01_to_04_pager_rules` |

mod delta_fifo;
pub(crate) mod fx;
mod index;
mod keys;
mod lister;
mod selector;
mod slots;
mod store;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use delta_fifo::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaType, FifoError, KnownObjects, Popped, SkippedObject,
    Transformer,
};
pub use keys::{object_key, split_key, DeltaObject, KeyError, Tombstone};
pub use lister::{Lister, NotFound};
pub use selector::{
    validate_label_key, validate_label_value, FieldRequirement, FieldSelector, LabelSelector,
    Operator, Requirement, SelectorError, SelectorErrorKind, MAX_SELECTOR_BYTES,
};
pub use store::{
    label_index_func, label_index_name, label_ns_index_name, namespace_index_func, IndexFunc,
    Indexer, Indexers, StoreError, StoreTransformer, NAMESPACE_INDEX,
};

// informer layer
mod controller;
mod factory;
mod list_watch;
mod processor;
mod reflector;
mod shared_informer;
mod status;

pub use controller::{process_deltas, ApplyFailure, Controller, ControllerOptions, DeltaHandler};
pub use factory::{FactoryError, ListerWatcherFactory, SharedInformerFactory, WeakInformerFactory};
pub use list_watch::{
    Call, EventStream, ListerWatcher, ResourceListWatch, ResourceScope, ScriptedListerWatcher,
    TweakParams,
};
pub use processor::{
    effective_resync_period, Handler, Notification, Registration, MIN_RESYNC_PERIOD,
};
pub use reflector::{
    is_too_large_resource_version, BackoffManager, BackoffOptions, Reflector, ReflectorOptions,
    Seed, ShouldResync, WatchErrorHandler, DEFAULT_PAGE_SIZE,
};
pub use shared_informer::{
    metadata_only, resync_period, strip_managed_fields, wait_for_cache_sync, InformerError,
    InformerOptions, SeedSource, SharedIndexInformer,
};
pub use status::{Failure, HeldBack, InformerStatus, Phase, StatusCell, StatusError};
