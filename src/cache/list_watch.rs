//! The ListerWatcher seam: how a reflector lists and watches one resource.
//! [`ResourceListWatch`] does it over the REST client for any resource
//! (CRDs included); tests script one with `ScriptedListerWatcher`.
//!
//! As in client-go's `NewFilteredListWatchFromClient` (RC-01), the scope's
//! selectors and the tweak hook apply to LIST and WATCH alike.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use futures::stream::LocalBoxStream;
use futures::StreamExt;

use crate::api::{Api, ApiResource};
use crate::rest::{
    Client, Error, ListHooks, ListParams, ObjectList, OnItem, Request, WatchEvent, WatchParams,
};
use crate::rt::{spawn_local, TaskHandle};

/// A stream of watch events.
pub type EventStream = LocalBoxStream<'static, Result<WatchEvent, Error>>;

/// Lists and watches one kind of object.
pub trait ListerWatcher {
    /// One LIST page.
    fn list(&self, params: ListParams) -> LocalBoxFuture<'static, Result<ObjectList, Error>>;
    /// One LIST page, each valid item passed through `on_item` as soon as
    /// it is decoded (what it returns is kept). A source that decodes as
    /// the body streams in calls it before the next item arrives, so the
    /// caller never holds the raw items of a page all at once.
    fn list_with(
        &self,
        params: ListParams,
        on_item: OnItem,
    ) -> LocalBoxFuture<'static, Result<ObjectList, Error>> {
        let page = self.list(params);
        Box::pin(async move {
            let mut page = page.await?;
            page.items = std::mem::take(&mut page.items)
                .into_iter()
                .filter_map(|o| on_item(o))
                .collect();
            Ok(page)
        })
    }
    /// Open a WATCH. Dropping the stream must close the connection.
    fn watch(&self, params: WatchParams) -> LocalBoxFuture<'static, Result<EventStream, Error>>;
    /// Whether streaming watch-list (`sendInitialEvents`) may be tried
    /// (RL-01: a lister-watcher that says nothing supports it).
    fn supports_watch_list(&self) -> bool {
        true
    }
    /// The transport the last opened watch got, and why (for the status).
    fn last_transport(&self) -> Option<crate::rest::TransportChoice> {
        None
    }
    /// How long a watch may go without a byte before it is opened again
    /// (`None`: no watchdog).
    fn watch_idle_timeout(&self) -> Option<Duration> {
        None
    }
    /// Completes when the server answers again after a request met none
    /// (`None`: this source cannot tell).
    fn reached_again(&self) -> Option<LocalBoxFuture<'static, ()>> {
        None
    }
}

/// Which objects a [`ResourceListWatch`] covers: a resource, a namespace
/// (or all of them) and the selectors sent to the server.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceScope {
    /// The resource.
    pub resource: ApiResource,
    /// Namespace, or all namespaces (ignored for a cluster-scoped resource).
    pub namespace: Option<String>,
    /// Label selector sent to the server.
    pub label_selector: Option<String>,
    /// Field selector sent to the server.
    pub field_selector: Option<String>,
    /// Ask the server for metadata only ([`PARTIAL_LIST_ACCEPT`],
    /// [`PARTIAL_WATCH_ACCEPT`]), as client-go's metadata informers do.
    pub metadata_only: bool,
}

/// The `Accept` of a metadata-only LIST: `PartialObjectMetadataList`, or
/// plain JSON from a server that does not serve it.
pub const PARTIAL_LIST_ACCEPT: &str =
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json";

/// The `Accept` of a metadata-only WATCH: each event's object as
/// `PartialObjectMetadata`, or plain JSON.
pub const PARTIAL_WATCH_ACCEPT: &str =
    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json";

/// Whether a server refused the metadata-only `Accept` (406 Not
/// Acceptable; 415 from proxies that check media types both ways).
fn refuses_accept(e: &Error) -> bool {
    matches!(e.code(), Some(406 | 415))
}

