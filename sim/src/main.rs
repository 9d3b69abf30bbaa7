//! kubewasm-sim: a simulated Kubernetes API server for kubewasm's demo,
//! tests and benchmarks. See README.md for the command line, the API subset
//! and the control protocol.
//!
//! Design: plain `std::net` with a thread per connection (no async runtime
//! to compile; the load is tests, a demo and one benchmark reader). One
//! mutex guards the store; a condition variable wakes watchers after writes.
//! Objects are stored serialized and shared, so lists and watch fan-out copy
//! bytes into sockets and never re-serialize.

mod api;
mod churn;
mod clock;
mod compress;
mod control;
mod cors;
mod discovery;
mod faults;
mod flood;
mod http;
mod list;
mod logs;
mod partial;
mod patch;
mod resources;
mod rng;
mod seed;
mod selectors;
mod server;
mod state;
mod statics;
mod status;
mod store;
mod warnings;
mod watch;
mod ws;

use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;

use crate::seed::SeedSpec;
use crate::state::{lock, Sim};
use crate::store::Store;

const USAGE: &str =
    "usage: kubewasm-sim [--addr 127.0.0.1] [--port 0] [--seed 1] [--namespaces 3] [--pods 30]
                    [--pod-bytes 2500] [--churn-per-sec 0] [--token TOKEN] [--history 100000]
                    [--static-dir DIR] [--rv0-unpaginated] [--no-compression]";

struct Options {
    addr: String,
    port: u16,
    seed: SeedSpec,
    churn: f64,
    token: Option<String>,
    history: usize,
    static_dir: Option<PathBuf>,
    /// `resourceVersion=0` lists ignore `limit` (the watch cache's way).
    rv0_unpaginated: bool,
    /// Never gzip responses (the API server with
    /// `--feature-gates=APIResponseCompression=false`).
    no_compression: bool,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut o = Options {
        addr: "127.0.0.1".into(),
        port: 0,
        seed: SeedSpec {
            seed: 1,
            namespaces: 3,
            pods: 30,
            pod_bytes: 2500,
        },
        churn: 0.0,
        token: None,
        history: 100_000,
        static_dir: None,
        rv0_unpaginated: false,
        no_compression: false,
    };
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        // Accept both `--flag value` and `--flag=value`.
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut val = || {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs a value"))
        };
        fn num<T: std::str::FromStr>(flag: &str, v: String) -> Result<T, String> {
            v.parse()
                .map_err(|_| format!("{flag}: not a valid number: {v:?}"))
        }
        match flag.as_str() {
            "--addr" => o.addr = val()?,
            "--port" => o.port = num(&flag, val()?)?,
            "--seed" => o.seed.seed = num(&flag, val()?)?,
            "--namespaces" => o.seed.namespaces = num::<usize>(&flag, val()?)?.max(1),
            "--pods" => o.seed.pods = num(&flag, val()?)?,
            "--pod-bytes" => o.seed.pod_bytes = num(&flag, val()?)?,
            "--churn-per-sec" => {
                o.churn = num(&flag, val()?)?;
                if !o.churn.is_finite() || o.churn < 0.0 {
                    return Err("--churn-per-sec must be ≥ 0".into());
                }
            }
            "--token" => o.token = Some(val()?).filter(|t| !t.is_empty()),
            "--history" => o.history = num(&flag, val()?)?,
            "--static-dir" => o.static_dir = Some(PathBuf::from(val()?)),
            "--rv0-unpaginated" => o.rv0_unpaginated = true,
            "--no-compression" => o.no_compression = true,
            "--help" | "-h" => return Err(USAGE.into()),
            other => return Err(format!("unknown flag {other}\n{USAGE}")),
        }
    }
    Ok(o)
}

fn main() {
    let opts = match parse_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Some(dir) = &opts.static_dir {
        if !dir.is_dir() {
            eprintln!(
                "kubewasm-sim: --static-dir {} is not a directory",
                dir.display()
            );
            std::process::exit(2);
        }
    }
    let mut store = Store::new(opts.history);
    store.rv0_ignores_limit = opts.rv0_unpaginated;
    seed::seed(&mut store, &opts.seed);
    let listener = match TcpListener::bind((opts.addr.as_str(), opts.port)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!(
                "kubewasm-sim: cannot listen on {}:{}: {e}",
                opts.addr, opts.port
            );
            std::process::exit(1);
        }
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(opts.port);
    let mut sim = Sim::new(store, opts.token, opts.static_dir);
    sim.compression = !opts.no_compression;
    let sim = Arc::new(sim);
    {
        let mut c = lock(&sim.churn);
        c.per_sec = opts.churn;
        c.seed = opts.seed.seed;
        c.generation = 1;
    }
    let churner = sim.clone();
    if let Err(e) = std::thread::Builder::new()
        .name("kubewasm-sim-churn".into())
        .spawn(move || churn::run(churner))
    {
        eprintln!("kubewasm-sim: cannot start churn: {e}");
    }
    eprintln!(
        "kubewasm-sim: {} pods in {} namespaces (seed {}), churn {}/s, history {}, compression {}",
        opts.seed.pods,
        opts.seed.namespaces,
        opts.seed.seed,
        opts.churn,
        opts.history,
        if opts.no_compression { "off" } else { "on" }
    );
    // The listener is bound, so connections are accepted from here on.
    let host = if opts.addr.contains(':') {
        format!("[{}]", opts.addr)
    } else {
        opts.addr.clone()
    };
    println!("LISTENING http://{host}:{port}");
    let _ = std::io::stdout().flush();
    server::run(listener, sim);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn flags_parse() {
        let o = parse_args(args(
            "--port 8080 --pods=100 --namespaces 0 --token t --churn-per-sec 2.5",
        ))
        .unwrap();
        assert_eq!((o.port, o.seed.pods, o.seed.namespaces), (8080, 100, 1));
        assert_eq!(o.token.as_deref(), Some("t"));
        assert_eq!(o.churn, 2.5);
        assert!(!o.no_compression);
        assert!(parse_args(args("--no-compression")).unwrap().no_compression);
        for bad in ["--port", "--port x", "--nope", "--churn-per-sec -1"] {
            assert!(parse_args(args(bad)).is_err(), "{bad}");
        }
    }
}
