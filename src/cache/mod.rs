//! The local cache: object keys, Store/Indexer, label and field selectors,
//! listers, DeltaFIFO, and (on top of them) the reflector and informers.