impl ResourceScope {
    /// Every object of `resource`, in every namespace.
    pub fn new(resource: ApiResource) -> Self {
        ResourceScope {
            resource,
            ..Default::default()
        }
    }

    /// Only objects in `namespace` (empty: all namespaces).
    #[must_use]
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.namespace = (!namespace.is_empty()).then(|| namespace.to_owned());
        self
    }

    /// Only objects matching this label selector.
    #[must_use]
    pub fn labels(mut self, selector: &str) -> Self {
        self.label_selector = Some(selector.to_owned());
        self
    }

    /// Only objects matching this field selector.
    #[must_use]
    pub fn fields(mut self, selector: &str) -> Self {
        self.field_selector = Some(selector.to_owned());
        self
    }

    /// Metadata only, asked of the server (see [`ResourceScope::metadata_only`]).
    #[must_use]
    pub fn metadata(mut self) -> Self {
        self.metadata_only = true;
        self
    }

    /// The namespace requests go to: `None` across all namespaces and for a
    /// cluster-scoped resource.
    pub fn effective_namespace(&self) -> Option<&str> {
        self.namespace
            .as_deref()
            .filter(|n| self.resource.namespaced && !n.is_empty())
    }

    /// The resource handle for this scope's resource and namespace.
    pub fn api(&self, client: Client) -> Api {
        Api::namespaced(
            client,
            self.resource.clone(),
            self.namespace.as_deref().unwrap_or(""),
        )
    }
}

impl From<&ApiResource> for ResourceScope {
    fn from(resource: &ApiResource) -> Self {
        ResourceScope::new(resource.clone())
    }
}

/// A hook that adjusts list/watch parameters (client-go's `TweakListOptionsFunc`).
pub type TweakParams = Rc<dyn Fn(&mut ListParams, &mut WatchParams)>;

/// Lists and watches a resource through the REST client.
#[derive(Clone)]
pub struct ResourceListWatch {
    api: Api,
    scope: ResourceScope,
    /// A watch that receives nothing (not even a bookmark) for this long is
    /// treated as dead: the stream yields a timeout error and the reflector
    /// re-watches from its last resourceVersion (the idle watchdog).
    pub idle_timeout: Option<Duration>,
    tweak: Option<TweakParams>,
    watch_list: bool,
    /// Whether the next LIST page is requested before this one is decoded.
    prefetch_pages: bool,
    prefetch: Rc<RefCell<Option<Prefetch>>>,
    transport: Rc<RefCell<Option<crate::rest::TransportChoice>>>,
    /// The server refused the metadata-only `Accept`: plain JSON from now on
    /// (the informer's transform strips the objects instead).
    partial_refused: Rc<std::cell::Cell<bool>>,
}

/// The next LIST page, requested as soon as the current page's continue
/// token is decoded, so the server produces it while the client decodes
/// (the pages and their order are exactly what the caller asks for; only
/// the timing moves). Dropping it aborts the request.
struct Prefetch {
    params: ListParams,
    body: oneshot::Receiver<Result<ObjectList, Error>>,
    task: TaskHandle,
}

