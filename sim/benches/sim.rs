//! kubewasm-sim figures, measured from outside the optimized binary:
//! startup with 50,000 seeded pods, its memory, paging through them at 500,
//! and the flood rate reaching one fast reader (and four at once).
//!
//! `cargo bench -p kubewasm-sim`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

struct Sim {
    child: Child,
    addr: String,
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> (Sim, f64) {
    let t0 = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubewasm-sim"))
        .args(["--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("line");
    let secs = t0.elapsed().as_secs_f64();
    let addr = line
        .trim()
        .trim_start_matches("LISTENING http://")
        .to_string();
    (Sim { child, addr }, secs)
}

fn get(addr: &str, path: &str, body: Option<&str>) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).expect("connect");
    let (method, body) = match body {
        Some(b) => ("POST", b),
        None => ("GET", ""),
    };
    write!(s, "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len()).expect("write");
    let mut out = Vec::new();
    s.read_to_end(&mut out).expect("read");
    let at = memchr::memmem::find(&out, b"\r\n\r\n").map_or(0, |i| i + 4);
    out.split_off(at)
}

fn json_field(body: &[u8], key: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let mut cur = &v;
    for k in key.split('/') {
        cur = cur.get(k)?;
    }
    cur.as_str().map(str::to_string)
}

/// Read a watch until `n` MODIFIED events have arrived; returns bytes read.
fn read_events(mut s: TcpStream, n: usize) -> usize {
    let needle = memchr::memmem::Finder::new(b"{\"type\":\"MODIFIED\"");
    let mut buf = vec![0u8; 1 << 20];
    let (mut seen, mut bytes) = (0, 0);
    // Keep a short tail so a needle split across reads is still found once.
    let mut carry: Vec<u8> = Vec::new();
    while seen < n {
        let k = s.read(&mut buf).expect("read");
        if k == 0 {
            break;
        }
        bytes += k;
        carry.extend_from_slice(&buf[..k]);
        seen += needle.find_iter(&carry).count();
        let keep = carry.len().min(17);
        carry.drain(..carry.len() - keep);
        // Anything fully inside the kept tail was counted already; a needle
        // is 18 bytes, so a 17-byte tail never holds a whole one.
    }
    bytes
}

fn open_watch(addr: &str, rv: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET /api/v1/pods?watch=1&resourceVersion={rv} HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    .expect("write");
    s
}

fn main() {
    let (sim, startup) = start(&[
        "--pods",
        "50000",
        "--namespaces",
        "50",
        "--pod-bytes",
        "3000",
        "--history",
        "200000",
    ]);
    let rss = std::fs::read_to_string(format!("/proc/{}/status", sim.child.id()))
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmRSS")).map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse::<f64>()
                    .unwrap_or(0.0)
            })
        })
        .unwrap_or(0.0);
    println!(
        "startup with 50,000 pods of ~3 KB seeded: {startup:.2} s; resident memory {:.0} MiB",
        rss / 1024.0
    );

    let t0 = Instant::now();
    let (mut pages, mut bytes) = (0, 0);
    let mut path = "/api/v1/pods?limit=500".to_string();
    loop {
        let body = get(&sim.addr, &path, None);
        pages += 1;
        bytes += body.len();
        // The list metadata comes first: read the token from the head only.
        let head = String::from_utf8_lossy(&body[..body.len().min(400)]).into_owned();
        let token = head
            .split("\"continue\":\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .map(str::to_string);
        match token {
            Some(c) => path = format!("/api/v1/pods?limit=500&continue={c}"),
            None => break,
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    println!("list 50,000 pods at limit 500: {pages} pages, {:.0} MB in {:.0} ms ({:.0} MB/s; the reader only looks for the continue token)", bytes as f64 / 1e6, secs * 1e3, bytes as f64 / 1e6 / secs);

    for readers in [1usize, 4] {
        const N: usize = 200_000;
        let stats = get(&sim.addr, "/sim/stats", None);
        let rv = json_field(&stats, "resourceVersion").expect("rv");
        let watches: Vec<TcpStream> = (0..readers).map(|_| open_watch(&sim.addr, &rv)).collect();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let t0 = Instant::now();
        let handles: Vec<_> = watches
            .into_iter()
            .map(|w| std::thread::spawn(move || read_events(w, N)))
            .collect();
        get(
            &sim.addr,
            "/sim/flood",
            Some(&format!("{{\"resource\":\"pods\",\"events\":{N}}}")),
        );
        let total: usize = handles.into_iter().map(|h| h.join().expect("reader")).sum();
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "flood {N} MODIFIED (~3 KB) to {readers} counting reader(s): {:.0} events/s per reader, {:.0} MB/s total",
            N as f64 / secs,
            total as f64 / 1e6 / secs
        );
    }
}
