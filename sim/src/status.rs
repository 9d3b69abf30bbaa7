//! `Status` error objects, the way the API server writes them.

use serde_json::{json, Value};

/// An API error: becomes a `Status` body with this HTTP code.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// The Status reason (NotFound, AlreadyExists, Conflict, Expired, ...).
    pub reason: &'static str,
    /// Human-readable message.
    pub message: String,
    /// `details` (name, group, kind, retryAfterSeconds).
    pub details: Value,
    /// `metadata` (a `ListMeta`: an expired continue token's replacement).
    pub metadata: Value,
}

impl ApiError {
    /// An error with empty details.
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: json!({}),
            metadata: json!({}),
        }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message)
    }

    /// 404 NotFound for an object.
    pub fn not_found(group: &str, plural: &str, name: &str) -> ApiError {
        ApiError::new(404, "NotFound", format!("{plural} \"{name}\" not found"))
            .with_details(group, plural, name)
    }

    /// 410 Expired.
    pub fn expired(message: impl Into<String>) -> ApiError {
        ApiError::new(410, "Expired", message)
    }

    /// Attach `details.{name,group,kind}` as the API server does.
    pub fn with_details(mut self, group: &str, plural: &str, name: &str) -> ApiError {
        self.details = json!({"name": name, "group": group, "kind": plural});
        self
    }

    /// The Status object.
    pub fn to_value(&self) -> Value {
        let mut v = status_value(self.code, self.reason, &self.message, self.details.clone());
        v["metadata"] = self.metadata.clone();
        v
    }

    /// The Status object, serialized.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.to_value()).unwrap_or_default()
    }
}

/// A failure `Status` object.
pub fn status_value(code: u16, reason: &str, message: &str, details: Value) -> Value {
    json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "details": details, "code": code
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_shape() {
        let v = ApiError::not_found("apps", "deployments", "web").to_value();
        assert_eq!(v["kind"], "Status");
        assert_eq!(v["status"], "Failure");
        assert_eq!(v["code"], 404);
        assert_eq!(v["reason"], "NotFound");
        assert_eq!(v["details"]["kind"], "deployments");
        assert_eq!(v["details"]["group"], "apps");
        assert_eq!(v["message"], "deployments \"web\" not found");
    }
}
