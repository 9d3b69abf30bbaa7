//! Resource identities (group/version/resource and kind), the dynamic client
//! for any resource including CRDs, the pager, discovery and the REST mapper.
//!
//! * [`ApiResource`] names a resource completely (group, version, plural,
//!   kind, scope); [`builtin_resources`] knows the common ones without a
//!   round trip.
//! * [`DynamicClient`] does CRUD, patch (four types), delete collection,
//!   watch and the `status`/`scale` subresources on any resource.
//! * [`list_all`] follows continue tokens with client-go's pager rules
//!   (PG-01..04).
//! * [`Discovery`] reads aggregated discovery (one request per root) and falls
//!   back to the legacy documents, caching the result for a TTL on the
//!   client's clock; [`RestMapper`] maps kinds, plurals and short names.
//! * [`pod_logs`] streams a container's log line by line ([`LogParams`]).

mod discovery;
mod dynamic;
mod logs;
mod mapper;
mod pager;
mod resource;

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;

pub use discovery::{
    parse_aggregated, parse_legacy_group_list, parse_resource_list, Discovery, AGGREGATED_ACCEPT,
};
pub use dynamic::DynamicClient;
pub use logs::{lines as log_lines, pod_logs, LogLines, LogParams, DEFAULT_MAX_LOG_LINE_BYTES};
pub use mapper::RestMapper;
pub use pager::{list_all, ListAll};
pub use resource::{builtin_resources, ApiResource, GroupVersionKind, GroupVersionResource};
