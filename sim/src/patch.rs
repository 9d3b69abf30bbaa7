//! JSON merge patch (RFC 7386) and JSON patch (RFC 6902).

use serde_json::Value;

pub fn merge(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
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
        other => *target = other.clone(),
    }
}

fn unescape(tok: &str) -> String {
    tok.replace("~1", "/").replace("~0", "~")
}

fn parent_and_key<'a>(doc: &'a mut Value, path: &str) -> Result<(&'a mut Value, String), String> {
    let mut toks: Vec<String> = path.split('/').skip(1).map(unescape).collect();
    let last = toks.pop().ok_or_else(|| format!("bad path {path:?}"))?;
    let mut cur = doc;
    for t in toks {
        cur = match cur {
            Value::Object(m) => m
                .get_mut(&t)
                .ok_or_else(|| format!("path {path:?} not found"))?,
            Value::Array(a) => {
                let i: usize = t.parse().map_err(|_| format!("bad index in {path:?}"))?;
                a.get_mut(i)
                    .ok_or_else(|| format!("index out of range in {path:?}"))?
            }
            _ => return Err(format!("path {path:?} not found")),
        };
    }
    Ok((cur, last))
}

pub fn json_patch(doc: &mut Value, ops: &Value) -> Result<(), String> {
    let ops = ops.as_array().ok_or("JSON patch must be an array")?;
    for op in ops {
        let kind = op.get("op").and_then(Value::as_str).ok_or("op missing")?;
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or("path missing")?;
        let value = op.get("value").cloned();
        match kind {
            "add" | "replace" => {
                let v = value.ok_or("value missing")?;
                let (parent, key) = parent_and_key(doc, path)?;
                match parent {
                    Value::Object(m) => {
                        if kind == "replace" && !m.contains_key(&key) {
                            return Err(format!("path {path:?} not found"));
                        }
                        m.insert(key, v);
                    }
                    Value::Array(a) => {
                        if key == "-" {
                            a.push(v);
                        } else {
                            let i: usize = key.parse().map_err(|_| "bad index")?;
                            if kind == "replace" {
                                *a.get_mut(i).ok_or("index out of range")? = v;
                            } else if i <= a.len() {
                                a.insert(i, v);
                            } else {
                                return Err("index out of range".into());
                            }
                        }
                    }
                    _ => return Err(format!("path {path:?} not found")),
                }
            }
            "remove" => {
                let (parent, key) = parent_and_key(doc, path)?;
                let removed = match parent {
                    Value::Object(m) => m.remove(&key).is_some(),
                    Value::Array(a) => match key.parse::<usize>() {
                        Ok(i) if i < a.len() => {
                            a.remove(i);
                            true
                        }
                        _ => false,
                    },
                    _ => false,
                };
                if !removed {
                    return Err(format!("path {path:?} not found"));
                }
            }
            "test" => {
                let want = value.ok_or("value missing")?;
                if doc.pointer(path) != Some(&want) {
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
    fn merge_and_json_patch() {
        let mut d = json!({"a": 1, "b": {"c": 2, "d": 3}});
        merge(&mut d, &json!({"b": {"c": null, "e": 4}, "f": [1]}));
        assert_eq!(d, json!({"a": 1, "b": {"d": 3, "e": 4}, "f": [1]}));
        json_patch(&mut d, &json!([{"op": "replace", "path": "/a", "value": 9}, {"op": "add", "path": "/f/-", "value": 2}, {"op": "remove", "path": "/b/d"}])).unwrap();
        assert_eq!(d, json!({"a": 9, "b": {"e": 4}, "f": [1, 2]}));
        assert!(json_patch(&mut d, &json!([{"op": "test", "path": "/a", "value": 1}])).is_err());
    }
}
