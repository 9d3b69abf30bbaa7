//! A scripted [`ListerWatcher`] for tests (the `testing` feature): the
//! reflector's and informer's behaviour checked against exact request
//! sequences, without a server.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use futures::channel::mpsc;
use futures::future::LocalBoxFuture;
use futures::StreamExt;

use super::list_watch::{EventStream, ListerWatcher};
use crate::rest::{Error, ListParams, ObjectList, WatchEvent, WatchParams};

/// One request a [`ScriptedListerWatcher`] received.
#[derive(Clone, Debug, PartialEq)]
pub enum Call {
    /// A LIST page.
    List(ListParams),
    /// A WATCH (with `send_initial_events` set for a watch-list).
    Watch(WatchParams),
}

impl Call {
    /// A compact description: `LIST rv=0 limit=500`, `LIST rv= limit=0 continue`,
    /// `WATCH rv=3`, `WATCHLIST rv=`.
    pub fn describe(&self) -> String {
        match self {
            Call::List(p) => format!(
                "LIST rv={} limit={}{}",
                p.resource_version.as_deref().unwrap_or(""),
                p.limit.unwrap_or(0),
                if p.continue_token.is_some() {
                    " continue"
                } else {
                    ""
                }
            ),
            Call::Watch(p) if p.send_initial_events == Some(true) => format!(
                "WATCHLIST rv={}",
                p.resource_version.as_deref().unwrap_or("")
            ),
            Call::Watch(p) => format!("WATCH rv={}", p.resource_version.as_deref().unwrap_or("")),
        }
    }
}

type WatchTx = mpsc::UnboundedSender<Result<WatchEvent, Error>>;

#[derive(Default)]
struct Script {
    lists: VecDeque<Result<ObjectList, Error>>,
    watch_errors: VecDeque<Option<Error>>,
    watches: Vec<WatchTx>,
    calls: Vec<Call>,
    no_watch_list: bool,
    reached: crate::rt::Notify,
}

/// A scripted lister-watcher for tests: LIST answers come from a queue
/// (an empty list at RV "1" when it runs dry); each WATCH either fails with
/// the next queued error or opens a channel the test feeds with
/// [`send`](ScriptedListerWatcher::send). Clones share one script.
#[derive(Clone, Default)]
pub struct ScriptedListerWatcher {
    script: Rc<RefCell<Script>>,
}

impl ScriptedListerWatcher {
    /// An empty script.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queue the answer to a future LIST.
    pub fn push_list(&self, r: Result<ObjectList, Error>) {
        self.script.borrow_mut().lists.push_back(r);
    }

    /// Make the next WATCH fail with `e`.
    pub fn push_watch_error(&self, e: Error) {
        self.script.borrow_mut().watch_errors.push_back(Some(e));
    }

    /// Declare watch-list unsupported (RL-01).
    pub fn set_watch_list_unsupported(&self) {
        self.script.borrow_mut().no_watch_list = true;
    }

    /// Feed the most recent watch. Returns false when no watch is open.
    pub fn send(&self, ev: Result<WatchEvent, Error>) -> bool {
        let tx = self.script.borrow().watches.last().cloned();
        tx.is_some_and(|tx| tx.unbounded_send(ev).is_ok())
    }

    /// End the most recent watch cleanly (the server closed it).
    pub fn close_watch(&self) {
        if let Some(tx) = self.script.borrow().watches.last() {
            tx.close_channel();
        }
    }

    /// Every request so far.
    pub fn calls(&self) -> Vec<Call> {
        self.script.borrow().calls.clone()
    }

    /// [`Call::describe`] of every request so far.
    pub fn described(&self) -> Vec<String> {
        self.script
            .borrow()
            .calls
            .iter()
            .map(Call::describe)
            .collect()
    }

    /// Another user of the same server got an answer after an outage
    /// (what [`ListerWatcher::reached_again`] waits for).
    pub fn server_reached(&self) {
        let reached = self.script.borrow().reached.clone();
        reached.notify_waiters();
    }

    /// Watches whose stream the consumer still holds (not dropped, not closed).
    pub fn open_watches(&self) -> usize {
        self.script
            .borrow()
            .watches
            .iter()
            .filter(|t| !t.is_closed())
            .count()
    }
}

impl ListerWatcher for ScriptedListerWatcher {
    fn list(&self, params: ListParams) -> LocalBoxFuture<'static, Result<ObjectList, Error>> {
        let mut s = self.script.borrow_mut();
        s.calls.push(Call::List(params));
        let r = s.lists.pop_front().unwrap_or_else(|| {
            Ok(ObjectList {
                api_version: "v1".into(),
                kind: "List".into(),
                resource_version: "1".into(),
                continue_token: None,
                remaining_item_count: None,
                invalid: Vec::new(),
                items: Vec::new(),
            })
        });
        Box::pin(async move { r })
    }

    fn watch(&self, params: WatchParams) -> LocalBoxFuture<'static, Result<EventStream, Error>> {
        let mut s = self.script.borrow_mut();
        s.calls.push(Call::Watch(params));
        if let Some(Some(e)) = s.watch_errors.pop_front() {
            return Box::pin(async move { Err(e) });
        }
        let (tx, rx) = mpsc::unbounded();
        s.watches.push(tx);
        Box::pin(async move { Ok(rx.boxed_local()) })
    }

    fn supports_watch_list(&self) -> bool {
        !self.script.borrow().no_watch_list
    }

    fn reached_again(&self) -> Option<LocalBoxFuture<'static, ()>> {
        Some(Box::pin(self.script.borrow().reached.notified()))
    }
}
