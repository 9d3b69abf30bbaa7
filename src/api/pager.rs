//! Listing everything page by page (client-go's `tools/pager`).

use std::future::Future;

use crate::rest::{Error, KubeObject, ListParams, ObjectList};

/// The concatenated result of a paged list.
#[derive(Debug, Clone)]
pub struct ListAll {
    /// Every item, in server order.
    pub items: Vec<KubeObject>,
    /// The first page's resourceVersion (PG-03).
    pub resource_version: String,
    /// Whether more than one page was fetched.
    pub paginated: bool,
    /// Items left out because they could not be decoded (see
    /// [`ObjectList::invalid`](crate::rest::ObjectList::invalid)).
    pub invalid: Vec<(String, crate::rest::Error)>,
}

/// The continue tokens of one paged list, to stop a server (or a caching
/// proxy that ignores the query) that hands out one again: the list would
/// never end and hold ever more items.
#[derive(Default)]
pub(crate) struct ContinueTokens(Vec<String>);

impl ContinueTokens {
    /// Fails when `token` was already followed in this list (a list has a
    /// page per 500 objects: a scan costs nothing beside a page).
    pub(crate) fn check(&mut self, token: &str) -> Result<(), Error> {
        if !self.0.iter().any(|t| t == token) {
            self.0.push(token.to_owned());
            return Ok(());
        }
        Err(Error::decode(
            format!(
                "the server sent continue token {:?} a second time: the list would never end",
                token.get(..64).unwrap_or(token)
            ),
            b"",
        ))
    }
}

/// List every item: `limit` = the caller's limit or `page_size` (PG-01; a
/// page size of 0 means one unpaginated request); later pages carry the
/// continue token and drop the RV and RV-match (PG-03); an Expired 410 on a
/// later page falls back to one full list at the original RV (PG-04).
pub async fn list_all<F, Fut>(
    page_size: u32,
    params: ListParams,
    mut fetch: F,
) -> Result<ListAll, Error>
where
    F: FnMut(ListParams) -> Fut,
    Fut: Future<Output = Result<ObjectList, Error>>,
{
    let limit = params
        .limit
        .filter(|l| *l > 0)
        .or((page_size > 0).then_some(page_size));
    let first = ListParams {
        limit,
        ..params.clone()
    };
    let page = fetch(first).await?;
    let resource_version = page.resource_version.clone();
    let mut items = page.items;
    let mut invalid = page.invalid;
    let mut cont = page.continue_token.filter(|c| !c.is_empty());
    if cont.is_none() {
        return Ok(ListAll {
            items,
            resource_version,
            paginated: false,
            invalid,
        });
    }
    let mut tokens = ContinueTokens::default();
    while let Some(token) = cont.take() {
        tokens.check(&token)?;
        let next = ListParams {
            limit,
            continue_token: Some(token),
            resource_version: None,
            resource_version_match: None,
            ..params.clone()
        };
        match fetch(next).await {
            Ok(p) => {
                items.extend(p.items);
                invalid.extend(p.invalid);
                cont = p.continue_token.filter(|c| !c.is_empty());
            }
            Err(e) if e.reason() == Some("Expired") => {
                let full = ListParams {
                    limit: None,
                    continue_token: None,
                    ..params.clone()
                };
                let p = fetch(full).await?;
                return Ok(ListAll {
                    items: p.items,
                    resource_version: p.resource_version,
                    paginated: true,
                    invalid: p.invalid,
                });
            }
            Err(e) => return Err(e),
        }
    }
    Ok(ListAll {
        items,
        resource_version,
        paginated: true,
        invalid,
    })
}
