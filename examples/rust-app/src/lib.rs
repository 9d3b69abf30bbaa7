//! A Rust app on kubewasm, built into its own wasm module: the flow a new
//! user writes first — config → client → informer factory → informer →
//! bounded wait for sync → lister — with the errors of each step in one
//! type. Exported to JavaScript as `podNames` (wasm32 only).
//!
//! Tests: `tests/app.rs`, against the simulated API server (`make test-rust-app`).

use std::fmt;
use std::time::Duration;

use kubewasm::cache::{FactoryError, SelectorError, SyncError};
use kubewasm::SharedInformerFactory;
use kubewasm::{ApiResource, Client, InformerOptions, LabelSelector, ResourceScope};

/// What can go wrong, from configuration to the first answer.
#[derive(Debug)]
pub enum AppError {
    /// The client configuration was refused (a bad URL, ...).
    Config(kubewasm::Error),
    /// The factory refused the informer (a scope no request could be built
    /// for, ...).
    Factory(FactoryError),
    /// The label selector does not parse.
    Selector(SelectorError),
    /// The cache did not sync in time (the server's last error inside).
    Sync(SyncError),
}

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppError::Config(e) => write!(f, "configuration: {e}"),
            AppError::Factory(e) => write!(f, "informer: {e}"),
            AppError::Selector(e) => write!(f, "selector: {e}"),
            AppError::Sync(e) => write!(f, "sync: {e}"),
        }
    }
}

impl std::error::Error for AppError {}

/// The sorted names of the pods in `namespace` that match `selector`, read
/// from an informer's cache once it has synced (at most `timeout`).
pub async fn pod_names(
    client: Client,
    namespace: &str,
    selector: &str,
    timeout: Duration,
) -> Result<Vec<String>, AppError> {
    let selector = LabelSelector::parse(selector).map_err(AppError::Selector)?;
    let factory = SharedInformerFactory::new(client, InformerOptions::default());
    let pods = ResourceScope::new(ApiResource::new("", "v1", "pods", true)).namespace(namespace);
    let informer = factory.informer(pods, None).map_err(AppError::Factory)?;
    factory.start();
    let synced = factory.wait_for_sync_timeout(timeout).await;
    let names = synced.map(|()| {
        let mut names: Vec<String> = informer
            .lister()
            .list_in(Some(namespace), &selector)
            .iter()
            .map(|p| p.name().to_owned())
            .collect();
        names.sort();
        names
    });
    factory.shutdown();
    names.map_err(AppError::Sync)
}

/// A client for `server`, with a bearer token when one is given.
pub fn client(server: &str, token: Option<&str>) -> Result<Client, AppError> {
    let mut config = kubewasm::Config::new(server);
    if let Some(t) = token {
        config = config.bearer_token(t);
    }
    Client::new(config).map_err(AppError::Config)
}

/// The JavaScript export: `await podNames(server, token, namespace, selector)`
/// resolves with the names or rejects with the error's message.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(js_name = podNames)]
pub async fn pod_names_js(
    server: String,
    token: Option<String>,
    namespace: String,
    selector: String,
) -> Result<Vec<String>, wasm_bindgen::JsError> {
    let client = client(&server, token.as_deref())?;
    Ok(pod_names(client, &namespace, &selector, Duration::from_secs(30)).await?)
}
