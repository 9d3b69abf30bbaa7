//! Resource identities (group/version/resource and kind), the dynamic client
//! for any resource including CRDs, discovery and the REST mapper.
