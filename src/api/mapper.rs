//! The REST mapper: kinds, plurals, singulars and short names to resources.

use super::resource::ApiResource;

/// Maps names to resources over a discovery result (or the built-in table).
#[derive(Clone, Debug, Default)]
pub struct RestMapper {
    resources: Vec<ApiResource>,
}

impl RestMapper {
    /// A mapper over these resources (preferred versions first wins ties).
    pub fn new(mut resources: Vec<ApiResource>) -> Self {
        crate::rt::sort::sort_by(&mut resources, |a, b| b.preferred.cmp(&a.preferred));
        RestMapper { resources }
    }

    /// Every resource known.
    pub fn resources(&self) -> &[ApiResource] {
        &self.resources
    }

    /// The resource serving `kind` (optionally in `group`), preferred version first.
    pub fn resource_for_kind(&self, group: Option<&str>, kind: &str) -> Option<&ApiResource> {
        self.resources
            .iter()
            .find(|r| r.kind == kind && group.is_none_or(|g| g == r.group))
    }

    /// The resource for a GVK exactly.
    pub fn resource_for_gvk(&self, group: &str, version: &str, kind: &str) -> Option<&ApiResource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
    }

    /// Resolve what a user typed: a plural, singular, short name or kind
    /// (case-insensitive), optionally qualified with `.group`
    /// (`deployments.apps`) or `.version.group` (`deployments.v1.apps`), read
    /// as kubectl reads it: with two dots or more, as `.version.group` first,
    /// then the whole rest as the group (`widgets.example.com`).
    pub fn find(&self, name: &str) -> Option<&ApiResource> {
        let lower = name.to_ascii_lowercase();
        let Some((base, rest)) = lower.split_once('.') else {
            return self.matching(&lower, None, None);
        };
        rest.split_once('.')
            .and_then(|(version, group)| self.matching(base, Some(version), Some(group)))
            .or_else(|| self.matching(base, None, Some(rest)))
    }

    fn matching(
        &self,
        base: &str,
        version: Option<&str>,
        group: Option<&str>,
    ) -> Option<&ApiResource> {
        self.resources.iter().find(|r| {
            group.is_none_or(|g| g == r.group)
                && version.is_none_or(|v| v == r.version)
                && (r.plural == base
                    || r.singular == base
                    || r.kind.eq_ignore_ascii_case(base)
                    || r.short_names.iter().any(|s| s == base))
        })
    }
}
