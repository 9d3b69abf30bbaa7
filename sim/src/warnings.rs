//! Warnings the API server attaches to writes, sent as `Warning: 299 - "…"`
//! headers (one per warning). The sim gives the Pod warnings of the API
//! server's pod strategy for deprecated node labels in `spec.nodeSelector`,
//! on every successful create, update and patch of a pod (dry runs too).

use serde_json::Value;

/// Node labels deprecated in favour of another, with the API server's text.
const DEPRECATED_NODE_LABELS: &[(&str, &str)] = &[
    (
        "beta.kubernetes.io/arch",
        r#"deprecated since v1.14; use "kubernetes.io/arch" instead"#,
    ),
    (
        "beta.kubernetes.io/os",
        r#"deprecated since v1.14; use "kubernetes.io/os" instead"#,
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        r#"deprecated since v1.17; use "topology.kubernetes.io/region" instead"#,
    ),
    (
        "failure-domain.beta.kubernetes.io/zone",
        r#"deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#,
    ),
];

/// The warnings of a pod as written, in the API server's wording.
pub fn pod_warnings(pod: &Value) -> Vec<String> {
    let Some(selector) = pod.pointer("/spec/nodeSelector").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut keys: Vec<&String> = selector.keys().collect();
    keys.sort();
    keys.into_iter()
        .filter_map(|k| {
            DEPRECATED_NODE_LABELS
                .iter()
                .find(|(label, _)| label == k)
                .map(|(_, msg)| format!("spec.nodeSelector[{k}]: {msg}"))
        })
        .collect()
}

/// A `Warning` header value: code 299, agent `-`, the text quoted with `"`
/// and `\` escaped (the API server's `NewWarningHeader`).
pub fn header_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str("299 - \"");
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        // Header values cannot carry line breaks or other control characters.
        out.push(if c.is_control() { ' ' } else { c });
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deprecated_node_labels_warn_in_the_api_server_format() {
        let pod = json!({"spec": {"nodeSelector": {"kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}}});
        let w = pod_warnings(&pod);
        assert_eq!(
            w,
            [
                r#"spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead"#
            ]
        );
        assert_eq!(
            header_value(&w[0]),
            r#"299 - "spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use \"kubernetes.io/arch\" instead""#
        );
        assert!(pod_warnings(&json!({"spec": {}})).is_empty());
        assert_eq!(header_value("a\\b\nc"), r#"299 - "a\\b c""#);
    }
}
