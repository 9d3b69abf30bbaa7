//! Patches: JSON merge patch (RFC 7386), a strategic merge patch that merges
//! the well-known lists of Kubernetes objects by their merge keys, and JSON
//! patch (RFC 6902). Server-side apply is served as a strategic merge of the
//! applied configuration (no field ownership tracking).

use serde_json::Value;

/// RFC 7386: objects merge recursively, `null` deletes, anything else replaces.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    if let Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// The merge key of a list field, as Kubernetes' struct tags declare it.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "containerStatuses"
        | "initContainerStatuses" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "ports" => "containerPort",
        "conditions" => "type",
        "ownerReferences" => "uid",
        "hostAliases" => "ip",
        _ => return None,
    })
}

/// Strategic merge: like [`merge`], but lists with a merge key merge element
/// by element (`"$patch": "delete"` removes one), and `$patch: replace` on an
/// object replaces it.
pub fn strategic(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut clean = p.clone();
        clean.remove("$patch");
        *target = Value::Object(clean);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    let Value::Object(t) = target else { return };
    for (k, v) in p {
        if k.starts_with("$") {
            continue;
        }
        match (v, merge_key(k), t.get_mut(k)) {
            (Value::Null, _, _) => {
                t.remove(k);
            }
            (Value::Array(items), Some(key), Some(Value::Array(existing))) => {
                merge_list(existing, items, key);
            }
            (Value::Array(items), Some(_), _) => {
                let kept: Vec<Value> = items
                    .iter()
                    .filter(|i| i.get("$patch").and_then(Value::as_str) != Some("delete"))
                    .cloned()
                    .collect();
                t.insert(k.clone(), Value::Array(kept));
            }
            (_, _, Some(slot)) => strategic(slot, v),
            (_, _, None) => {
                let mut fresh = Value::Null;
                strategic(&mut fresh, v);
                t.insert(k.clone(), fresh);
            }
        }
    }
}

fn merge_list(existing: &mut Vec<Value>, items: &[Value], key: &str) {
    for item in items {
        let id = item.get(key);
        let pos = id.and_then(|id| existing.iter().position(|e| e.get(key) == Some(id)));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (pos, delete) {
            (Some(i), true) => {
                existing.remove(i);
            }
            (Some(i), false) => {
                if let Some(e) = existing.get_mut(i) {
                    strategic(e, item);
                }
            }
            (None, true) => {}
            (None, false) => existing.push(item.clone()),
        }
    }
}

fn unescape(tok: &str) -> String {
    tok.replace("~1", "/").replace("~0", "~")
}

fn tokens(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let rest = path
        .strip_prefix('/')
        .ok_or_else(|| format!("path {path:?} must start with /"))?;
    Ok(rest.split('/').map(unescape).collect())
}

fn walk<'a>(doc: &'a mut Value, toks: &[String], path: &str) -> Result<&'a mut Value, String> {
    let mut cur = doc;
    for t in toks {
        cur = match cur {
            Value::Object(m) => m.get_mut(t),
            Value::Array(a) => t.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| format!("path {path:?} not found"))?;
    }
    Ok(cur)
}

fn add(doc: &mut Value, path: &str, v: Value, replace: bool) -> Result<(), String> {
    let toks = tokens(path)?;
    let Some((last, parents)) = toks.split_last() else {
        *doc = v;
        return Ok(());
    };
    match walk(doc, parents, path)? {
        Value::Object(m) => {
            if replace && !m.contains_key(last) {
                return Err(format!("path {path:?} not found"));
            }
            m.insert(last.clone(), v);
        }
        Value::Array(a) => {
            if last == "-" && !replace {
                a.push(v);
            } else {
                let i: usize = last
                    .parse()
                    .map_err(|_| format!("bad array index in {path:?}"))?;
                if replace {
                    *a.get_mut(i)
                        .ok_or_else(|| format!("index out of range in {path:?}"))? = v;
                } else if i <= a.len() {
                    a.insert(i, v);
                } else {
                    return Err(format!("index out of range in {path:?}"));
                }
            }
        }
        _ => return Err(format!("path {path:?} not found")),
    }
    Ok(())
}

