//! Conveniences for writing informer handlers: the key a notification is
//! about, and handlers from plain or async closures (so a caller needs no
//! direct `futures` dependency to box a future).

use std::future::Future;
use std::rc::Rc;

use super::keys::{object_key, KeyError};
use super::processor::{Handler, Notification};

impl Notification {
    /// The `namespace/name` (or `name`) key of the object this is about: the
    /// new object of an update, the final state or tombstone of a delete.
    pub fn key(&self) -> Result<String, KeyError> {
        match self {
            Notification::Add(o, _) | Notification::Update(_, o) => object_key(o),
            Notification::Delete(d) => d.key(),
        }
    }
}

/// A handler from a closure that finishes its work before returning.
pub fn handler(f: impl Fn(Notification) + 'static) -> Handler {
    Rc::new(move |n| {
        f(n);
        None
    })
}

/// A handler from an async closure: the informer awaits each returned
/// future before giving this handler its next notification (other handlers
/// do not wait for it).
pub fn async_handler<F, Fut>(f: F) -> Handler
where
    F: Fn(Notification) -> Fut + 'static,
    Fut: Future<Output = ()> + 'static,
{
    Rc::new(move |n| Some(Box::pin(f(n))))
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use std::cell::RefCell;

    use serde_json::json;

    use super::*;
    use crate::cache::keys::{DeltaObject, Tombstone};
    use crate::rest::KubeObject;
    use crate::rt::{block_on, yield_now};

    fn pod(ns: &str, name: &str) -> KubeObject {
        KubeObject::from_value(&json!({"metadata": {"namespace": ns, "name": name}})).unwrap()
    }

    #[test]
    fn a_notification_names_the_key_of_its_object() {
        let (a, b) = (pod("ns", "a"), pod("ns", "b"));
        assert_eq!(Notification::Add(a.clone(), false).key().unwrap(), "ns/a");
        assert_eq!(Notification::Update(a, b.clone()).key().unwrap(), "ns/b");
        let gone = Tombstone {
            key: "ns/c".into(),
            obj: None,
        };
        assert_eq!(
            Notification::Delete(DeltaObject::Tombstone(gone))
                .key()
                .unwrap(),
            "ns/c"
        );
        assert!(Notification::Add(pod("ns", ""), false).key().is_err());
    }

    #[test]
    fn sync_and_async_closures_become_handlers() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let s = seen.clone();
        let plain = handler(move |n| s.borrow_mut().push(n.key().unwrap()));
        assert!(plain(Notification::Add(pod("ns", "a"), true)).is_none());
        let s = seen.clone();
        let slow = async_handler(move |n| {
            let s = s.clone();
            async move {
                yield_now().await;
                s.borrow_mut().push(format!("async {}", n.key().unwrap()));
            }
        });
        let fut = slow(Notification::Add(pod("ns", "b"), true)).expect("a future");
        assert_eq!(*seen.borrow(), ["ns/a"], "nothing runs until awaited");
        block_on(fut);
        assert_eq!(*seen.borrow(), ["ns/a", "async ns/b"]);
    }
}
