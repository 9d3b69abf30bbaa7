//! Metadata-only responses (`PartialObjectMetadata`), as the API server
//! gives them when the `Accept` header asks:
//! `application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io` for a
//! list, `…;as=PartialObjectMetadata;…` for a get or a watch (each event's
//! object). The media ranges are tried in order; one naming another `as`,
//! another group or version, or another media type is skipped, and when none
//! fits the answer is 406 NotAcceptable. Items keep their whole
//! `metadata` (managedFields included) and get
//! `apiVersion: meta.k8s.io/v1, kind: PartialObjectMetadata`.
//!
//! `/sim/faults` `partialMetadata` plays servers that do not serve it:
//! `ignore` skips every range with `as` (a server that does not know the
//! parameter: the plain `application/json` range wins), `refuse` answers
//! 406 to any `Accept` that names `as` (a strict proxy).

use serde_json::{json, Value};

use crate::status::ApiError;

/// How the response body is shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The objects as stored.
    Full,
    /// `PartialObjectMetadataList` (lists) or `PartialObjectMetadata`
    /// (a get, each watch event).
    Partial,
}

/// How the sim treats `as=` (the `partialMetadata` fault).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Support {
    /// As the API server does.
    #[default]
    Serve,
    /// As a server that does not know `as`.
    Ignore,
    /// 406 whenever `as` is asked for.
    Refuse,
}

impl Support {
    /// Parse the fault value.
    pub fn parse(s: &str) -> Result<Support, String> {
        match s {
            "serve" => Ok(Support::Serve),
            "ignore" => Ok(Support::Ignore),
            "refuse" => Ok(Support::Refuse),
            other => Err(format!(
                "partialMetadata must be serve, ignore or refuse, not {other:?}"
            )),
        }
    }

    /// The fault value.
    pub fn as_str(self) -> &'static str {
        match self {
            Support::Serve => "serve",
            Support::Ignore => "ignore",
            Support::Refuse => "refuse",
        }
    }
}

fn not_acceptable(msg: impl Into<String>) -> ApiError {
    ApiError::new(406, "NotAcceptable", msg)
}

/// The shape an `Accept` header asks for; `list` for a list request (a
/// get or a watch otherwise).
pub fn negotiate(accept: Option<&str>, list: bool, support: Support) -> Result<Shape, ApiError> {
    let Some(accept) = accept.map(str::trim).filter(|a| !a.is_empty()) else {
        return Ok(Shape::Full);
    };
    let wanted = if list {
        "PartialObjectMetadataList"
    } else {
        "PartialObjectMetadata"
    };
    if support == Support::Refuse && accept.split(';').any(|p| p.trim().starts_with("as=")) {
        return Err(not_acceptable(
            "only the following media types are accepted: application/json",
        ));
    }
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        if !matches!(media.as_str(), "application/json" | "application/*" | "*/*") {
            continue;
        }
        let (mut r#as, mut g, mut v) = (None, None, None);
        for p in parts {
            match p.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                Some(("as", x)) => r#as = Some(x),
                Some(("g", x)) => g = Some(x),
                Some(("v", x)) => v = Some(x),
                _ => {}
            }
        }
        let Some(target) = r#as else {
            return Ok(Shape::Full);
        };
        if support != Support::Serve {
            continue;
        }
        if target == wanted && g == Some("meta.k8s.io") && matches!(v, Some("v1" | "v1beta1")) {
            return Ok(Shape::Partial);
        }
    }
    Err(not_acceptable(format!(
        "none of the requested media types can be served (asked: {accept})"
    )))
}

/// One object as `PartialObjectMetadata` (its whole metadata).
pub fn object(bytes: &[u8]) -> Vec<u8> {
    let meta = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|mut v| v.get_mut("metadata").map(Value::take))
        .unwrap_or_else(|| json!({}));
    let mut out = Vec::with_capacity(bytes.len() / 2 + 64);
    out.extend_from_slice(
        br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":"#,
    );
    out.extend_from_slice(&serde_json::to_vec(&meta).unwrap_or_else(|_| b"{}".to_vec()));
    out.push(b'}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str =
        "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json";
    const ONE: &str =
        "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json";

    #[test]
    fn negotiation_follows_the_ranges_in_order() {
        use Shape::*;
        assert_eq!(negotiate(None, true, Support::Serve).unwrap(), Full);
        assert_eq!(
            negotiate(Some("application/json"), true, Support::Serve).unwrap(),
            Full
        );
        assert_eq!(
            negotiate(Some(LIST), true, Support::Serve).unwrap(),
            Partial
        );
        assert_eq!(
            negotiate(Some(ONE), false, Support::Serve).unwrap(),
            Partial
        );
        // The list form on a watch, the object form on a list: the fallback range.
        assert_eq!(negotiate(Some(LIST), false, Support::Serve).unwrap(), Full);
        assert_eq!(negotiate(Some(ONE), true, Support::Serve).unwrap(), Full);
        assert_eq!(
            negotiate(Some("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"), true, Support::Serve).unwrap(),
            Partial
        );
        let only = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
        assert_eq!(
            negotiate(Some(only), false, Support::Serve)
                .unwrap_err()
                .code,
            406
        );
        assert_eq!(
            negotiate(
                Some("application/json;as=Table;v=v1;g=meta.k8s.io"),
                true,
                Support::Serve
            )
            .unwrap_err()
            .code,
            406
        );
        assert_eq!(
            negotiate(
                Some("application/json;as=PartialObjectMetadataList;v=v2;g=meta.k8s.io"),
                true,
                Support::Serve
            )
            .unwrap_err()
            .code,
            406
        );
        // Servers that do not serve it.
        assert_eq!(negotiate(Some(LIST), true, Support::Ignore).unwrap(), Full);
        assert_eq!(
            negotiate(Some(only), true, Support::Ignore)
                .unwrap_err()
                .code,
            406
        );
        assert_eq!(
            negotiate(Some(LIST), true, Support::Refuse)
                .unwrap_err()
                .code,
            406
        );
        assert_eq!(
            negotiate(Some("application/json"), true, Support::Refuse).unwrap(),
            Full
        );
    }

    #[test]
    fn an_object_keeps_only_its_metadata() {
        let o = object(br#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","managedFields":[{"manager":"m"}]},"spec":{"x":1}}"#);
        let v: Value = serde_json::from_slice(&o).unwrap();
        assert_eq!(
            v,
            json!({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","managedFields":[{"manager":"m"}]}})
        );
    }
}
