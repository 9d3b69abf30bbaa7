//! [`Api`]: one resource plus a namespace scope, the only place request
//! paths are built (as kube-rs's `Api<K>`), and every verb on it.
//!
//! Scope rules, the same from Rust and from TypeScript:
//! * a namespaced resource needs a namespace for named verbs (get, replace,
//!   patch, delete, subresources) and for create; without one the request
//!   fails before it is sent, with an `Invalid` error;
//! * list, watch and delete-collection without a namespace cover every
//!   namespace;
//! * a cluster-scoped resource ignores the namespace.

use std::rc::Rc;

use serde::Serialize;

use super::pager::{list_all, ListAll};
use super::resource::ApiResource;
use crate::rest::{
    Client, DeleteParams, Error, KubeObject, ListParams, ObjectList, PatchParams, PatchType,
    PostParams, Request, Status, WatchParams, WatchStream,
};

/// One resource in one namespace, or across all of them (or cluster-scoped).
#[derive(Clone, Debug)]
pub struct Api {
    client: Client,
    resource: Rc<ApiResource>,
    namespace: Option<String>,
}

/// What a DELETE answered.
#[derive(Clone, Debug)]
pub enum Deleted {
    /// The object the server returned: while deletion is pending (graceful
    /// deletion, finalizers) it still exists with `deletionTimestamp` set;
    /// some resources (pods, persistent volumes) return their final state.
    Object(KubeObject),
    /// Deleted at once: the server's `Status` (`status: "Success"`).
    Status(Status),
}

fn json_body<T: Serialize + ?Sized>(body: &T) -> Result<Vec<u8>, Error> {
    serde_json::to_vec(body)
        .map_err(|e| Error::invalid_request(format!("body is not serializable: {e}")))
}

impl Api {
    /// `resource` across all namespaces (or cluster-scoped).
    pub fn all(client: Client, resource: ApiResource) -> Self {
        Api {
            client,
            resource: Rc::new(resource),
            namespace: None,
        }
    }

    /// `resource` in `namespace` (empty: all namespaces; ignored for a
    /// cluster-scoped resource).
    pub fn namespaced(client: Client, resource: ApiResource, namespace: &str) -> Self {
        Api::all(client, resource).in_namespace(namespace)
    }

    /// The same resource in `namespace` (empty: all namespaces).
    #[must_use]
    pub fn in_namespace(&self, namespace: &str) -> Self {
        Api {
            namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
            ..self.clone()
        }
    }

    /// The same resource across all namespaces.
    #[must_use]
    pub fn all_namespaces(&self) -> Self {
        Api {
            namespace: None,
            ..self.clone()
        }
    }

    /// The resource addressed.
    pub fn resource(&self) -> &ApiResource {
        &self.resource
    }

