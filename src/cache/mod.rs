//! The local cache: object keys, Store/Indexer, label and field selectors,
//! listers, DeltaFIFO, and on top of them the reflector and informers.
//!
//! Data path: reflector → [`DeltaFifo`] → controller loop → [`Indexer`] →
//! listers and event handlers. Objects are [`KubeObject`](crate::rest::KubeObject)s
//! (raw JSON + parsed metadata, shared by reference count), so the queue,
//! the store, every index bucket and every handler share one copy.
//!
//! The behaviours followed (client-go's, with the IDs used in test names)
//! and the tests that check them are listed in `docs/behaviours.md`.

mod delta_fifo;
mod index;
mod informer_queue;
mod keys;
mod lister;
mod reader;
mod real_fifo;
mod selector;
mod selector_object;
mod slots;
mod store;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use delta_fifo::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaType, FifoError, KnownObjects, Popped, SkippedObject,
};
pub use informer_queue::{InformerQueue, QueueKind};
pub use keys::{object_key, split_key, DeltaObject, KeyError, Tombstone};
pub use lister::{in_scope, Lister, NotFound};
pub use reader::Store;
pub use real_fifo::RealFifo;
pub use selector::{
    validate_label_key, validate_label_value, FieldRequirement, FieldSelector, LabelSelector,
    Operator, Requirement, SelectorError, SelectorErrorKind, MAX_SELECTOR_BYTES,
};
pub use selector_object::{LabelSelectorRequirement, LabelSelectorSpec};
pub use store::{
    label_index_func, label_index_name, label_ns_index_name, namespace_index_func, IndexFunc,
    Indexer, Indexers, StoreError, Transformer, NAMESPACE_INDEX,
};

// informer layer
mod controller;
mod factory;
mod handlers;
mod list_watch;
mod processor;
mod reflector;
mod resource_scope;
#[cfg(any(test, feature = "testing"))]
mod scripted;
mod shared_informer;
mod status;
mod sync_wait;

pub use factory::{FactoryError, ListerWatcherFactory, SharedInformerFactory, WeakInformerFactory};
pub use handlers::{async_handler, handler};
pub use list_watch::{
    EventStream, ListerWatcher, ResourceListWatch, ResourceScope, TweakParams, PARTIAL_LIST_ACCEPT,
    PARTIAL_WATCH_ACCEPT,
};
pub use processor::{Handler, Notification, Registration, DEFAULT_MAX_PENDING, MIN_RESYNC_PERIOD};
pub use reflector::{
    Reflector, ReflectorOptions, Seed, ShouldResync, WatchErrorHandler, DEFAULT_BACKOFF_RESET,
    DEFAULT_PAGE_SIZE, DEFAULT_REFLECTOR_BACKOFF,
};
pub use shared_informer::{
    metadata_only, partial_object_metadata, strip_managed_fields, wait_for_cache_sync, Applied,
    InformerError, InformerOptions, Observer, SeedSource, SharedIndexInformer,
};
pub use status::{Failure, HeldBack, InformerStatus, Phase, StatusCell, StatusError};
pub use sync_wait::{SyncError, SyncErrorKind};

/// The cache layer's test support (see [`crate::testing`]).
#[cfg(feature = "testing")]
pub(crate) mod testing {
    pub use super::scripted::{Call, ScriptedListerWatcher};
}
