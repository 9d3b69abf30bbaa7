//! Discovery: what resources the server offers.
//!
//! Aggregated discovery (`apidiscovery.k8s.io/v2`, Kubernetes ≥ 1.30) answers
//! with two requests (`/api`, `/apis`); older servers and many proxies do not
//! speak it, so any failure or a response of another type falls back to the
//! legacy documents (`/api`, `/apis`, one `APIResourceList` per group
//! version). Results are cached for a TTL on the client's clock.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use futures::future::{FutureExt, LocalBoxFuture, Shared};
use serde::Deserialize;

use super::resource::ApiResource;
use crate::rest::{Client, Error, Request};
use crate::rt::Instant;

/// The `Accept` header that asks for aggregated discovery.
pub(crate) const AGGREGATED_ACCEPT: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AggList {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    items: Vec<AggGroup>,
}

#[derive(Deserialize, Default)]
struct AggMeta {
    #[serde(default)]
    name: String,
}

#[derive(Deserialize, Default)]
struct AggGroup {
    #[serde(default)]
    metadata: AggMeta,
    #[serde(default)]
    versions: Vec<AggVersion>,
}

#[derive(Deserialize, Default)]
struct AggVersion {
    #[serde(default)]
    version: String,
    #[serde(default)]
    resources: Vec<AggResource>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AggKind {
    #[serde(default)]
    kind: String,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct AggResource {
    #[serde(default)]
    resource: String,
    #[serde(default)]
    response_kind: AggKind,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    singular_resource: String,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    short_names: Vec<String>,
    #[serde(default)]
    subresources: Vec<AggSub>,
}

#[derive(Deserialize, Default)]
struct AggSub {
    #[serde(default)]
    subresource: String,
}

/// Parse an `APIGroupDiscoveryList` (the first version of a group is its preferred one).
pub(crate) fn parse_aggregated(body: &[u8]) -> Result<Vec<ApiResource>, Error> {
    let list: AggList = serde_json::from_slice(body)
        .map_err(|e| Error::decode(format!("aggregated discovery: {e}"), body))?;
    if list.kind != "APIGroupDiscoveryList" {
        return Err(Error::decode(
            format!("expected APIGroupDiscoveryList, got {:?}", list.kind),
            body,
        ));
    }
    let mut out = Vec::new();
    for g in list.items {
        for (i, v) in g.versions.into_iter().enumerate() {
            for r in v.resources {
                out.push(ApiResource {
                    group: g.metadata.name.clone(),
                    version: v.version.clone(),
                    singular: if r.singular_resource.is_empty() {
                        r.resource.trim_end_matches('s').to_owned()
                    } else {
                        r.singular_resource
                    },
                    plural: r.resource,
                    kind: r.response_kind.kind,
                    namespaced: r.scope == "Namespaced",
                    short_names: r.short_names,
                    verbs: r.verbs,
                    subresources: r.subresources.into_iter().map(|s| s.subresource).collect(),
                    preferred: i == 0,
                });
            }
        }
    }
    Ok(out)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ResourceList {
    #[serde(default)]
    group_version: String,
    #[serde(default)]
    resources: Vec<LegacyResource>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LegacyResource {
    #[serde(default)]
    name: String,
    #[serde(default)]
    singular_name: String,
    #[serde(default)]
    namespaced: bool,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(default)]
    short_names: Vec<String>,
}

/// Parse one legacy `APIResourceList` (subresources fold into their parent).
pub(crate) fn parse_resource_list(body: &[u8], preferred: bool) -> Result<Vec<ApiResource>, Error> {
    let list: ResourceList = serde_json::from_slice(body)
        .map_err(|e| Error::decode(format!("APIResourceList: {e}"), body))?;
    let (group, version) = match list.group_version.split_once('/') {
        Some((g, v)) => (g.to_owned(), v.to_owned()),
        None => (String::new(), list.group_version.clone()),
    };
    let mut out: Vec<ApiResource> = Vec::new();
    for r in &list.resources {
        if r.name.contains('/') {
            continue;
        }
        out.push(ApiResource {
            group: group.clone(),
            version: version.clone(),
            plural: r.name.clone(),
            singular: if r.singular_name.is_empty() {
                r.name.trim_end_matches('s').to_owned()
            } else {
                r.singular_name.clone()
            },
            kind: r.kind.clone(),
            namespaced: r.namespaced,
            short_names: r.short_names.clone(),
            verbs: r.verbs.clone(),
            subresources: Vec::new(),
            preferred,
        });
    }
    for r in &list.resources {
        if let Some((parent, sub)) = r.name.split_once('/') {
            if let Some(p) = out.iter_mut().find(|x| x.plural == parent) {
                p.subresources.push(sub.to_owned());
            }
        }
    }
    Ok(out)
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct GroupList {
    #[serde(default)]
    groups: Vec<LegacyGroup>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct LegacyGroup {
    #[serde(default)]
    versions: Vec<GroupVersionRef>,
    #[serde(default)]
    preferred_version: Option<GroupVersionRef>,
}

#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
struct GroupVersionRef {
    #[serde(default)]
    group_version: String,
}

/// Parse `/apis` (`APIGroupList`): every `group/version` with whether it is preferred.
pub(crate) fn parse_legacy_group_list(body: &[u8]) -> Result<Vec<(String, bool)>, Error> {
    let list: GroupList = serde_json::from_slice(body)
        .map_err(|e| Error::decode(format!("APIGroupList: {e}"), body))?;
    let mut out = Vec::new();
    for g in list.groups {
        let preferred = g
            .preferred_version
            .as_ref()
            .map(|p| p.group_version.clone())
            .unwrap_or_default();
        for v in g.versions {
            out.push((
                v.group_version.clone(),
                v.group_version == preferred || preferred.is_empty(),
            ));
        }
    }
    Ok(out)
}

struct Cache {
    fetched_at: Instant,
    resources: Rc<Vec<ApiResource>>,
}

/// The result every concurrent caller of one refresh shares.
type Refresh = Shared<LocalBoxFuture<'static, Result<Rc<Vec<ApiResource>>, Error>>>;

/// Cached discovery over a client. Concurrent callers share one refresh
/// (single flight): a page whose components all ask at start-up sends the
/// discovery requests once.
#[derive(Clone)]
pub struct Discovery {
    client: Client,
    ttl: Duration,
    cache: Rc<RefCell<Option<Cache>>>,
    in_flight: Rc<RefCell<Option<Refresh>>>,
}

impl Discovery {
    /// Discovery with a 5-minute cache.
    pub fn new(client: Client) -> Self {
        Discovery {
            client,
            ttl: Duration::from_secs(300),
            cache: Rc::default(),
            in_flight: Rc::default(),
        }
    }

    /// Change the cache TTL.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Forget the cached result (after installing a CRD, say).
    pub fn invalidate(&self) {
        self.cache.borrow_mut().take();
    }

    /// Every resource the server offers (from the cache while fresh).
    pub async fn resources(&self) -> Result<Rc<Vec<ApiResource>>, Error> {
        let now = self.client.clock().now();
        if let Some(c) = self.cache.borrow().as_ref() {
            if now - c.fetched_at < self.ttl {
                return Ok(c.resources.clone());
            }
        }
        let refresh = self.in_flight.borrow().clone();
        let refresh = match refresh {
            Some(r) => r,
            None => {
                let me = self.clone();
                let r = async move {
                    let result = me.fetch().await;
                    me.in_flight.borrow_mut().take();
                    let resources = Rc::new(result?);
                    *me.cache.borrow_mut() = Some(Cache {
                        fetched_at: now,
                        resources: resources.clone(),
                    });
                    Ok(resources)
                }
                .boxed_local()
                .shared();
                *self.in_flight.borrow_mut() = Some(r.clone());
                r
            }
        };
        refresh.await
    }

    async fn fetch(&self) -> Result<Vec<ApiResource>, Error> {
        match self.aggregated().await {
            Ok(r) => Ok(r),
            Err(_) => self.legacy().await,
        }
    }

    async fn aggregated(&self) -> Result<Vec<ApiResource>, Error> {
        let mut out = Vec::new();
        for root in ["/api", "/apis"] {
            let resp = self
                .client
                .send(
                    &Request::get()
                        .path(root)
                        .header("Accept", AGGREGATED_ACCEPT),
                )
                .await?;
            out.extend(parse_aggregated(&resp.body)?);
        }
        Ok(out)
    }

    async fn legacy(&self) -> Result<Vec<ApiResource>, Error> {
        let mut out = parse_resource_list(
            &self
                .client
                .send_bytes(&Request::get().path("/api/v1"))
                .await?,
            true,
        )?;
        let groups = parse_legacy_group_list(
            &self
                .client
                .send_bytes(&Request::get().path("/apis"))
                .await?,
        )?;
        for (gv, preferred) in groups {
            let body = self
                .client
                .send_bytes(&Request::get().path(format!("/apis/{gv}")))
                .await?;
            out.extend(parse_resource_list(&body, preferred)?);
        }
        Ok(out)
    }
}
