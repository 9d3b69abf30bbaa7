//! Discovery and kind ↔ resource mapping for JS: `KubeClient.discover()`,
//! `KubeClient.resourceFor()`, and `kind` in place of `resource` in options.

use js_sys::{Array, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::abort::{request_signal, unless_aborted, Signal};
use super::client::KubeClient;
use super::error::{from_rest, KubeErrorInit};
use super::options;
use super::promise::{future_to_promise, rejecting};
use crate::api::{builtin_resources, ApiResource, RestMapper};

/// How old a cached discovery must be for a miss to ask the server again.
const REFRESH_ON_MISS_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

#[wasm_bindgen(typescript_custom_section)]
const DISCOVERY_TS: &'static str = r#"
/** One resource the server offers (from discovery). */
export interface ApiResourceInfo {
  /** API group, `''` for the core group. */
  group: string;
  version: string;
  /** Plural name, the URL segment (`pods`). */
  resource: string;
  singular: string;
  kind: string;
  namespaced: boolean;
  /** Verbs the server allows (`list`, `watch`, …). */
  verbs: string[];
  /** kubectl short names (`po`, `deploy`). */
  shortNames: string[];
  /** Subresources (`status`, `scale`). */
  subresources: string[];
  /** Whether this is the group's preferred version. */
  preferred: boolean;
}

/** Options of `discover` and `resourceFor`. */
export interface DiscoveryOptions {
  /**
   * Stops waiting: the call rejects with a `KubeError` whose reason is `Aborted`. Discovery requests other
   * calls share go on for them.
   */
  signal?: AbortSignal | undefined;
}
"#;

#[wasm_bindgen]
impl KubeClient {
    /// Every resource the server offers, every served version (aggregated
    /// discovery, or the legacy documents on older servers). Cached for five
    /// minutes; see `invalidateDiscovery`.
    /// `signal` stops this call's wait (rejecting with `Aborted`); a request
    /// other callers share goes on for them.
    #[wasm_bindgen(unchecked_return_type = "Promise<ApiResourceInfo[]>")]
    pub fn discover(
        &self,
        #[wasm_bindgen(unchecked_param_type = "DiscoveryOptions")] opts: JsValue,
    ) -> Promise {
        rejecting((|| {
            let signal = discovery_signal(&opts, "discover")?;
            let d = self.discovery().clone();
            let work = {
                let d = d.clone();
                async move {
                    let all = d.resources().await.map_err(|e| from_rest(&e))?;
                    Ok(all.iter().map(info_to_js).collect::<Array>().into())
                }
            };
            Ok(future_to_promise(unless_aborted_discovery(signal, d, work)))
        })())
    }

    /// Resolve what a user typed, as kubectl does: a plural, singular, short
    /// name or kind, case-insensitive, optionally qualified by `.group` or
    /// `.version.group` (`deploy`, `Deployment`, `deployments.apps`,
    /// `deployments.v1.apps`); the preferred version wins. A name the cached
    /// discovery lacks makes it ask the server again (once; not within 10 s of
    /// the last answer). Rejects with a `KubeError` (404, `NotFound`) when nothing matches.
    #[wasm_bindgen(js_name = resourceFor, unchecked_return_type = "Promise<ApiResourceInfo>")]
    pub fn resource_for(
        &self,
        #[wasm_bindgen(unchecked_param_type = "string")] name: JsValue,
        #[wasm_bindgen(unchecked_param_type = "DiscoveryOptions")] opts: JsValue,
    ) -> Promise {
        rejecting((|| {
            let name = options::string_arg(&name, "name")?;
            let signal = discovery_signal(&opts, "resourceFor")?;
            let d = self.discovery().clone();
            let d2 = d.clone();
            Ok(future_to_promise(unless_aborted_discovery(
                signal,
                d2,
                async move {
                    let find = |all: &[ApiResource]| {
                        RestMapper::new(all.to_vec()).find(&name).map(info_to_js)
                    };
                    let mut all = d.resources().await.map_err(|e| from_rest(&e))?;
                    // A miss on a cached answer asks the server again once, as
                    // kubectl's deferred mapper does (a CRD installed since), but
                    // not within seconds of the last answer (a typo in a loop).
                    if find(&all).is_none()
                        && d.cached_age().is_some_and(|a| a >= REFRESH_ON_MISS_AFTER)
                    {
                        d.invalidate();
                        all = d.resources().await.map_err(|e| from_rest(&e))?;
                    }
                    match find(&all) {
                        Some(r) => Ok(r),
                        None => Err(KubeErrorInit {
                            message: format!("the server doesn't have a resource type {name:?}"),
                            code: 404,
                            reason: "NotFound".into(),
                            ..Default::default()
                        }
                        .into_js()),
                    }
                },
            )))
        })())
    }

    /// Forget cached discovery (after installing a CRD, say).
    #[wasm_bindgen(js_name = invalidateDiscovery)]
    pub fn invalidate_discovery(&self) {
        self.discovery().invalidate();
    }
}

/// `work` unless `signal` aborts first; a refresh nobody else waits for
/// then goes too (its request aborted, not left open).
async fn unless_aborted_discovery(
    signal: Option<Signal>,
    d: crate::api::Discovery,
    work: impl std::future::Future<Output = Result<JsValue, JsValue>>,
) -> Result<JsValue, JsValue> {
    let r = unless_aborted(signal, work).await;
    if r.is_err() {
        d.release_unwaited();
    }
    r
}

/// The `signal` of `discover` and `resourceFor` options (nothing else is taken).
fn discovery_signal(opts: &JsValue, what: &str) -> Result<Option<Signal>, JsValue> {
    options::known_members(opts, &["signal"], what)?;
    request_signal(opts)
}

fn info_to_js(r: &ApiResource) -> JsValue {
    let o = Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = Reflect::set(&o, &k.into(), &v);
    };
    let list = |v: &[String]| -> JsValue {
        v.iter()
            .map(|s| JsValue::from_str(s))
            .collect::<Array>()
            .into()
    };
    set("group", r.group.as_str().into());
    set("version", r.version.as_str().into());
    set("resource", r.plural.as_str().into());
    set("singular", r.singular.as_str().into());
    set("kind", r.kind.as_str().into());
    set("namespaced", r.namespaced.into());
    set("verbs", list(&r.verbs));
    set("shortNames", list(&r.short_names));
    set("subresources", list(&r.subresources));
    set("preferred", r.preferred.into());
    o.into()
}

