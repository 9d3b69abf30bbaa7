//! Static files for `--static-dir` (the demo dashboard, same-origin with the
//! API). Paths that leave the directory are refused; an extension-less path
//! that does not exist falls back to `index.html` (single-page app routes).

use std::path::{Component, Path, PathBuf};

use crate::http::{Request, Response};

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "ico" => "image/x-icon",
        "txt" | "md" => "text/plain; charset=utf-8",
        "ts" => "text/plain; charset=utf-8",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    }
}

fn text(code: u16, body: &str) -> Response {
    Response {
        code,
        content_type: "text/plain; charset=utf-8",
        headers: Vec::new(),
        body: body.as_bytes().to_vec(),
    }
}

/// The file a request path names inside `dir`, if it stays inside.
fn resolve(dir: &Path, url_path: &str) -> Option<PathBuf> {
    let rel = Path::new(url_path.trim_start_matches('/'));
    let mut out = dir.to_path_buf();
    for c in rel.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// Answer a GET for a static file.
pub fn serve(dir: Option<&Path>, req: &Request) -> Response {
    let Some(dir) = dir else {
        return text(404, "kubewasm-sim: not found (no --static-dir given)");
    };
    if req.method != "GET" && req.method != "HEAD" {
        return text(405, "method not allowed");
    }
    let Some(mut path) = resolve(dir, &req.path) else {
        return text(400, "bad path");
    };
    if path.is_dir() {
        path.push("index.html");
    }
    if !path.exists() && path.extension().is_none() {
        path = dir.join("index.html");
    }
    match std::fs::read(&path) {
        Ok(body) => Response {
            code: 200,
            content_type: content_type(&path),
            headers: vec![("Cache-Control", "no-cache".to_string())],
            body: if req.method == "HEAD" {
                Vec::new()
            } else {
                body
            },
        },
        Err(_) => text(404, "not found"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_files_and_refuses_escapes() {
        let dir = std::env::temp_dir().join(format!("kubewasm-sim-static-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("index.html"), "<h1>home</h1>").unwrap();
        std::fs::write(dir.join("sub/app.js"), "export {}").unwrap();
        let get = |p: &str| {
            serve(
                Some(&dir),
                &Request {
                    method: "GET".into(),
                    path: p.into(),
                    ..Request::default()
                },
            )
        };
        let r = get("/sub/app.js");
        assert_eq!(
            (r.code, r.content_type),
            (200, "text/javascript; charset=utf-8")
        );
        assert_eq!(get("/").body, b"<h1>home</h1>");
        assert_eq!(get("/some/route").body, b"<h1>home</h1>", "SPA fallback");
        assert_eq!(get("/missing.css").code, 404);
        assert_eq!(get("/../etc/passwd").code, 400);
        assert_eq!(serve(None, &Request::default()).code, 404);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
