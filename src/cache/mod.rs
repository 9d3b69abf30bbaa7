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
//! | RL-02/03/04/05/07/08/10/11/12/13/14/16/17/18/19/20/21/22/23 | `reflector.rs` | `tests::informer_tests::rl_*`; the wasm suite `tests/wasm_informer.rs` (20 seeds of faults, watch-list against the sim) |
//! | CT-01 (add vs update by presence, old object on update, tombstones on delete), SI-03/04/06/07/08/09, stop | `shared_informer.rs` | `tests::informer_tests::rl_02_11_*`, `rl_13_*`, `si_*` |
//! | PG-01..04 | `api/pager.rs` | `api::tests::pg_01_to_04_pager_rules` |

mod delta_fifo;
mod keys;
mod list_watch;
mod lister;
mod reflector;
mod selector;
mod shared_informer;
mod status;
mod store;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use delta_fifo::{
    Delta, DeltaFifo, DeltaFifoOptions, DeltaType, FifoError, KnownObjects, Popped, Transformer,
};
pub use keys::{object_key, split_key, DeltaObject, KeyError, Tombstone};
pub use list_watch::{EventStream, ListerWatcher, ResourceListWatch, ResourceScope, TweakParams};
pub use lister::{Lister, NotFound};
pub use reflector::{
    BackoffManager, BackoffOptions, Reflector, ReflectorOptions, WatchErrorHandler,
};
pub use selector::{
    validate_label_key, validate_label_value, FieldRequirement, FieldSelector, LabelSelector,
    Operator, Requirement, SelectorError,
};
pub use shared_informer::{
    metadata_only, resync_period, strip_managed_fields, Handler, InformerOptions, Notification,
    Registration, SharedIndexInformer, SharedInformerFactory,
};
pub use status::{InformerStatus, Phase, StatusCell};
pub use store::{
    label_index_func, label_index_name, label_ns_index_name, namespace_index_func, IndexFunc,
    Indexer, Indexers, StoreError, StoreTransformer, NAMESPACE_INDEX,
};
