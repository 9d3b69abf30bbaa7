//! The queue between an informer's reflector and its store: a
//! [`DeltaFifo`] or a [`RealFifo`], chosen by [`QueueKind`].

use super::delta_fifo::{DeltaFifo, DeltaFifoOptions, FifoError, Popped, SkippedObject};
use super::keys::DeltaObject;
use super::real_fifo::RealFifo;
use crate::rest::KubeObject;

/// Which queue an informer uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueueKind {
    /// Deltas grouped per key; a pop hands over all of one key's (the
    /// default, see `InformerOptions::queue`).
    #[default]
    DeltaFifo,
    /// Every change in order, one per pop (client-go's informer queue
    /// since 1.36).
    RealFifo,
}

/// Either queue, behind one interface. Clone to share.
#[derive(Clone)]
pub enum InformerQueue {
    /// A [`DeltaFifo`].
    Delta(DeltaFifo),
    /// A [`RealFifo`].
    Real(RealFifo),
}

impl From<DeltaFifo> for InformerQueue {
    fn from(q: DeltaFifo) -> Self {
        InformerQueue::Delta(q)
    }
}

impl From<RealFifo> for InformerQueue {
    fn from(q: RealFifo) -> Self {
        InformerQueue::Real(q)
    }
}

/// Call the same method on whichever queue this is.
macro_rules! each {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            InformerQueue::Delta($q) => $e,
            InformerQueue::Real($q) => $e,
        }
    };
}

impl InformerQueue {
    /// A new queue of `kind`.
    pub fn new(kind: QueueKind, opts: DeltaFifoOptions) -> Self {
        match kind {
            QueueKind::DeltaFifo => DeltaFifo::new(opts).into(),
            QueueKind::RealFifo => RealFifo::new(opts).into(),
        }
    }

    /// Queue an `Added` delta.
    pub fn add(&self, obj: KubeObject) -> Result<(), FifoError> {
        each!(self, q => q.add(obj))
    }

    /// Queue an `Updated` delta.
    pub fn update(&self, obj: KubeObject) -> Result<(), FifoError> {
        each!(self, q => q.update(obj))
    }

    /// Queue a `Deleted` delta.
    pub fn delete(&self, obj: DeltaObject) -> Result<(), FifoError> {
        each!(self, q => q.delete(obj))
    }

    /// Transform and key a listed object (see [`DeltaFifo::prepare`]).
    pub fn prepare(&self, obj: KubeObject) -> Result<(String, KubeObject), SkippedObject> {
        each!(self, q => q.prepare(obj))
    }

    /// Replace with a list (transformed and keyed here).
    pub fn replace(&self, list: Vec<KubeObject>, rv: &str) -> Vec<SkippedObject> {
        each!(self, q => q.replace(list, rv))
    }

    /// Replace with a list of prepared objects.
    pub fn replace_prepared(&self, list: Vec<KubeObject>, rv: &str) -> Vec<SkippedObject> {
        each!(self, q => q.replace_prepared(list, rv))
    }

    /// Re-offer stored objects that nothing queued names.
    pub fn resync(&self) {
        each!(self, q => q.resync())
    }

    /// Whether the initial population has been processed.
    pub fn has_synced(&self) -> bool {
        each!(self, q => q.has_synced())
    }

    /// Deltas waiting: what back-pressure bounds.
    pub fn queued_deltas(&self) -> usize {
        each!(self, q => q.queued_deltas())
    }

    /// Close the queue.
    pub fn close(&self) {
        each!(self, q => q.close())
    }

    /// Whether it was closed.
    pub fn is_closed(&self) -> bool {
        each!(self, q => q.is_closed())
    }

    /// Wait for the next item, `None` once closed and empty.
    pub async fn pop(&self) -> Option<Popped> {
        each!(self, q => q.pop().await)
    }

    /// The next item without waiting.
    pub fn try_pop(&self) -> Option<Popped> {
        each!(self, q => q.try_pop())
    }

    /// Mark a popped item processed.
    pub fn done(&self, popped: &Popped) {
        each!(self, q => q.done(popped))
    }
}
