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

use super::resource::ApiResource;
use crate::rest::{Client, Error, Reader, Request};
use crate::rt::fx::FxHashMap;
use crate::rt::Instant;
use futures::future::{FutureExt, LocalBoxFuture, Shared};

/// The `Accept` header that asks for aggregated discovery.
pub(crate) const AGGREGATED_ACCEPT: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Parse an `APIGroupDiscoveryList` (the first version of a group is its preferred one).
pub(crate) fn parse_aggregated(body: &[u8]) -> Result<Vec<ApiResource>, Error> {
    let mut r = Reader::new(body, "aggregated discovery");
    let mut kind = String::new();
    let mut out = Vec::new();
    r.object(|key, r| match key {
        b"kind" => r.string().map(|k| kind = k),
        b"items" => r.array(|r| agg_group(r, &mut out)),
        _ => r.skip(),
    })?;
    r.end()?;
    if kind != "APIGroupDiscoveryList" {
        return Err(Error::decode(
            format!("expected APIGroupDiscoveryList, got {kind:?}"),
            body,
        ));
    }
    Ok(out)
}

/// One `APIGroupDiscovery`: its resources, appended to `out`.
fn agg_group(r: &mut Reader<'_>, out: &mut Vec<ApiResource>) -> Result<(), Error> {
    let first = out.len();
    let mut group = String::new();
    let mut versions = 0usize;
    r.object(|key, r| match key {
        b"metadata" => r.object(|key, r| match key {
            b"name" => r.string().map(|g| group = g),
            _ => r.skip(),
        }),
        b"versions" => r.array(|r| {
            versions += 1;
            agg_version(r, versions == 1, out)
        }),
        _ => r.skip(),
    })?;
    // The group's name may follow its versions.
    for res in out.iter_mut().skip(first) {
        res.group.clone_from(&group);
    }
    Ok(())
}

/// One `APIVersionDiscovery`: its resources, appended to `out`.
fn agg_version(
    r: &mut Reader<'_>,
    preferred: bool,
    out: &mut Vec<ApiResource>,
) -> Result<(), Error> {
    let first = out.len();
    let mut version = String::new();
    r.object(|key, r| match key {
        b"version" => r.string().map(|v| version = v),
        b"resources" => r.array(|r| {
            out.push(agg_resource(r, preferred)?);
            Ok(())
        }),
        _ => r.skip(),
    })?;
    for res in out.iter_mut().skip(first) {
        res.version.clone_from(&version);
    }
    Ok(())
}

/// One `APIResourceDiscovery` (group and version are filled in by the caller).
fn agg_resource(r: &mut Reader<'_>, preferred: bool) -> Result<ApiResource, Error> {
    let mut res = ApiResource {
        preferred,
        ..ApiResource::default()
    };
    let mut scope = String::new();
    r.object(|key, r| match key {
        b"resource" => r.string().map(|p| res.plural = p),
        b"responseKind" => r.object(|key, r| match key {
            b"kind" => r.string().map(|k| res.kind = k),
            _ => r.skip(),
        }),
        b"scope" => r.string().map(|s| scope = s),
        b"singularResource" => r.string().map(|s| res.singular = s),
        b"verbs" => r.strings().map(|v| res.verbs = v),
        b"shortNames" => r.strings().map(|v| res.short_names = v),
        b"subresources" => r.array(|r| {
            r.object(|key, r| match key {
                b"subresource" => r.string().map(|s| res.subresources.push(s)),
                _ => r.skip(),
            })
        }),
        _ => r.skip(),
    })?;
    res.namespaced = scope == "Namespaced";
    if res.singular.is_empty() {
        res.singular = res.kind.to_ascii_lowercase();
    }
    Ok(res)
}

/// One entry of a legacy `APIResourceList`.
#[derive(Default)]
struct LegacyResource {
    name: String,
    singular_name: String,
    namespaced: bool,
    kind: String,
    verbs: Vec<String>,
    short_names: Vec<String>,
}

