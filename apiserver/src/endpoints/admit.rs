//! One request's admission chain: the server's [`Plugins`] with the request's user, as the registry's
//! [`Admission`] hook that writes carry in their options.

use std::sync::Arc;

use serde_json::Value;

use crate::admission::{Plugins, Request};
use crate::endpoints::{ApiServer, Served};
use crate::registry::admission::{Admission, AdmissionHook, Attributes};
use crate::registry::error::RegistryError;
use crate::registry::rest::BoxFuture;
use crate::registry::system::Clock;
use crate::registry::user::UserInfo;

/// The admission of one request.
struct RequestAdmission {
    plugins: Plugins,
    served: Arc<Served>,
    clock: Arc<dyn Clock>,
    user: UserInfo,
}

impl RequestAdmission {
    fn request<'a>(&'a self, attrs: Attributes<'a>) -> Request<'a> {
        Request { attrs, user: &self.user, registry: &self.served.registry, now_unix_s: self.clock.now_unix_s() }
    }
}

impl Admission for RequestAdmission {
    fn admit<'a>(
        &'a self,
        attrs: Attributes<'a>,
        obj: &'a mut Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move { self.plugins.admit(&self.request(attrs), obj, old).await })
    }

    fn validate<'a>(
        &'a self,
        attrs: Attributes<'a>,
        obj: &'a Value,
        old: &'a Value,
    ) -> BoxFuture<'a, Result<(), RegistryError>> {
        Box::pin(async move { self.plugins.validate(&self.request(attrs), obj, old).await })
    }
}

/// The admission hook of a request by `user` (none when the server runs no plugin).
pub(crate) fn hook(server: &ApiServer, user: &UserInfo) -> AdmissionHook {
    if server.plugins.0.is_empty() {
        return AdmissionHook::default();
    }
    AdmissionHook::new(Arc::new(RequestAdmission {
        plugins: server.plugins.clone(),
        served: server.served(),
        clock: server.clock.clone(),
        user: user.clone(),
    }))
}
