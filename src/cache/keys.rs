//! Object keys: `namespace/name`, or `name` for cluster-scoped objects
//! (client-go's `MetaNamespaceKeyFunc`), tombstones, and key splitting.

use std::fmt;

use crate::rest::KubeObject;

/// A cached object, or the tombstone client-go calls
/// `DeletedFinalStateUnknown`: a delete that was inferred during a relist, so
/// the final state is unknown and the last known object (if any) is attached.
#[derive(Clone, Debug, PartialEq)]
pub enum DeltaObject {
    /// A real object.
    Object(KubeObject),
    /// An inferred deletion.
    Tombstone(Tombstone),
}

/// `DeletedFinalStateUnknown`: the key and the last state the cache knew.
#[derive(Clone, Debug, PartialEq)]
pub struct Tombstone {
    /// The object's key.
    pub key: String,
    /// The last known object (absent when the cache never had it).
    pub obj: Option<KubeObject>,
}

impl DeltaObject {
    /// The object itself, or the tombstone's last known object.
    pub fn object(&self) -> Option<&KubeObject> {
        match self {
            DeltaObject::Object(o) => Some(o),
            DeltaObject::Tombstone(t) => t.obj.as_ref(),
        }
    }

    /// The key, reading a tombstone's key verbatim (KF-02).
    pub fn key(&self) -> Result<String, KeyError> {
        match self {
            DeltaObject::Object(o) => object_key(o),
            DeltaObject::Tombstone(t) => Ok(t.key.clone()),
        }
    }
}

/// The key function failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyError {
    /// Why.
    pub message: String,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "couldn't create key for object: {}", self.message)
    }
}

impl std::error::Error for KeyError {}

/// `namespace/name`, or `name` when the object has no namespace (KF-01).
/// An object without a name cannot be keyed.
pub fn object_key(obj: &KubeObject) -> Result<String, KeyError> {
    let name = obj.name();
    if name.is_empty() {
        return Err(KeyError {
            message: "object has no metadata.name".into(),
        });
    }
    Ok(match obj.namespace() {
        Some(ns) => {
            let mut k = String::with_capacity(ns.len() + 1 + name.len());
            k.push_str(ns);
            k.push('/');
            k.push_str(name);
            k
        }
        None => name.to_owned(),
    })
}

/// [`object_key`] written into `buf` (cleared first), so a hot path can
/// reuse one buffer instead of allocating a key per call.
pub(crate) fn write_object_key(obj: &KubeObject, buf: &mut String) -> Result<(), KeyError> {
    let name = obj.name();
    if name.is_empty() {
        return object_key(obj).map(drop);
    }
    buf.clear();
    if let Some(ns) = obj.namespace() {
        buf.push_str(ns);
        buf.push('/');
    }
    buf.push_str(name);
    Ok(())
}

/// Split a key into `(namespace, name)` (KF-03): one part → cluster-scoped,
/// two parts → namespaced (empty parts allowed), more → an error.
pub fn split_key(key: &str) -> Result<(&str, &str), KeyError> {
    let mut parts = key.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, _) => Ok(("", name)),
        (Some(ns), Some(name), None) => Ok((ns, name)),
        _ => Err(KeyError {
            message: format!("unexpected key format: {key:?}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(ns: Option<&str>, name: &str) -> KubeObject {
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        KubeObject::from_value(&json!({"metadata": meta})).expect("valid")
    }

    #[test]
    fn kf_01_namespace_slash_name_or_name() {
        assert_eq!(object_key(&obj(Some("default"), "a")).unwrap(), "default/a");
        assert_eq!(object_key(&obj(None, "node1")).unwrap(), "node1");
        assert_eq!(object_key(&obj(Some(""), "node1")).unwrap(), "node1");
        assert!(object_key(&obj(None, "")).is_err());
    }

    #[test]
    fn kf_02_tombstone_key_is_verbatim() {
        let t = DeltaObject::Tombstone(Tombstone {
            key: "ns/gone".into(),
            obj: None,
        });
        assert_eq!(t.key().unwrap(), "ns/gone");
        let o = obj(Some("ns"), "x");
        let t2 = DeltaObject::Tombstone(Tombstone {
            key: object_key(&o).unwrap(),
            obj: Some(o.clone()),
        });
        assert_eq!(t2.key().unwrap(), DeltaObject::Object(o).key().unwrap());
    }

    #[test]
    fn kf_03_split_key() {
        assert_eq!(split_key("a").unwrap(), ("", "a"));
        assert_eq!(split_key("ns/a").unwrap(), ("ns", "a"));
        assert_eq!(split_key("/a").unwrap(), ("", "a"));
        let e = split_key("a/b/c").unwrap_err();
        assert!(e.message.contains("unexpected key format"), "{e}");
    }
}
