//! Lists: resourceVersion / resourceVersionMatch semantics, and pagination
//! with `limit` / `continue` over a consistent snapshot.
//!
//! A continue token is, as in the API server, base64url of a small JSON
//! document carrying the list's resourceVersion and the key to continue
//! after (plus the id of a cached snapshot, a shortcut). A page is served
//! from the cached snapshot when still held, else rebuilt from the history
//! at that resourceVersion; a token whose resourceVersion has left the
//! history, or that was issued before `/sim/compact`, is 410 Expired.
//! `remainingItemCount` is set when more pages follow and the list has no
//! selectors (the API server omits it for filtered lists).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::status::ApiError;
use crate::store::{too_large, Filter, Key, Obj, Store};

/// Snapshots kept for continue tokens (older ones are rebuilt from history).
const SNAPSHOT_CAP: usize = 64;

/// A materialized list result.
pub struct Snapshot {
    id: u64,
    rv: u64,
    res: usize,
    items: Arc<Vec<Obj>>,
}

/// The list parameters of a request.
#[derive(Default)]
pub struct ListRequest<'a> {
    /// What to list.
    pub filter: Filter,
    /// Page size (None = everything).
    pub limit: Option<usize>,
    /// The `continue` token.
    pub continue_token: Option<&'a str>,
    /// `resourceVersion`.
    pub resource_version: Option<&'a str>,
    /// `resourceVersionMatch`.
    pub rv_match: Option<&'a str>,
}