fn remove(doc: &mut Value, path: &str) -> Result<Value, String> {
    let toks = tokens(path)?;
    let Some((last, parents)) = toks.split_last() else {
        return Err("cannot remove the whole document".into());
    };
    let removed = match walk(doc, parents, path)? {
        Value::Object(m) => m.remove(last),
        Value::Array(a) => match last.parse::<usize>() {
            Ok(i) if i < a.len() => Some(a.remove(i)),
            _ => None,
        },
        _ => None,
    };
    removed.ok_or_else(|| format!("path {path:?} not found"))
}

/// RFC 6902: add, remove, replace, move, copy, test. Any failure leaves
/// the caller's document unusable, so the caller patches a copy.
pub fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops
        .as_array()
        .ok_or("a JSON patch must be an array of operations")?;
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).ok_or("op missing")?;
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or("path missing")?;
        let value = || op.get("value").cloned().ok_or("value missing");
        let from = || op.get("from").and_then(Value::as_str).ok_or("from missing");
        match kind {
            "add" => add(doc, path, value()?, false)?,
            "replace" => add(doc, path, value()?, true)?,
            "remove" => {
                remove(doc, path)?;
            }
            "move" => {
                let v = remove(doc, from()?)?;
                add(doc, path, v, false)?;
            }
            "copy" => {
                let v = doc
                    .pointer(from()?)
                    .cloned()
                    .ok_or_else(|| format!("path {:?} not found", op["from"]))?;
                add(doc, path, v, false)?;
            }
            "test" => {
                if doc.pointer(path) != Some(&value()?) {
                    return Err(format!("test failed at {path:?}"));
                }
            }
            other => return Err(format!("unsupported op {other:?}")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_patch_rfc7386() {
        let mut d = json!({"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2]});
        merge(
            &mut d,
            &json!({"b": {"c": null, "e": 4}, "f": [1], "l": [3]}),
        );
        assert_eq!(
            d,
            json!({"a": 1, "b": {"d": 3, "e": 4}, "f": [1], "l": [3]})
        );
        merge(&mut d, &json!("scalar"));
        assert_eq!(d, json!("scalar"));
    }

    #[test]
    fn strategic_merges_lists_by_key() {
        let mut pod = json!({"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}], "tolerations": [{"key": "t"}]}});
        strategic(
            &mut pod,
            &json!({"spec": {"containers": [{"name": "b", "image": "y:2"}, {"name": "c", "image": "z"}, {"name": "a", "$patch": "delete"}], "tolerations": [{"key": "u"}]}}),
        );
        assert_eq!(
            pod["spec"]["containers"],
            json!([{"name": "b", "image": "y:2"}, {"name": "c", "image": "z"}])
        );
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([{"key": "u"}]),
            "no merge key: replaced"
        );
        strategic(
            &mut pod,
            &json!({"metadata": {"labels": {"x": "1"}}, "spec": {"$patch": "replace", "nodeName": "n"}}),
        );
        assert_eq!(pod["spec"], json!({"nodeName": "n"}));
        assert_eq!(pod["metadata"]["labels"]["x"], "1");
    }

    #[test]
    fn json_patch_rfc6902() {
        let mut d = json!({"a": 1, "b": {"c": 2}, "f": [1]});
        json_patch(
            &mut d,
            &json!([
                {"op": "replace", "path": "/a", "value": 9},
                {"op": "add", "path": "/f/-", "value": 2},
                {"op": "add", "path": "/f/0", "value": 0},
                {"op": "copy", "from": "/b", "path": "/g"},
                {"op": "move", "from": "/b/c", "path": "/h"},
                {"op": "add", "path": "/x~1y", "value": true},
                {"op": "test", "path": "/h", "value": 2}
            ]),
        )
        .unwrap();
        assert_eq!(
            d,
            json!({"a": 9, "b": {}, "f": [0, 1, 2], "g": {"c": 2}, "h": 2, "x/y": true})
        );
        for bad in [
            json!([{"op": "test", "path": "/a", "value": 1}]),
            json!([{"op": "remove", "path": "/nope"}]),
            json!([{"op": "replace", "path": "/nope", "value": 1}]),
            json!([{"op": "add", "path": "/f/9", "value": 1}]),
            json!([{"op": "add", "path": "nope", "value": 1}]),
            json!([{"op": "frobnicate", "path": "/a"}]),
            json!([{"op": "add", "path": "/a"}]),
            json!({"op": "add"}),
        ] {
            assert!(json_patch(&mut d.clone(), &bad).is_err(), "{bad}");
        }
    }
}