/// The resource named by an options object (`ResourceRef`, informer
/// options): `group`, `version`, then `resource` (plural) or a built-in
/// `kind`. Its scope is `namespaced` when given, else the built-in table's,
/// else namespaced (most custom resources are).
pub(crate) fn api_resource(opts: &JsValue) -> Result<ApiResource, KubeErrorInit> {
    let group = options::string(opts, "group")?.unwrap_or_default();
    let version = options::string(opts, "version")?
        .ok_or_else(|| KubeErrorInit::invalid("`version` is required"))?;
    let namespaced = match options::prop(opts, "namespaced") {
        None => None,
        Some(v) => Some(
            v.as_bool()
                .ok_or_else(|| KubeErrorInit::invalid("option `namespaced` must be a boolean"))?,
        ),
    };
    let builtin = builtin_resources();
    let mut found = if let Some(plural) = options::string(opts, "resource")? {
        let known = builtin
            .into_iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural);
        // Both given (as `resourceFor`'s answer spread in): they must agree,
        // or the call would act on another resource than one of them says.
        if let (Some(r), Some(kind)) = (&known, options::string(opts, "kind")?) {
            if r.kind != kind {
                return Err(KubeErrorInit::invalid(format!(
                    "`kind` {kind:?} and `resource` {plural:?} disagree: {plural:?} holds {:?}; pass one of them",
                    r.kind
                )));
            }
        }
        known.unwrap_or_else(|| ApiResource::new(&group, &version, &plural, true))
    } else {
        let Some(kind) = options::string(opts, "kind")? else {
            return Err(KubeErrorInit::invalid(
                "`resource` (plural name) or `kind` is required",
            ));
        };
        let gv = if group.is_empty() {
            version.clone()
        } else {
            format!("{group}/{version}")
        };
        // A built-in kind in another group (`Deployment` without `apps`)
        // is the likely mistake: name the group it is in.
        let elsewhere = builtin
            .iter()
            .filter(|r| r.kind == kind && r.group != group)
            .map(|r| format!("group: '{}', version: '{}'", r.group, r.version))
            .next();
        RestMapper::new(builtin)
            .resource_for_gvk(&group, &version, &kind)
            .cloned()
            .ok_or_else(|| {
                KubeErrorInit::invalid(match elsewhere {
                    Some(at) => format!(
                        "{kind:?} is not in {gv:?}: the built-in kind is in {{ {at} }}; pass that group, or resolve the kind with `await client.resourceFor({kind:?})`"
                    ),
                    None => format!(
                        "{kind:?} in {gv:?} is not a built-in kind: resolve it with `await client.resourceFor({kind:?})` and pass `resource`"
                    ),
                })
            })?
    };
    if let Some(n) = namespaced {
        found.namespaced = n;
    }
    Ok(found)
}