/// One page.
#[derive(Debug)]
pub struct Page {
    /// The list's resourceVersion (the snapshot's, on every page).
    pub rv: u64,
    /// The objects.
    pub items: Vec<Obj>,
    /// Token for the next page.
    pub continue_token: Option<String>,
    /// Items after this page (unfiltered lists only).
    pub remaining: Option<usize>,
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len() * 4 / 3 + 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | (u32::from(b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(B64[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn b64_decode(s: &str) -> Option<Vec<u8>> {
    let vals: Vec<u32> = s
        .trim_end_matches('=')
        .bytes()
        .map(|c| B64.iter().position(|&x| x == c).map(|p| p as u32))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(vals.len() * 3 / 4);
    for chunk in vals.chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &v)| acc | (v << (18 - 6 * i)));
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

struct Token {
    rv: u64,
    start: Key,
    snap: u64,
}

fn encode_token(rv: u64, start: &Key, snap: u64) -> String {
    let doc = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{}/{}", start.0, start.1), "snap": snap});
    b64_encode(doc.to_string().as_bytes())
}

fn decode_token(s: &str) -> Result<Token, ApiError> {
    let bad = || ApiError::bad_request(format!("continue key is not valid: {s:?}"));
    let doc: Value = b64_decode(s)
        .and_then(|b| serde_json::from_slice(&b).ok())
        .ok_or_else(bad)?;
    if doc["v"] != "meta.k8s.io/v1" {
        return Err(bad());
    }
    let start = doc["start"]
        .as_str()
        .and_then(|s| s.split_once('/'))
        .ok_or_else(bad)?;
    Ok(Token {
        rv: doc["rv"].as_u64().ok_or_else(bad)?,
        start: (start.0.to_string(), start.1.to_string()),
        snap: doc["snap"].as_u64().unwrap_or(0),
    })
}

/// The 410 for a continue token whose list can no longer be served. As the
/// API server does, it carries a token that continues after the same key at
/// the current state (resourceVersion 0 in the token: "the latest").
fn expired_continue(start: &Key) -> ApiError {
    let mut e = expired_continue_message();
    e.metadata = json!({"continue": encode_token(0, start, 0)});
    e
}

fn expired_continue_message() -> ApiError {
    ApiError::expired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
}

/// Where a page that continues after `start` begins.
fn after(items: &[Obj], start: &Key) -> usize {
    items.partition_point(|o| {
        (o.meta.namespace.as_str(), o.meta.name.as_str()) <= (start.0.as_str(), start.1.as_str())
    })
}

fn parse_rv(s: &str) -> Result<u64, ApiError> {
    s.parse::<u64>()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version {s:?}")))
}

impl Store {
    /// Serve one list request.
    pub fn list(&mut self, req: &ListRequest) -> Result<Page, ApiError> {
        let rv_param = req.resource_version.filter(|s| !s.is_empty());
        let (rv, items, snap, offset) = match req.continue_token.filter(|s| !s.is_empty()) {
            Some(token) => {
                if rv_param.is_some() || req.rv_match.is_some_and(|m| !m.is_empty()) {
                    return Err(ApiError::bad_request(
                        "specifying resource version is not allowed when using continue",
                    ));
                }
                let t = decode_token(token)?;
                if t.rv == 0 {
                    // A token handed out with a 410: the rest at the current state.
                    let items = Arc::new(self.items_at(self.rv, &req.filter)?);
                    let offset = after(&items, &t.start);
                    (self.rv, items, None, offset)
                } else {
                    if t.rv > self.rv {
                        return Err(expired_continue_message());
                    }
                    if t.snap < self.first_valid_snapshot || t.rv < self.oldest_rv {
                        return Err(expired_continue(&t.start));
                    }
                    let cached = self
                        .snapshots
                        .iter()
                        .find(|s| s.id == t.snap && s.rv == t.rv && s.res == req.filter.res)
                        .map(|s| s.items.clone());
                    let items = match cached {
                        Some(items) => items,
                        None => Arc::new(
                            self.items_at(t.rv, &req.filter)
                                .map_err(|_| expired_continue(&t.start))?,
                        ),
                    };
                    let offset = after(&items, &t.start);
                    (t.rv, items, Some(t.snap), offset)
                }
            }
            None => {
                let rv = self.resolve_rv(rv_param, req.rv_match)?;
                (rv, Arc::new(self.items_at(rv, &req.filter)?), None, 0)
            }
        };
        let from_cache = self.rv0_ignores_limit && snap.is_none() && rv_param == Some("0");
        let end = req
            .limit
            .filter(|_| !from_cache)
            .map_or(items.len(), |l| offset.saturating_add(l).min(items.len()));
        let page: Vec<Obj> = items.get(offset.min(end)..end).unwrap_or_default().to_vec();
        let mut continue_token = None;
        let mut remaining = None;
        if let Some(last) = page.last().filter(|_| end < items.len()) {
            let id = match snap {
                Some(id) => id,
                None => {
                    let id = self.next_snapshot;
                    self.next_snapshot += 1;
                    self.snapshots.push_back(Snapshot {
                        id,
                        rv,
                        res: req.filter.res,
                        items: items.clone(),
                    });
                    if self.snapshots.len() > SNAPSHOT_CAP {
                        self.snapshots.pop_front();
                    }
                    id
                }
            };
            continue_token = Some(encode_token(rv, &last.key(), id));
            if req.filter.labels.is_empty() && req.filter.fields.0.is_empty() {
                remaining = Some(items.len() - end);
            }
        }
        Ok(Page {
            rv,
            items: page,
            continue_token,
            remaining,
        })
    }

    /// The resourceVersion a fresh list is served at.
    fn resolve_rv(&self, rv: Option<&str>, rv_match: Option<&str>) -> Result<u64, ApiError> {
        let rv_match = rv_match.filter(|m| !m.is_empty());
        match (rv, rv_match) {
            (None, None) => Ok(self.rv),
            (None, Some(_)) => Err(ApiError::bad_request(
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            )),
            (Some(s), Some("Exact")) => {
                let n = parse_rv(s)?;
                if n == 0 {
                    return Err(ApiError::bad_request(
                        "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"0\"",
                    ));
                }
                Ok(n)
            }
            (Some(s), None | Some("NotOlderThan")) => {
                let n = parse_rv(s)?;
                if n > self.rv {
                    return Err(too_large(n, self.rv));
                }
                Ok(self.rv)
            }
            (Some(_), Some(other)) => Err(ApiError::bad_request(format!(
                "unsupported resourceVersionMatch {other:?}: supported values are \"Exact\", \"NotOlderThan\""
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::ids::CONFIGMAPS;
    use crate::selectors::LabelSelector;
    use crate::store::tests::{cm, store};

    fn filled(n: usize) -> Store {
        let mut s = store();
        for i in 0..n {
            let app = if i % 2 == 0 { "even" } else { "odd" };
            s.create(
                CONFIGMAPS,
                Some("ns"),
                cm(&format!("c{i:03}"), json!({"app": app})),
            )
            .unwrap();
        }
        s
    }

    fn names(p: &Page) -> Vec<String> {
        p.items.iter().map(|o| o.meta.name.clone()).collect()
    }

    fn page(s: &mut Store, limit: usize, token: Option<&str>) -> Result<Page, ApiError> {
        s.list(&ListRequest {
            filter: Filter::all(CONFIGMAPS),
            limit: Some(limit),
            continue_token: token,
            ..Default::default()
        })
    }

    #[test]
    fn b64_round_trip() {
        for s in ["", "a", "ab", "abc", "abcd", "{\"v\":\"x/\u{e9}\"}"] {
            assert_eq!(b64_decode(&b64_encode(s.as_bytes())).unwrap(), s.as_bytes());
        }
        assert!(b64_decode("a").is_none());
        assert!(b64_decode("!!").is_none());
    }

    #[test]
    fn pg_pages_cover_everything_once_in_order_with_remaining_count() {
        let mut s = filled(25);
        let rv0 = s.rv;
        let mut token: Option<String> = None;
        let mut all = Vec::new();
        let mut remaining = Vec::new();
        loop {
            let p = page(&mut s, 10, token.as_deref()).unwrap();
            assert_eq!(p.rv, rv0, "every page carries the snapshot RV");
            all.extend(names(&p));
            remaining.push(p.remaining);
            match p.continue_token {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        let want: Vec<_> = (0..25).map(|i| format!("c{i:03}")).collect();
        assert_eq!(all, want);
        assert_eq!(remaining, [Some(15), Some(5), None]);
    }

    #[test]
    fn pg_snapshot_is_consistent_across_later_writes_even_when_evicted() {
        let mut s = filled(6);
        let first = page(&mut s, 3, None).unwrap();
        let token = first.continue_token.unwrap();
        s.delete(CONFIGMAPS, "ns", "c004", None, None).unwrap();
        s.create(CONFIGMAPS, Some("ns"), cm("c003b", json!({})))
            .unwrap();
        let second = page(&mut s, 3, Some(&token)).unwrap();
        assert_eq!(names(&second), ["c003", "c004", "c005"]);
        s.snapshots.clear(); // rebuilt from history, same answer
        let again = page(&mut s, 3, Some(&token)).unwrap();
        assert_eq!(names(&again), ["c003", "c004", "c005"]);
        assert_eq!(again.rv, first.rv);
    }

    #[test]
    fn pg_continue_token_expires_on_compaction_even_without_writes() {
        let mut s = filled(4);
        let token = page(&mut s, 2, None).unwrap().continue_token.unwrap();
        s.compact();
        let err = page(&mut s, 2, Some(&token)).unwrap_err();
        assert_eq!((err.code, err.reason), (410, "Expired"));
        // Its replacement token goes on after the same key, at the current state.
        s.create(CONFIGMAPS, Some("ns"), cm("c001b", json!({})))
            .unwrap();
        let fresh = err.metadata["continue"]
            .as_str()
            .expect("a token")
            .to_string();
        let rest = page(&mut s, 10, Some(&fresh)).unwrap();
        assert_eq!(names(&rest), ["c001b", "c002", "c003"]);
        assert_eq!(rest.rv, s.rv);
        let mut s = filled(4);
        s.history_cap = 2;
        let token = page(&mut s, 2, None).unwrap().continue_token.unwrap();
        for i in 0..3 {
            s.create(CONFIGMAPS, Some("ns"), cm(&format!("n{i}"), json!({})))
                .unwrap();
        }
        assert_eq!(
            page(&mut s, 2, Some(&token)).unwrap_err().code,
            410,
            "history overflow"
        );
    }

    #[test]
    fn pg_bad_tokens_and_rv_with_continue_are_400() {
        let mut s = filled(4);
        for bad in [
            "garbage!",
            "e30",
            &b64_encode(b"{\"v\":\"meta.k8s.io/v1\"}"),
        ] {
            assert_eq!(page(&mut s, 2, Some(bad)).unwrap_err().code, 400, "{bad}");
        }
        let token = page(&mut s, 2, None).unwrap().continue_token.unwrap();
        let err = s
            .list(&ListRequest {
                filter: Filter::all(CONFIGMAPS),
                continue_token: Some(&token),
                resource_version: Some("0"),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(err.code, 400);
    }

    #[test]
    fn rv0_lists_ignore_the_limit_when_served_as_the_watch_cache_does() {
        let mut s = filled(5);
        let req = |rv| ListRequest {
            filter: Filter::all(CONFIGMAPS),
            limit: Some(2),
            resource_version: rv,
            ..Default::default()
        };
        assert_eq!(
            s.list(&req(Some("0"))).unwrap().items.len(),
            2,
            "off by default"
        );
        s.rv0_ignores_limit = true;
        let whole = s.list(&req(Some("0"))).unwrap();
        assert_eq!(whole.items.len(), 5);
        assert!(whole.continue_token.is_none());
        // Other resourceVersions still paginate.
        let p1 = s.list(&req(None)).unwrap();
        assert_eq!(p1.items.len(), 2);
        assert!(p1.continue_token.is_some());
    }

    #[test]
    fn pg_filtered_lists_page_without_remaining_count() {
        let mut s = filled(10);
        let req = |t| ListRequest {
            filter: Filter {
                labels: LabelSelector::parse("app=odd").unwrap(),
                ..Filter::all(CONFIGMAPS)
            },
            limit: Some(3),
            continue_token: t,
            ..Default::default()
        };
        let p1 = s.list(&req(None)).unwrap();
        assert_eq!(names(&p1), ["c001", "c003", "c005"]);
        assert_eq!(p1.remaining, None);
        let p2 = s.list(&req(p1.continue_token.as_deref())).unwrap();
        assert_eq!(names(&p2), ["c007", "c009"]);
        assert!(p2.continue_token.is_none());
    }

    #[test]
    fn rv_semantics_for_lists() {
        let mut s = filled(3);
        let old = s.rv;
        s.create(CONFIGMAPS, Some("ns"), cm("new", json!({})))
            .unwrap();
        let list = |s: &mut Store, rv: Option<&str>, m: Option<&str>| {
            s.list(&ListRequest {
                filter: Filter::all(CONFIGMAPS),
                resource_version: rv,
                rv_match: m,
                ..Default::default()
            })
        };
        let any = list(&mut s, Some("0"), None).unwrap();
        assert_eq!((any.rv, any.items.len()), (s.rv, 4), "RV 0: latest");
        let exact = list(&mut s, Some(&old.to_string()), Some("Exact")).unwrap();
        assert_eq!(
            (exact.rv, exact.items.len()),
            (old, 3),
            "Exact: the past state"
        );
        let not_older = list(&mut s, Some(&old.to_string()), Some("NotOlderThan")).unwrap();
        assert_eq!(not_older.rv, s.rv);
        let future = (s.rv + 5).to_string();
        assert_eq!(list(&mut s, Some(&future), None).unwrap_err().code, 504);
        assert_eq!(list(&mut s, None, Some("Exact")).unwrap_err().code, 400);
        assert_eq!(
            list(&mut s, Some("0"), Some("Exact")).unwrap_err().code,
            400
        );
        assert_eq!(list(&mut s, Some("x"), None).unwrap_err().code, 400);
        assert_eq!(
            list(&mut s, Some("1"), Some("Sometimes")).unwrap_err().code,
            400
        );
        s.compact();
        let err = list(&mut s, Some(&old.to_string()), Some("Exact")).unwrap_err();
        assert_eq!((err.code, err.reason), (410, "Expired"));
    }
}
