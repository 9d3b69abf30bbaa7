//! Controller work queues: the basic queue, delaying queue, rate limiters and
//! the rate-limited queue, all on the local executor and the runtime clock.
