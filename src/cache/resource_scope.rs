//! Building a [`ResourceScope`] and checking it before an informer is made
//! from it, so a scope the server could never serve (no version, a resource
//! name with a `/`) is an error at creation, not a status that keeps
//! retrying.

use super::factory::SharedInformerFactory;
use super::list_watch::ResourceScope;
use super::shared_informer::{InformerOptions, SharedIndexInformer};
use crate::api::ApiResource;
use crate::rest::{Error, Request};

impl ResourceScope {
    /// Every object of `resource` (plural) in `group`/`version`, in all
    /// namespaces; narrow it with [`in_namespace`](Self::in_namespace) and
    /// the selector setters.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        ResourceScope {
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
            ..Default::default()
        }
    }

    /// Only objects in `namespace`.
    #[must_use]
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Only objects matching this label selector (sent to the server).
    #[must_use]
    pub fn label_selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Only objects matching this field selector (sent to the server).
    #[must_use]
    pub fn field_selector(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// Whether a list request for this scope can be built: the same checks
    /// as every request (a version, path-safe segments), made up front.
    pub fn validate(&self) -> Result<(), Error> {
        let req = Request::get()
            .group_version(&self.group, &self.version)
            .namespace_opt(self.namespace.as_deref())
            .resource(&self.resource);
        if self.resource.is_empty() {
            return Err(Error::invalid_request("a scope needs a resource"));
        }
        req.path_and_query().map(drop)
    }
}

impl From<&ApiResource> for ResourceScope {
    /// All objects of a discovered resource, in every namespace.
    fn from(r: &ApiResource) -> Self {
        ResourceScope::new(&r.group, &r.version, &r.plural)
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
        Ok(self.informer(scope, opts))
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn a_scope_is_built_step_by_step_or_from_a_discovered_resource() {
        let s = ResourceScope::new("apps", "v1", "deployments")
            .in_namespace("team-a")
            .label_selector("app=web")
            .field_selector("metadata.name=x");
        assert_eq!(
            (s.group.as_str(), s.version.as_str(), s.resource.as_str()),
            ("apps", "v1", "deployments")
        );
        assert_eq!(s.namespace.as_deref(), Some("team-a"));
        assert_eq!(s.label_selector.as_deref(), Some("app=web"));
        assert_eq!(s.field_selector.as_deref(), Some("metadata.name=x"));
        let r = ApiResource {
            group: "demo.kubewasm.dev".into(),
            version: "v1".into(),
            plural: "widgets".into(),
            kind: "Widget".into(),
            ..Default::default()
        };
        assert_eq!(
            ResourceScope::from(&r),
            ResourceScope::new("demo.kubewasm.dev", "v1", "widgets")
        );
    }

    #[test]
    fn a_scope_no_request_could_serve_is_refused_at_creation() {
        assert!(ResourceScope::new("", "v1", "pods").validate().is_ok());
        for bad in [
            ResourceScope::new("", "", "pods"),
            ResourceScope::new("", "v1", ""),
            ResourceScope::new("", "v1", "pods/log"),
            ResourceScope::new("apps", "v1", "deployments").in_namespace("a/b"),
        ] {
            assert!(
                matches!(bad.validate(), Err(Error::InvalidRequest { .. })),
                "{bad:?}"
            );
        }
    }
}