impl Prefetch {
    fn start(client: Client, req: Request, params: ListParams) -> Prefetch {
        let (tx, body) = oneshot::channel();
        let task = spawn_local(async move {
            let _ = tx.send(client.send_list(&req).await);
        });
        Prefetch { params, body, task }
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ResourceListWatch {
    /// List/watch `scope` with `client`. The idle watchdog defaults to 90 s:
    /// a real API server sends a bookmark about once a minute.
    pub fn new(client: Client, scope: ResourceScope) -> Self {
        ResourceListWatch {
            api: scope.api(client),
            scope,
            idle_timeout: Some(Duration::from_secs(90)),
            tweak: None,
            watch_list: true,
            prefetch_pages: true,
            prefetch: Rc::default(),
            transport: Rc::default(),
            partial_refused: Rc::default(),
        }
    }

    /// Whether the server refused the metadata-only `Accept` (the objects
    /// then arrive whole and are stripped on the client).
    pub fn metadata_only_refused(&self) -> bool {
        self.partial_refused.get()
    }

    /// `req` with the metadata-only `Accept` while it is wanted and not refused.
    fn accept(&self, req: Request, value: &str) -> (Request, bool) {
        if self.scope.metadata_only && !self.partial_refused.get() {
            (req.header("Accept", value), true)
        } else {
            (req, false)
        }
    }

    /// Adjust every request's parameters.
    #[must_use]
    pub fn with_tweak(mut self, tweak: TweakParams) -> Self {
        self.tweak = Some(tweak);
        self
    }

    /// Declare that the server does not support streaming watch-list.
    #[must_use]
    pub fn without_watch_list(mut self) -> Self {
        self.watch_list = false;
        self
    }

    /// Request LIST pages one at a time (by default the next page is
    /// requested before the current one is decoded, which holds two pages in
    /// memory at once: turn it off under a tight memory budget).
    #[must_use]
    pub fn without_prefetch(mut self) -> Self {
        self.prefetch_pages = false;
        self
    }

    /// The scope.
    pub fn scope(&self) -> &ResourceScope {
        &self.scope
    }

    /// The resource handle requests go through.
    pub fn api(&self) -> &Api {
        &self.api
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
        self.list_with(params, Rc::new(Some))
    }

    fn list_with(
        &self,
        params: ListParams,
        on_item: OnItem,
    ) -> LocalBoxFuture<'static, Result<ObjectList, Error>> {
        // What the reflector asks for the page after this one (PG-03: the
        // continue token and the limit, no resourceVersion), scoped the same.
        let (template, _) = self.apply_scope(
            ListParams {
                limit: params.limit,
                ..Default::default()
            },
            WatchParams::default(),
        );
        let first_page = params.continue_token.is_none();
        let (lp, _) = self.apply_scope(params, WatchParams::default());
        // A list's first request leaves server errors (and a server's
        // request to wait) to the reflector's backoff, shown in its status;
        // a later page (prefetched or not) is retried by the client, or a
        // blip would start a long list over.
        let request = move |r: Request| {
            if first_page {
                r.server_errors_to_caller()
                    .network_errors_to_caller()
                    .waits_to_caller()
            } else {
                r
            }
        };
        let plain = self.api.collection_request(Request::get());
        let (base, partial) = self.accept(plain.clone(), PARTIAL_LIST_ACCEPT);
        let client = self.api.client().clone();
        let slot = self.prefetch.clone();
        let prefetch_pages = self.prefetch_pages;
        // A page prefetched for other parameters is of no use: drop (abort) it.
        let ready = slot.borrow_mut().take().filter(|p| p.params == lp);
        let req = request(base.clone().list_params(&lp));
        let next_pages = move |base: Request| -> crate::rest::OnContinue {
            let client = client.clone();
            let slot = slot.clone();
            let template = template.clone();
            Rc::new(move |token: &str| {
                if prefetch_pages {
                    let next = ListParams {
                        continue_token: Some(token.to_string()),
                        ..template.clone()
                    };
                    let req = base.clone().list_params(&next);
                    *slot.borrow_mut() = Some(Prefetch::start(client.clone(), req, next));
                }
            })
        };
        let fetch_next = next_pages(base);
        let client = self.api.client().clone();
        let refused = self.partial_refused.clone();
        Box::pin(async move {
            if let Some(mut p) = ready {
                // An aborted prefetch is asked again below.
                if let Ok(page) = (&mut p.body).await {
                    let mut page = page?;
                    if let Some(token) = &page.continue_token {
                        fetch_next(token);
                    }
                    page.items = std::mem::take(&mut page.items)
                        .into_iter()
                        .filter_map(|o| on_item(o))
                        .collect();
                    return Ok(page);
                }
            }
            let hooks = ListHooks {
                on_continue: Some(fetch_next),
                on_item: Some(on_item.clone()),
            };
            match client.send_list_with(&req, hooks).await {
                Err(e) if partial && refuses_accept(&e) => {
                    refused.set(true);
                    let req = request(plain.clone().list_params(&lp));
                    let hooks = ListHooks {
                        on_continue: Some(next_pages(plain)),
                        on_item: Some(on_item),
                    };
                    client.send_list_with(&req, hooks).await
                }
                r => r,
            }
        })
    }

    fn watch(&self, params: WatchParams) -> LocalBoxFuture<'static, Result<EventStream, Error>> {
        let (_, wp) = self.apply_scope(ListParams::default(), params);
        let mut plain = self
            .api
            .collection_request(Request::get())
            .server_errors_to_caller()
            .network_errors_to_caller()
            .waits_to_caller()
            .watch_params(&wp);
        if let Some(d) = self.idle_timeout {
            plain = plain.idle_timeout(d);
        }
        let (req, partial) = self.accept(plain.clone(), PARTIAL_WATCH_ACCEPT);
        let client = self.api.client().clone();
        let last = self.transport.clone();
        let refused = self.partial_refused.clone();
        Box::pin(async move {
            let stream = match client.watch(&req).await {
                Err(e) if partial && refuses_accept(&e) => {
                    refused.set(true);
                    client.watch(&plain).await?
                }
                r => r?,
            };
            *last.borrow_mut() = stream.transport().cloned();
            Ok(stream.boxed_local())
        })
    }

