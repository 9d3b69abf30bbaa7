//! Resource identities, the resource handle every request path comes from,
//! the pager, discovery and the REST mapper.
//!
//! * [`ApiResource`] names a resource completely (group, version, plural,
//!   kind, scope); [`builtin_resources`] knows the common ones without a
//!   round trip.
//! * [`Api`] is one resource plus a namespace scope: it builds every
//!   request path (the list/watch source of informers and the JS resource
//!   client go through it), applies the scope rules, and does CRUD, patch
//!   (four types), delete collection, watch and subresources on any
//!   resource, CRDs included.
//! * [`list_all`] follows continue tokens with client-go's pager rules
//!   (PG-01..04).
//! * [`Discovery`] reads aggregated discovery (one request per root) and falls
//!   back to the legacy documents, caching the result for a TTL on the
//!   client's clock; [`RestMapper`] maps kinds, plurals and short names.
//! * [`pod_logs`] streams a container's log line by line ([`LogParams`]).

mod discovery;
mod handle;
mod logs;
mod mapper;
mod pager;
mod resource;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use discovery::Discovery;
#[cfg(all(test, not(target_arch = "wasm32")))]
use discovery::{
    parse_aggregated, parse_legacy_group_list, parse_resource_list, AGGREGATED_ACCEPT,
};
pub use handle::{Api, Deleted};
pub use logs::{pod_logs, LogLines, LogParams, DEFAULT_MAX_LOG_LINE_BYTES};
pub use mapper::RestMapper;
pub(crate) use pager::ContinueTokens;
pub use pager::{list_all, ListAll};
pub use resource::{builtin_resources, ApiResource, GroupVersionKind};
