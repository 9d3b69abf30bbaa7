//! Response compression, as the API server's response writer does it (feature
//! gate `APIResponseCompression`, beta and on by default since Kubernetes
//! 1.16):
//!
//! - only a serialized API object is compressed: gets, lists, discovery, write
//!   answers and `Status` errors; watches and pod logs are streamed and never
//!   are;
//! - only when the body is larger than 128 KiB;
//! - only when the first `Accept-Encoding` header, split at commas, has a token
//!   that is exactly `gzip` once trimmed. There is no q-value parsing:
//!   `gzip;q=0.5` does not count, `*`, `x-gzip` and `GZIP` neither;
//! - gzip at level 1 (the API server's choice: the least CPU for a ratio close
//!   to the higher levels'), with `Content-Encoding: gzip` and
//!   `Vary: Accept-Encoding`. An uncompressed answer gets neither.

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::http::{Request, Response};

/// Bodies larger than this are compressed (the API server's
/// `defaultGzipThresholdBytes`).
pub const THRESHOLD: usize = 128 * 1024;

/// Whether the request accepts gzip, read the API server's way.
pub fn accepts_gzip(req: &Request) -> bool {
    req.header("accept-encoding")
        .is_some_and(|v| v.split(',').any(|token| token.trim() == "gzip"))
}

/// Gzip `resp` in place when the API server would; true when it did.
pub fn gzip(resp: &mut Response, req: &Request) -> bool {
    if resp.body.len() <= THRESHOLD || !accepts_gzip(req) {
        return false;
    }
    let mut enc = GzEncoder::new(Vec::with_capacity(resp.body.len() / 4), Compression::new(1));
    // Writing into a Vec cannot fail; were it to, the body goes as it is.
    let Ok(compressed) = enc.write_all(&resp.body).and_then(|()| enc.finish()) else {
        return false;
    };
    resp.body = compressed;
    resp.headers.push(("Content-Encoding", "gzip".into()));
    resp.headers.push(("Vary", "Accept-Encoding".into()));
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
    use std::io::Read;

    fn req(accept_encoding: &[&str]) -> Request {
        Request {
            method: "GET".into(),
            path: "/api/v1/pods".into(),
            headers: accept_encoding
                .iter()
                .map(|v| ("Accept-Encoding".to_string(), (*v).to_string()))
                .collect(),
            ..Request::default()
        }
    }

    #[test]
    fn gzip_is_picked_as_the_api_server_picks_it() {
        for yes in [
            &["gzip"][..],
            &["deflate, gzip"],
            &["br,gzip ,zstd"],
            &["  gzip  "],
            &["gzip, deflate, br, zstd"],
        ] {
            assert!(accepts_gzip(&req(yes)), "{yes:?}");
        }
        for no in [
            &[][..],
            &[""],
            &["identity"],
            &["gzip;q=1.0"],
            &["gzip;q=0.5, deflate"],
            &["x-gzip"],
            &["GZIP"],
            &["*"],
            // Only the first header counts.
            &["deflate", "gzip"],
        ] {
            assert!(!accepts_gzip(&req(no)), "{no:?}");
        }
    }

    #[test]
    fn only_bodies_over_the_threshold_are_compressed() {
        let body = |n: usize| -> Vec<u8> {
            let mut b = br#"{"kind":"PodList","items":["#.to_vec();
            while b.len() < n - 2 {
                b.push(b'1');
            }
            b.extend_from_slice(b"]}");
            b
        };
        let mut at = Response::json(200, body(THRESHOLD));
        assert!(!gzip(&mut at, &req(&["gzip"])));
        assert_eq!(at.body, body(THRESHOLD));
        assert!(at.headers.is_empty());

        let mut over = Response::json(200, body(THRESHOLD + 1));
        assert!(!gzip(&mut over, &req(&["identity"])));
        assert!(over.headers.is_empty());
        assert!(gzip(&mut over, &req(&["gzip"])));
        assert_eq!(
            over.headers,
            vec![
                ("Content-Encoding", "gzip".to_string()),
                ("Vary", "Accept-Encoding".to_string())
            ]
        );
        assert!(over.body.len() < THRESHOLD / 10);
        let mut plain = Vec::new();
        GzDecoder::new(over.body.as_slice())
            .read_to_end(&mut plain)
            .unwrap();
        assert_eq!(plain, body(THRESHOLD + 1));
    }
}