    fn last_transport(&self) -> Option<crate::rest::TransportChoice> {
        self.transport.borrow().clone()
    }

    fn watch_idle_timeout(&self) -> Option<Duration> {
        self.idle_timeout
    }

    fn reached_again(&self) -> Option<LocalBoxFuture<'static, ()>> {
        Some(Box::pin(self.api.client().reached_again()))
    }

    fn supports_watch_list(&self) -> bool {
        self.watch_list
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use serde_json::json;

    use super::{ListerWatcher, ResourceListWatch, ResourceScope};
    use crate::api::ApiResource;
    use crate::rest::{Client, Config, FakeResponse, FakeTransport, ListParams};
    use crate::rt::{run_until_stalled, spawn_local, FakeClock};

    /// A page as the API server writes it: `metadata` before `items`.
    fn page(names: &[&str], cont: &str) -> FakeResponse {
        let items: Vec<_> = names
            .iter()
            .map(|n| json!({"metadata": {"name": n, "namespace": "ns", "resourceVersion": "5"}}))
            .collect();
        let body = format!(
            r#"{{"kind":"PodList","apiVersion":"v1","metadata":{{"resourceVersion":"5","continue":"{cont}"}},"items":{}}}"#,
            json!(items)
        );
        FakeResponse::new(200)
            .header("Content-Type", "application/json")
            .body(body)
    }

    fn lw() -> (FakeTransport, ResourceListWatch) {
        let t = FakeTransport::new();
        let mut cfg = Config::new("http://k8s.test");
        cfg.rate_limit = None;
        let c = Client::with_transport(cfg, Rc::new(t.clone()), FakeClock::new().shared())
            .expect("client");
        let scope =
            ResourceScope::new(ApiResource::builtin("pods").expect("pods")).labels("app=web");
        (t, ResourceListWatch::new(c, scope))
    }

    fn list(lw: &ResourceListWatch, p: ListParams) -> Rc<RefCell<Option<Vec<String>>>> {
        let out = Rc::new(RefCell::new(None));
        let (o, fut) = (out.clone(), lw.list(p));
        spawn_local(async move {
            let l = fut.await.expect("page");
            *o.borrow_mut() = Some(l.items.iter().map(|i| i.name().to_owned()).collect());
        });
        run_until_stalled();
        out
    }

    #[test]
    fn the_next_page_is_requested_before_it_is_asked_for_and_used_once() {
        let (t, lw) = lw();
        t.push(page(&["a", "b"], "c1"));
        let next = t.push_pending();
        let first = ListParams {
            limit: Some(2),
            resource_version: Some("0".into()),
            ..Default::default()
        };
        assert_eq!(
            *list(&lw, first).borrow(),
            Some(vec!["a".into(), "b".into()])
        );
        // Page 2 is already on its way, with the token, the selector and no RV.
        let reqs = t.requests();
        assert_eq!(reqs.len(), 2);
        let url = &reqs[1].url;
        assert!(
            url.contains("continue=c1") && url.contains("limit=2"),
            "{url}"
        );
        assert!(url.contains("labelSelector=app%3Dweb"), "{url}");
        assert!(!url.contains("resourceVersion"), "{url}");
        next.respond(page(&["c"], ""));
        // Asking for it issues no new request; the last page prefetches nothing.
        let second = ListParams {
            limit: Some(2),
            continue_token: Some("c1".into()),
            ..Default::default()
        };
        assert_eq!(*list(&lw, second.clone()).borrow(), Some(vec!["c".into()]));
        assert_eq!(t.request_count(), 2);
        // A second ask for the same page goes to the server again.
        t.push(page(&["c"], ""));
        assert_eq!(*list(&lw, second).borrow(), Some(vec!["c".into()]));
        assert_eq!(t.request_count(), 3);
    }

    #[test]
    fn a_first_page_leaves_a_server_error_to_the_reflector_and_a_later_page_is_retried() {
        let t = FakeTransport::new();
        let clock = FakeClock::new();
        let mut cfg = Config::new("http://k8s.test");
        cfg.rate_limit = None;
        let c = Client::with_transport(cfg, Rc::new(t.clone()), clock.shared()).expect("client");
        let lw = ResourceListWatch::new(
            c,
            ResourceScope::new(ApiResource::builtin("pods").expect("pods")),
        );
        let outcome = |p: ListParams| {
            let out = Rc::new(RefCell::new(None));
            let (o, fut) = (out.clone(), lw.list(p));
            spawn_local(async move {
                *o.borrow_mut() = Some(fut.await.map(|l| l.items.len()));
            });
            run_until_stalled();
            out
        };
        t.push(FakeResponse::status(500, "InternalError", "boom"));
        let first = outcome(ListParams::default());
        assert_eq!(t.request_count(), 1, "not retried by the client");
        assert!(first.borrow_mut().take().expect("done").is_err());
        t.push(FakeResponse::status(500, "InternalError", "boom"));
        t.push(page(&["c"], ""));
        let later = outcome(ListParams {
            continue_token: Some("c1".into()),
            ..Default::default()
        });
        clock.advance(std::time::Duration::from_secs(5));
        run_until_stalled();
        assert_eq!(t.request_count(), 3, "the page was retried");
        assert_eq!(later.borrow_mut().take().expect("done").ok(), Some(1));
    }

    #[test]
    fn a_prefetch_for_other_parameters_is_aborted_and_not_used() {
        let (t, lw) = lw();
        t.push(page(&["a"], "c1"));
        let stale = t.push_pending();
        let p = ListParams {
            limit: Some(1),
            ..Default::default()
        };
        list(&lw, p.clone());
        assert_eq!(t.request_count(), 2);
        // The caller relists from the start instead (say, after an error).
        t.push(page(&["a"], ""));
        assert_eq!(*list(&lw, p).borrow(), Some(vec!["a".into()]));
        assert!(stale.is_cancelled(), "the unused prefetch was aborted");
        assert_eq!(t.request_count(), 3);
    }

    fn metadata_lw() -> (FakeTransport, ResourceListWatch) {
        let (t, plain) = lw();
        let scope = ResourceScope {
            metadata_only: true,
            ..plain.scope().clone()
        };
        (
            t,
            ResourceListWatch::new(plain.api().client().clone(), scope),
        )
    }

    fn accept(t: &FakeTransport, i: usize) -> String {
        t.requests()[i].header("Accept").unwrap_or("").to_owned()
    }

    fn watch(lw: &ResourceListWatch) -> Rc<RefCell<Option<bool>>> {
        let out = Rc::new(RefCell::new(None));
        let (o, fut) = (out.clone(), lw.watch(crate::rest::WatchParams::default()));
        spawn_local(async move {
            *o.borrow_mut() = Some(fut.await.is_ok());
        });
        run_until_stalled();
        out
    }

    fn not_acceptable(code: u16) -> FakeResponse {
        FakeResponse::status(code, "NotAcceptable", "only application/json is served")
    }

    #[test]
    fn metadata_only_asks_for_partial_object_metadata_pages_and_watches() {
        let (t, lw) = metadata_lw();
        t.push(page(&["a"], "c1"));
        t.push(page(&["b"], ""));
        let p = ListParams {
            limit: Some(1),
            ..Default::default()
        };
        assert_eq!(*list(&lw, p).borrow(), Some(vec!["a".into()]));
        assert_eq!(accept(&t, 0), super::PARTIAL_LIST_ACCEPT);
        assert_eq!(
            accept(&t, 1),
            super::PARTIAL_LIST_ACCEPT,
            "the prefetched page too"
        );
        t.push(FakeResponse::new(200).body(""));
        assert_eq!(*watch(&lw).borrow(), Some(true));
        assert_eq!(accept(&t, 2), super::PARTIAL_WATCH_ACCEPT);
        assert!(!lw.metadata_only_refused());
        // Without the option: plain JSON.
        let (t, plain) = self::lw();
        t.push(page(&["a"], ""));
        list(&plain, ListParams::default());
        assert_eq!(accept(&t, 0), "application/json");
    }

    #[test]
    fn a_server_refusing_metadata_only_gets_plain_json_from_then_on() {
        for code in [406, 415] {
            let (t, lw) = metadata_lw();
            t.push(not_acceptable(code));
            t.push(page(&["a"], ""));
            assert_eq!(
                *list(&lw, ListParams::default()).borrow(),
                Some(vec!["a".into()])
            );
            assert_eq!(accept(&t, 0), super::PARTIAL_LIST_ACCEPT);
            assert_eq!(accept(&t, 1), "application/json", "retried without it");
            assert!(lw.metadata_only_refused());
            t.push(FakeResponse::new(200).body(""));
            assert_eq!(*watch(&lw).borrow(), Some(true));
            assert_eq!(accept(&t, 2), "application/json", "not asked again");
        }
        // A watch refused first falls back the same way.
        let (t, lw) = metadata_lw();
        t.push(not_acceptable(406));
        t.push(FakeResponse::new(200).body(""));
        assert_eq!(*watch(&lw).borrow(), Some(true));
        assert_eq!(
            (accept(&t, 0), accept(&t, 1)),
            (
                super::PARTIAL_WATCH_ACCEPT.to_owned(),
                "application/json".to_owned()
            )
        );
        // Other errors are not a refusal.
        let (t, lw) = metadata_lw();
        t.push(FakeResponse::status(403, "Forbidden", "no"));
        let out = Rc::new(RefCell::new(None));
        let (o, fut) = (out.clone(), lw.list(ListParams::default()));
        spawn_local(async move {
            *o.borrow_mut() = Some(fut.await.map(|_| ()).map_err(|e| e.code()));
        });
        run_until_stalled();
        assert_eq!(*out.borrow(), Some(Err(Some(403))));
        assert_eq!(t.request_count(), 1);
        assert!(!lw.metadata_only_refused());
    }
}
