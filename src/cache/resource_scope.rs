//! Checking a [`ResourceScope`] before an informer is made from it, so a
//! scope the server could never serve (no version, a resource name with a
//! `/`, a namespace that is not a path segment) is an error at creation, not
//! a status that keeps retrying with backoff.

use super::list_watch::ResourceScope;
use crate::rest::{Error, Request};

impl ResourceScope {
    /// Whether a list request for this scope can be built: the checks every
    /// request makes (a version, path-safe segments), made up front.
    pub fn validate(&self) -> Result<(), Error> {
        if self.resource.plural.is_empty() {
            return Err(Error::invalid_request("a scope needs a resource"));
        }
        Request::get()
            .group_version(&self.resource.group, &self.resource.version)
            .namespace_opt(self.effective_namespace())
            .resource(&self.resource.plural)
            .path_and_query()
            .map(drop)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::api::ApiResource;

    #[test]
    fn a_scope_no_request_could_serve_is_refused() {
        let pods = |version: &str, plural: &str| {
            ResourceScope::new(ApiResource::new("", version, plural, true))
        };
        assert!(pods("v1", "pods").namespace("default").validate().is_ok());
        for bad in [
            pods("", "pods"),
            pods("v1", ""),
            pods("v1", "pods/log"),
            pods("v1", "pods").namespace("a/b"),
        ] {
            assert!(
                matches!(bad.validate(), Err(Error::InvalidRequest { .. })),
                "{bad:?}"
            );
        }
    }
}
