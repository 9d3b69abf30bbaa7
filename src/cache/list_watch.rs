//! The ListerWatcher seam: how a reflector lists and watches one resource.
//! [`ResourceListWatch`] does it over the REST client for any resource
//! (CRDs included); tests use a scripted implementation of the trait.

use std::time::Duration;

use futures::future::LocalBoxFuture;
use futures::stream::LocalBoxStream;
use futures::StreamExt;

use crate::rest::{Client, Error, ListParams, ObjectList, Request, WatchEvent, WatchParams};

/// A stream of watch events.
pub type EventStream = LocalBoxStream<'static, Result<WatchEvent, Error>>;

/// Lists and watches one kind of object.
pub trait ListerWatcher {
    /// One LIST page.
    fn list(&self, params: ListParams) -> LocalBoxFuture<'static, Result<ObjectList, Error>>;
    /// Open a WATCH.
    fn watch(&self, params: WatchParams) -> LocalBoxFuture<'static, Result<EventStream, Error>>;
}

/// Which objects a [`ResourceListWatch`] covers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceScope {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
    /// Namespace, or all namespaces.
    pub namespace: Option<String>,
    /// Label selector sent to the server.
    pub label_selector: Option<String>,
    /// Field selector sent to the server.
    pub field_selector: Option<String>,
}

/// A hook that adjusts list/watch parameters (client-go's `TweakListOptionsFunc`).
pub type TweakParams = std::rc::Rc<dyn Fn(&mut ListParams, &mut WatchParams)>;

/// Lists and watches a resource through the REST client.
#[derive(Clone)]
pub struct ResourceListWatch {
    client: Client,
    scope: ResourceScope,
    /// A watch that receives nothing (not even a bookmark) for this long is
    /// treated as dead (the idle watchdog).
    pub idle_timeout: Option<Duration>,
    tweak: Option<TweakParams>,
}

impl ResourceListWatch {
    /// List/watch `scope` with `client`. The idle watchdog defaults to 90 s:
    /// bookmarks arrive about once a minute from a real API server.
    pub fn new(client: Client, scope: ResourceScope) -> Self {
        ResourceListWatch {
            client,
            scope,
            idle_timeout: Some(Duration::from_secs(90)),
            tweak: None,
        }
    }

    /// Adjust every request's parameters.
    pub fn with_tweak(mut self, tweak: TweakParams) -> Self {
        self.tweak = Some(tweak);
        self
    }

    /// The scope.
    pub fn scope(&self) -> &ResourceScope {
        &self.scope
    }

    fn base(&self, req: Request) -> Request {
        req.group_version(&self.scope.group, &self.scope.version)
            .namespace_opt(self.scope.namespace.as_deref())
            .resource(&self.scope.resource)
    }

    fn apply_scope(&self, mut lp: ListParams, mut wp: WatchParams) -> (ListParams, WatchParams) {
        lp.label_selector = self.scope.label_selector.clone();
        lp.field_selector = self.scope.field_selector.clone();
        wp.label_selector = self.scope.label_selector.clone();
        wp.field_selector = self.scope.field_selector.clone();
        if let Some(t) = &self.tweak {
            t(&mut lp, &mut wp);
        }
        (lp, wp)
    }
}

impl ListerWatcher for ResourceListWatch {
    fn list(&self, params: ListParams) -> LocalBoxFuture<'static, Result<ObjectList, Error>> {
        let (lp, _) = self.apply_scope(params, WatchParams::default());
        let req = self.base(Request::get()).list_params(&lp);
        let client = self.client.clone();
        Box::pin(async move { client.send_list(&req).await })
    }

    fn watch(&self, params: WatchParams) -> LocalBoxFuture<'static, Result<EventStream, Error>> {
        let (_, wp) = self.apply_scope(ListParams::default(), params);
        let mut req = self.base(Request::get()).watch_params(&wp);
        if let Some(d) = self.idle_timeout {
            req = req.idle_timeout(d);
        }
        let client = self.client.clone();
        Box::pin(async move { Ok(client.watch(&req).await?.boxed_local()) })
    }
}
