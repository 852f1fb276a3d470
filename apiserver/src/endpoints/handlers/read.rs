//! GET of one object (kube's `GetResource`, the `/scale` view included) and of a collection
//! (`ListResource` without `watch`).
//!
//! A list's items are written without `kind` and `apiVersion` for built-in resources, as kube's typed lists
//! encode them (the list carries the kind); custom resources keep theirs, as unstructured lists do.

use http::{Response, StatusCode};

use crate::endpoints::error::ApiError;
use crate::endpoints::handlers::{Call, Target};
use crate::endpoints::query::{self, get_options};
use crate::endpoints::response::Responder;
use crate::endpoints::table::ListMeta;
use crate::endpoints::{ApiServer, Body};
use crate::registry::Subresource;

/// `GET .../NAME` (and `GET .../NAME/status`, which reads the whole object, and `GET .../NAME/scale`,
/// which reads it as a `Scale`).
pub(crate) async fn get(call: &Call, target: &Target<'_>, responder: &Responder) -> Result<Response<Body>, ApiError> {
    let opts = get_options(&call.query);
    let obj = target.rest.get(&target.namespace, &target.name, &opts).await?;
    if target.sub.is_some_and(|s| s.sub == Subresource::Scale) {
        return responder.object(StatusCode::OK, &super::write::scale_of(target, &obj)?);
    }
    responder.object(StatusCode::OK, &obj)
}

/// `GET .../RESOURCE`.
pub(crate) async fn list(
    server: &ApiServer,
    call: &Call,
    target: &Target<'_>,
    responder: &Responder,
) -> Result<Response<Body>, ApiError> {
    let list = query::list_query(&call.query, false, server.config.watch_list)?;
    let result = target.rest.list(&target.namespace, &list.request).await?;
    let meta = ListMeta {
        // An unstored kind's list (componentstatuses) was read at no revision, and says none.
        resource_version: if target.resource.review.is_some() {
            String::new()
        } else {
            result.resource_version.to_string()
        },
        continue_token: result.continue_token,
        remaining_item_count: result.remaining_item_count,
    };
    let (kind, api_version) = (target.resource.list_kind(), target.resource.resource.api_version());
    responder.list(&kind, &api_version, &result.items, &meta, target.resource.custom)
}
