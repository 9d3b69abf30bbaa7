//! The dynamic client: every verb on any resource, CRDs included, with
//! objects as [`KubeObject`]s (raw JSON + parsed metadata).

use serde::Serialize;

use super::pager::{list_all, ListAll};
use super::resource::ApiResource;
use crate::rest::{
    Client, DeleteParams, Error, KubeObject, ListParams, ObjectList, PatchParams, PatchType,
    PostParams, Request, WatchParams, WatchStream,
};

/// A client for one resource, in one namespace or across all of them.
#[derive(Clone, Debug)]
pub struct DynamicClient {
    client: Client,
    resource: ApiResource,
    namespace: Option<String>,
}

fn json_body<T: Serialize + ?Sized>(body: &T) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(body)
        .map_err(|e| Error::invalid_request(format!("body is not serializable: {e}")))
}

impl DynamicClient {
    /// Address `resource` across all namespaces (or cluster-scoped).
    pub fn new(client: Client, resource: ApiResource) -> Self {
        DynamicClient {
            client,
            resource,
            namespace: None,
        }
    }

    /// The same resource in `namespace`.
    pub fn namespaced(&self, namespace: impl Into<String>) -> Self {
        DynamicClient {
            namespace: Some(namespace.into()).filter(|n: &String| !n.is_empty()),
            ..self.clone()
        }
    }

    /// The resource addressed.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    fn req(&self, r: Request, name: Option<&str>) -> Result<Request, Error> {
        if name.is_some() && self.resource.namespaced && self.namespace.is_none() {
            return Err(Error::invalid_request(format!(
                "{} is namespaced: set a namespace",
                self.resource.plural
            )));
        }
        let ns = if self.resource.namespaced {
            self.namespace.as_deref()
        } else {
            None
        };
        let r = r
            .group_version(&self.resource.group, &self.resource.version)
            .namespace_opt(ns)
            .resource(&self.resource.plural);
        Ok(match name {
            Some(n) => r.name(n),
            None => r,
        })
    }

    /// A request for one object, or its subresource when `sub` is not empty.
    fn named(&self, r: Request, name: &str, sub: &str) -> Result<Request, Error> {
        let r = self.req(r, Some(name))?;
        Ok(if sub.is_empty() {
            r
        } else {
            r.subresource(sub)
        })
    }

    /// GET one object.
    pub async fn get(&self, name: &str) -> Result<KubeObject, Error> {
        self.client
            .send_object(&self.req(Request::get(), Some(name))?)
            .await
    }

    /// LIST one page.
    pub async fn list(&self, params: &ListParams) -> Result<ObjectList, Error> {
        self.client
            .send_list(&self.req(Request::get(), None)?.list_params(params))
            .await
    }

    /// LIST every page (pager rules PG-01..04, page size 500).
    pub async fn list_all(&self, params: &ListParams) -> Result<ListAll, Error> {
        let base = self.req(Request::get(), None)?;
        let client = self.client.clone();
        list_all(500, params.clone(), move |p| {
            let req = base.clone().list_params(&p);
            let client = client.clone();
            async move { client.send_list(&req).await }
        })
        .await
    }

    /// POST a new object.
    pub async fn create<T: Serialize + ?Sized>(
        &self,
        obj: &T,
        params: &PostParams,
    ) -> Result<KubeObject, Error> {
        let req = self
            .req(Request::post(), None)?
            .post_params(params)
            .body(json_body(obj)?, "application/json");
        self.client.send_object(&req).await
    }

    /// PUT a whole object (a stale `metadata.resourceVersion` is a 409 Conflict).
    pub async fn replace<T: Serialize + ?Sized>(
        &self,
        name: &str,
        obj: &T,
        params: &PostParams,
    ) -> Result<KubeObject, Error> {
        self.replace_subresource(name, "", obj, params).await
    }

    /// PATCH with any of the four patch types.
    pub async fn patch<T: Serialize + ?Sized>(
        &self,
        name: &str,
        patch: &T,
        kind: PatchType,
        params: &PatchParams,
    ) -> Result<KubeObject, Error> {
        self.patch_subresource(name, "", patch, kind, params).await
    }

    /// DELETE; returns what the server answered (the object, or a Status).
    pub async fn delete(&self, name: &str, params: &DeleteParams) -> Result<KubeObject, Error> {
        self.client
            .send_object(
                &self
                    .req(Request::delete(), Some(name))?
                    .delete_params(params),
            )
            .await
    }

    /// DELETE every object matching the list selectors.
    pub async fn delete_collection(
        &self,
        list: &ListParams,
        params: &DeleteParams,
    ) -> Result<ObjectList, Error> {
        let req = self
            .req(Request::delete(), None)?
            .list_params(list)
            .delete_params(params);
        self.client.send_list(&req).await
    }

    /// WATCH.
    pub async fn watch(&self, params: &WatchParams) -> Result<WatchStream, Error> {
        self.client
            .watch(&self.req(Request::get(), None)?.watch_params(params))
            .await
    }

    /// GET a subresource (`status`, `scale`).
    pub async fn get_subresource(&self, name: &str, sub: &str) -> Result<KubeObject, Error> {
        self.client
            .send_object(&self.req(Request::get(), Some(name))?.subresource(sub))
            .await
    }

    /// PUT a subresource (`""`: the object itself).
    pub async fn replace_subresource<T: Serialize + ?Sized>(
        &self,
        name: &str,
        sub: &str,
        obj: &T,
        params: &PostParams,
    ) -> Result<KubeObject, Error> {
        let req = self
            .named(Request::put(), name, sub)?
            .post_params(params)
            .body(json_body(obj)?, "application/json");
        self.client.send_object(&req).await
    }

    /// PATCH a subresource (`""`: the object itself).
    pub async fn patch_subresource<T: Serialize + ?Sized>(
        &self,
        name: &str,
        sub: &str,
        patch: &T,
        kind: PatchType,
        params: &PatchParams,
    ) -> Result<KubeObject, Error> {
        params.validate(kind)?;
        let req = self
            .named(Request::patch(), name, sub)?
            .patch_params(params, kind)
            .body(json_body(patch)?, kind.content_type());
        self.client.send_object(&req).await
    }
}