    /// The client requests go through.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The namespace requests go to: `None` across all namespaces and for a
    /// cluster-scoped resource.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace
            .as_deref()
            .filter(|_| self.resource.namespaced)
    }

    /// A request to the collection (list, watch, delete-collection) with
    /// `method`'s verb: one namespace, or all of them.
    pub fn collection_request(&self, method: Request) -> Request {
        method
            .group_version(&self.resource.group, &self.resource.version)
            .namespace_opt(self.namespace())
            .resource(&self.resource.plural)
    }

    /// A create (`POST` to the collection): a namespaced resource needs a
    /// namespace.
    pub fn create_request(&self) -> Result<Request, Error> {
        self.require_namespace("create")?;
        Ok(self.collection_request(Request::post()))
    }

    /// A request to one object (`sub` empty) or its subresource: a
    /// namespaced resource needs a namespace, and the name must be a valid
    /// path segment.
    pub fn object_request(&self, method: Request, name: &str, sub: &str) -> Result<Request, Error> {
        if name.is_empty() {
            // An empty name would address the whole collection.
            return Err(Error::invalid_request(format!(
                "{}: the name must not be empty",
                self.resource.plural
            )));
        }
        self.require_namespace(&format!("{name:?}"))?;
        let req = self.collection_request(method).name(name);
        Ok(if sub.is_empty() {
            req
        } else {
            req.subresource(sub)
        })
    }

    fn require_namespace(&self, what: &str) -> Result<(), Error> {
        if self.resource.namespaced && self.namespace.is_none() {
            return Err(Error::invalid_request(format!(
                "{} is namespaced: {what} needs a namespace",
                self.resource.plural
            )));
        }
        Ok(())
    }

    /// GET one object.
    pub async fn get(&self, name: &str) -> Result<KubeObject, Error> {
        self.get_subresource(name, "").await
    }

    /// LIST one page.
    pub async fn list(&self, params: &ListParams) -> Result<ObjectList, Error> {
        self.client
            .send_list(&self.collection_request(Request::get()).list_params(params))
            .await
    }

    /// LIST every page (pager rules PG-01..04, page size 500).
    pub async fn list_all(&self, params: &ListParams) -> Result<ListAll, Error> {
        let base = self.collection_request(Request::get());
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
        self.create_json(json_body(obj)?, params).await
    }

    /// [`create`](Self::create) with the body's JSON text already made (the
    /// TypeScript surface's `JSON.stringify`): no serializer for it.
    pub(crate) async fn create_json(
        &self,
        body: Vec<u8>,
        params: &PostParams,
    ) -> Result<KubeObject, Error> {
        let req = self
            .create_request()?
            .post_params(params)
            .body(body, "application/json");
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

    /// DELETE one object: the object while its deletion is pending (or as
    /// the server returned it), or the `Status` of an immediate deletion.
    pub async fn delete(&self, name: &str, params: &DeleteParams) -> Result<Deleted, Error> {
        let req = self
            .object_request(Request::delete(), name, "")?
            .delete_params(params);
        let body = self.client.send_bytes(&req).await?;
        match Status::from_body(&body) {
            // Any status but `Success` is an error, whatever the HTTP code
            // (client-go's `Result.Into`).
            Some(s) if s.status != "Success" => Err(Error::from_status(s)),
            Some(s) => Ok(Deleted::Status(s)),
            None => KubeObject::from_json_vec(body).map(Deleted::Object),
        }
    }

    /// DELETE every object matching the list selectors. A namespaced
    /// resource needs a namespace: the API server has no deletecollection
    /// across namespaces (405).
    pub async fn delete_collection(
        &self,
        list: &ListParams,
        params: &DeleteParams,
    ) -> Result<ObjectList, Error> {
        self.require_namespace("deleteCollection")?;
        let req = self
            .collection_request(Request::delete())
            .list_params(list)
            .delete_params(params);
        self.client.send_list(&req).await
    }

    /// WATCH.
    pub async fn watch(&self, params: &WatchParams) -> Result<WatchStream, Error> {
        self.client
            .watch(&self.collection_request(Request::get()).watch_params(params))
            .await
    }

    /// GET a subresource (`status`, `scale`; `""`: the object itself).
    pub async fn get_subresource(&self, name: &str, sub: &str) -> Result<KubeObject, Error> {
        self.get_at(name, sub, None).await
    }

    /// GET a subresource (`""`: the object itself) at `resource_version`
    /// (client-go's `GetOptions.ResourceVersion`: `"0"` lets the server
    /// answer from its cache; `None` reads the latest).
    pub async fn get_at(
        &self,
        name: &str,
        sub: &str,
        resource_version: Option<&str>,
    ) -> Result<KubeObject, Error> {
        let mut req = self.object_request(Request::get(), name, sub)?;
        if let Some(rv) = resource_version {
            req = req.query("resourceVersion", rv);
        }
        self.client.send_object(&req).await
    }

    /// PUT a subresource (`""`: the object itself).
    pub async fn replace_subresource<T: Serialize + ?Sized>(
        &self,
        name: &str,
        sub: &str,
        obj: &T,
        params: &PostParams,
    ) -> Result<KubeObject, Error> {
        self.replace_json(name, sub, json_body(obj)?, params).await
    }

    /// [`replace_subresource`](Self::replace_subresource) with the body's
    /// JSON text already made.
    pub(crate) async fn replace_json(
        &self,
        name: &str,
        sub: &str,
        body: Vec<u8>,
        params: &PostParams,
    ) -> Result<KubeObject, Error> {
        let req = self
            .object_request(Request::put(), name, sub)?
            .post_params(params)
            .body(body, "application/json");
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
        self.patch_json(name, sub, json_body(patch)?, kind, params)
            .await
    }

    /// [`patch_subresource`](Self::patch_subresource) with the patch's JSON
    /// text already made.
    pub(crate) async fn patch_json(
        &self,
        name: &str,
        sub: &str,
        body: Vec<u8>,
        kind: PatchType,
        params: &PatchParams,
    ) -> Result<KubeObject, Error> {
        params.validate(kind)?;
        let req = self
            .object_request(Request::patch(), name, sub)?
            .patch_params(params, kind)
            .body(body, kind.content_type());
        self.client.send_object(&req).await
    }
}