/// Parse one legacy `APIResourceList` (subresources fold into their parent).
pub(crate) fn parse_resource_list(body: &[u8], preferred: bool) -> Result<Vec<ApiResource>, Error> {
    let mut r = Reader::new(body, "APIResourceList");
    let mut group_version = String::new();
    let mut resources: Vec<LegacyResource> = Vec::new();
    r.object(|key, r| match key {
        b"groupVersion" => r.string().map(|gv| group_version = gv),
        b"resources" => r.array(|r| {
            let mut l = LegacyResource::default();
            r.object(|key, r| match key {
                b"name" => r.string().map(|s| l.name = s),
                b"singularName" => r.string().map(|s| l.singular_name = s),
                b"namespaced" => r.bool().map(|b| l.namespaced = b),
                b"kind" => r.string().map(|s| l.kind = s),
                b"verbs" => r.strings().map(|v| l.verbs = v),
                b"shortNames" => r.strings().map(|v| l.short_names = v),
                _ => r.skip(),
            })?;
            resources.push(l);
            Ok(())
        }),
        _ => r.skip(),
    })?;
    r.end()?;
    let (group, version) = match group_version.split_once('/') {
        Some((g, v)) => (g.to_owned(), v.to_owned()),
        None => (String::new(), group_version.clone()),
    };
    let mut out: Vec<ApiResource> = Vec::new();
    // Each subresource finds its parent through this index (names borrowed
    // from `resources`): a search per subresource would be quadratic.
    let mut by_plural: FxHashMap<&str, usize> = FxHashMap::default();
    for r in &resources {
        if r.name.contains('/') {
            continue;
        }
        by_plural.entry(r.name.as_str()).or_insert(out.len());
        out.push(ApiResource {
            group: group.clone(),
            version: version.clone(),
            plural: r.name.clone(),
            // Without a singular name, the kind in lower case (client-go's
            // discovery REST mapper).
            singular: if r.singular_name.is_empty() {
                r.kind.to_ascii_lowercase()
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
    for r in &resources {
        if let Some((parent, sub)) = r.name.split_once('/') {
            if let Some(p) = by_plural.get(parent).and_then(|&i| out.get_mut(i)) {
                p.subresources.push(sub.to_owned());
            }
        }
    }
    Ok(out)
}

/// A `{"groupVersion": ...}` object's value.
fn group_version(r: &mut Reader<'_>) -> Result<String, Error> {
    let mut gv = String::new();
    r.object(|key, r| match key {
        b"groupVersion" => r.string().map(|s| gv = s),
        _ => r.skip(),
    })?;
    Ok(gv)
}

/// Parse `/apis` (`APIGroupList`): every `group/version` with whether it is preferred.
pub(crate) fn parse_legacy_group_list(body: &[u8]) -> Result<Vec<(String, bool)>, Error> {
    let mut r = Reader::new(body, "APIGroupList");
    let mut out = Vec::new();
    r.object(|key, r| match key {
        b"groups" => r.array(|r| {
            let mut versions = Vec::new();
            let mut preferred = String::new();
            r.object(|key, r| match key {
                b"versions" => r.array(|r| {
                    versions.push(group_version(r)?);
                    Ok(())
                }),
                b"preferredVersion" => group_version(r).map(|p| preferred = p),
                _ => r.skip(),
            })?;
            for v in versions {
                let is_preferred = v == preferred || preferred.is_empty();
                out.push((v, is_preferred));
            }
            Ok(())
        }),
        _ => r.skip(),
    })?;
    r.end()?;
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
    /// Bumped by `invalidate`: a refresh started before it neither serves
    /// later callers nor fills the cache.
    generation: Rc<std::cell::Cell<u64>>,
}

impl Discovery {
    /// Discovery with a 5-minute cache.
    pub fn new(client: Client) -> Self {
        Discovery {
            client,
            ttl: Duration::from_secs(300),
            cache: Rc::default(),
            in_flight: Rc::default(),
            generation: Rc::default(),
        }
    }

    /// Change the cache TTL.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Forget the cached result (after installing a CRD, say); a discovery
    /// under way is not joined by later callers, who start a fresh one.
    pub fn invalidate(&self) {
        self.cache.borrow_mut().take();
        self.in_flight.borrow_mut().take();
        self.generation.set(self.generation.get() + 1);
    }

    /// How long ago the cached result was fetched (`None`: nothing cached).
    pub fn cached_age(&self) -> Option<Duration> {
        let now = self.client.clock().now();
        self.cache.borrow().as_ref().map(|c| now - c.fetched_at)
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
                let generation = self.generation.get();
                let r = async move {
                    let result = me.fetch().await;
                    let current = me.generation.get() == generation;
                    if current {
                        me.in_flight.borrow_mut().take();
                    }
                    let resources = Rc::new(result?);
                    if current {
                        *me.cache.borrow_mut() = Some(Cache {
                            fetched_at: now,
                            resources: resources.clone(),
                        });
                    }
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

    /// Let the refresh under way go when nobody waits for it any more (its
    /// last caller gave up): dropped, its request is aborted.
    pub fn release_unwaited(&self) {
        let mut in_flight = self.in_flight.borrow_mut();
        if in_flight.as_ref().and_then(Shared::strong_count) == Some(1) {
            in_flight.take();
        }
    }

    /// Every document, within the client's timeout for the whole (it makes
    /// two requests or more, one after the other).
    async fn fetch(&self) -> Result<Vec<ApiResource>, Error> {
        let all = async {
            match self.aggregated().await {
                Ok(r) => Ok(r),
                Err(_) => self.legacy().await,
            }
        };
        let Some(limit) = self.client.config().timeout.filter(|t| !t.is_zero()) else {
            return all.await;
        };
        match futures::future::select(Box::pin(all), self.client.clock().sleep(limit)).await {
            futures::future::Either::Left((r, _)) => r,
            futures::future::Either::Right(_) => Err(Error::timeout(format!(
                "discovery: no complete answer within {limit:?}"
            ))),
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
        // One group version that fails (an aggregated API whose server is
        // down, such as metrics) leaves the others usable, as client-go's
        // `ServerGroupsAndResources` returns partial results; a 5xx is not
        // retried here, or each call would wait out the client's retries.
        for (gv, preferred) in groups {
            let req = Request::get()
                .path(format!("/apis/{gv}"))
                .server_errors_to_caller();
            let body = self.client.send_bytes(&req).await;
            if let Ok(list) = body.and_then(|b| parse_resource_list(&b, preferred)) {
                out.extend(list);
            }
        }
        Ok(out)
    }
}
