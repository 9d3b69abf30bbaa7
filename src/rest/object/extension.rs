//! A per-version slot for a layer above: data it derives from one object
//! version once and reuses for as long as the version lives.

use std::any::Any;
use std::rc::Rc;

use super::KubeObject;

/// What a layer above keeps on one object version, in
/// [`KubeObject::extension`]: something derived from the version once
/// (a decoded form, a binding's object) and shared by every handle to it.
///
/// Objects are immutable, so an extension never goes stale; it lives
/// exactly as long as the version.
pub trait Extension: Any {
    /// Called once, when the version's last handle is dropped and before its
    /// bytes are freed, with its raw JSON and [`layout`](KubeObject::layout):
    /// an extension that reads the bytes lazily takes what it still needs.
    fn released(&self, _raw: &[u8], _layout: &[u32]) {}
}

impl KubeObject {
    /// This version's extension, built by `init` on first use: every handle
    /// to the version, now or later, gets the same value. Returns `None` if
    /// the slot already holds a value of another type (one layer owns it).
    pub fn extension<T: Extension>(&self, init: impl FnOnce() -> T) -> Option<Rc<T>> {
        let any: Rc<dyn Any> = self
            .0
            .extension
            .get_or_init(|| Rc::new(init()) as Rc<dyn Extension>)
            .clone();
        any.downcast::<T>().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_namespace_is_cluster_scoped_and_extension_is_per_version() {
        let o = KubeObject::from_value(&json!({"metadata": {"name": "n", "namespace": ""}}))
            .expect("valid");
        assert_eq!(o.namespace(), None);
        let a = o.extension(|| Num(5)).expect("Num");
        let b = o.clone().extension(|| Num(6)).expect("Num");
        assert!(Rc::ptr_eq(&a, &b));
        assert_eq!(b.0, 5);
        assert!(o.extension(|| Other).is_none());
    }

    struct Num(u32);
    impl Extension for Num {}
    struct Other;
    impl Extension for Other {}

    /// Records the bytes it is released with.
    struct Spy(Rc<std::cell::RefCell<Vec<Vec<u8>>>>);
    impl Extension for Spy {
        fn released(&self, raw: &[u8], layout: &[u32]) {
            assert_eq!(layout.len(), 8, "two members");
            self.0.borrow_mut().push(raw.to_vec());
        }
    }

    #[test]
    fn an_extension_is_told_once_when_the_last_handle_goes_and_weak_handles_do_not_keep_it() {
        let raw = br#"{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"x":1}}"#;
        let o = KubeObject::from_json(raw).expect("valid");
        let log = Rc::new(std::cell::RefCell::new(Vec::new()));
        let spy = Spy(log.clone());
        assert!(o.extension(|| spy).is_some());
        let weak = o.downgrade();
        let other = o.clone();
        drop(o);
        assert!(log.borrow().is_empty(), "a handle is left");
        assert!(weak.upgrade().is_some_and(|u| u.ptr_eq(&other)));
        drop(other);
        assert_eq!(
            *log.borrow(),
            vec![raw.to_vec()],
            "told once, with the bytes"
        );
        assert!(weak.upgrade().is_none());
        // Without an extension nothing is called and nothing fails.
        drop(KubeObject::from_json(raw).expect("valid"));
    }
}
