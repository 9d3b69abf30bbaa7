//! Checking a [`ResourceScope`] before an informer is made
//! from it, so a scope the server could never serve (no version, a resource
//! name with a `/`) is an error at creation, not a status that keeps
//! retrying.

use super::factory::SharedInformerFactory;
use super::list_watch::ResourceScope;
use super::shared_informer::{InformerOptions, SharedIndexInformer};
use crate::rest::{Error, Request};

impl ResourceScope {
    /// Whether a list request for this scope can be built: the same checks
    /// as every request (a version, path-safe segments), made up front.
    pub fn validate(&self) -> Result<(), Error> {
        let r = &self.resource;
        let req = Request::get()
            .group_version(&r.group, &r.version)
            .namespace_opt(self.effective_namespace())
            .resource(&r.plural);
        if r.plural.is_empty() {
            return Err(Error::invalid_request("a scope needs a resource"));
        }
        req.path_and_query().map(drop)
    }
}

impl SharedInformerFactory {
    /// [`informer`](Self::informer), after checking the scope: an
    /// `InvalidRequest` error for one that no request could be built for,
    /// instead of an informer whose status reports it on every retry.
    pub fn try_informer(
        &self,
        scope: ResourceScope,
        opts: Option<InformerOptions>,
    ) -> Result<SharedIndexInformer, Error> {
        scope.validate()?;
        self.informer(scope, opts)
            .map_err(|e| Error::invalid_request(e.to_string()))
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::api::ApiResource;

    fn scope(group: &str, version: &str, plural: &str) -> ResourceScope {
        ResourceScope::new(ApiResource::new(group, version, plural, true))
    }

    #[test]
    fn a_scope_no_request_could_serve_is_refused_at_creation() {
        assert!(scope("", "v1", "pods").validate().is_ok());
        for bad in [
            scope("", "", "pods"),
            scope("", "v1", ""),
            scope("", "v1", "pods/log"),
            scope("apps", "v1", "deployments").namespace("a/b"),
        ] {
            assert!(
                matches!(bad.validate(), Err(Error::InvalidRequest { .. })),
                "{bad:?}"
            );
        }
    }
}
