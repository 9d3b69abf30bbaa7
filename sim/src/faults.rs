//! Fault injection, switched on by tests through `POST /sim/faults`.

use serde_json::{json, Map, Value};

/// The active fault set (replaced as a whole by each `POST /sim/faults`).
#[derive(Default, Clone, Debug, PartialEq)]
pub struct Faults {
    /// Write every response body in random 1..7-byte pieces.
    pub split_chunks: bool,
    /// The next watch stream gets one line of invalid JSON, then closes.
    pub malformed_line_once: bool,
    /// Each watch closes abruptly after this many events.
    pub drop_after_events: Option<u64>,
    /// The next N API requests answer 429.
    pub status429: u64,
    /// Retry-After of those 429s, in seconds.
    pub retry_after: u64,
    /// The next N API requests answer 500.
    pub status500: u64,
    /// Delay before response headers on API requests.
    pub latency_ms: u64,
    /// Seed of the random splits.
    pub seed: u64,
    /// WebSocket watches send binary frames instead of text frames.
    pub websocket_binary: bool,
    /// How `Accept: …;as=PartialObjectMetadata…` is treated (see partial.rs).
    pub partial_metadata: crate::partial::Support,
}

/// An error response a fault forces.
#[derive(Debug, PartialEq)]
pub enum Injected {
    /// 429 with this Retry-After.
    TooManyRequests(u64),
    /// 500.
    Internal,
}

const KEYS: &[&str] = &[
    "splitChunks",
    "malformedLineOnce",
    "dropWatchesAfterEvents",
    "status429",
    "status500",
    "latencyMs",
    "seed",
    "webSocketBinary",
    "partialMetadata",
];

fn uint(m: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| format!("{key} must be a non-negative integer")),
    }
}

fn boolean(m: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(v) => v
            .as_bool()
            .ok_or_else(|| format!("{key} must be a boolean")),
    }
}

impl Faults {
    /// Parse a `POST /sim/faults` body; unknown keys are an error so typos
    /// in tests do not silently test nothing.
    pub fn from_json(v: &Value) -> Result<Faults, String> {
        let Some(m) = v.as_object() else {
            return Err("the fault set must be a JSON object".into());
        };
        if let Some(k) = m.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!("unknown fault {k:?}; known: {}", KEYS.join(", ")));
        }
        let sub = |key: &str| -> Result<Map<String, Value>, String> {
            match m.get(key) {
                None | Some(Value::Null) => Ok(Map::new()),
                Some(Value::Object(o)) => Ok(o.clone()),
                Some(_) => Err(format!("{key} must be an object like {{\"count\": N}}")),
            }
        };
        let s429 = sub("status429")?;
        let s500 = sub("status500")?;
        Ok(Faults {
            split_chunks: boolean(m, "splitChunks")?,
            malformed_line_once: boolean(m, "malformedLineOnce")?,
            drop_after_events: uint(m, "dropWatchesAfterEvents")?,
            status429: uint(&s429, "count")?.unwrap_or(0),
            retry_after: uint(&s429, "retryAfterSeconds")?.unwrap_or(1),
            status500: uint(&s500, "count")?.unwrap_or(0),
            latency_ms: uint(m, "latencyMs")?.unwrap_or(0).min(600_000),
            seed: uint(m, "seed")?.unwrap_or(1),
            websocket_binary: boolean(m, "webSocketBinary")?,
            partial_metadata: match m.get("partialMetadata") {
                None | Some(Value::Null) => crate::partial::Support::default(),
                Some(Value::String(s)) => crate::partial::Support::parse(s)?,
                Some(_) => return Err("partialMetadata must be a string".into()),
            },
        })
    }

    /// The current set, for `GET /sim/faults`.
    pub fn to_json(&self) -> Value {
        json!({
            "splitChunks": self.split_chunks,
            "malformedLineOnce": self.malformed_line_once,
            "dropWatchesAfterEvents": self.drop_after_events,
            "status429": {"count": self.status429, "retryAfterSeconds": self.retry_after},
            "status500": {"count": self.status500},
            "latencyMs": self.latency_ms,
            "seed": self.seed,
            "webSocketBinary": self.websocket_binary,
            "partialMetadata": self.partial_metadata.as_str(),
        })
    }

    /// Consume one forced error, if any are left (429s first).
    pub fn take_error(&mut self) -> Option<Injected> {
        if self.status429 > 0 {
            self.status429 -= 1;
            Some(Injected::TooManyRequests(self.retry_after))
        } else if self.status500 > 0 {
            self.status500 -= 1;
            Some(Injected::Internal)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_count_down_and_reject() {
        let mut f = Faults::from_json(&json!({"status429": {"count": 1, "retryAfterSeconds": 3}, "status500": {"count": 1}, "splitChunks": true})).unwrap();
        assert!(f.split_chunks);
        assert_eq!(f.take_error(), Some(Injected::TooManyRequests(3)));
        assert_eq!(f.take_error(), Some(Injected::Internal));
        assert_eq!(f.take_error(), None);
        assert_eq!(
            Faults::from_json(&json!({})).unwrap(),
            Faults {
                seed: 1,
                retry_after: 1,
                ..Faults::default()
            }
        );
        for bad in [
            json!({"splitChunk": true}),
            json!({"latencyMs": -1}),
            json!({"status429": 3}),
            json!([1]),
        ] {
            assert!(Faults::from_json(&bad).is_err(), "{bad}");
        }
    }
}
