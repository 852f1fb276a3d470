//! The unstored kinds. Most are reviews, only ever created (`TokenReview`, `SelfSubjectReview`, the access
//! reviews, legacy `bindings`): a create answers the request's object with its `status` filled in, as
//! kube's `rest.Creater`s for them do, and discovery lists only `create`. `componentstatuses` is the other
//! way round: only read, each read a fresh probe. Nothing reaches etcd as such an object, so there is
//! nothing to watch, update or delete.
//!
//! An unstored kind implements [`Review`]; [`ReviewRest`] puts it in the registry's table beside the
//! stores.

use std::sync::Arc;

use serde_json::Value;

use crate::registry::authorizer::Modes;
use crate::registry::error::RegistryError;
use crate::registry::meta;
use crate::registry::options::{CreateOptions, DeleteOptions, UpdateOptions};
use crate::registry::rest::{BoxFuture, PatchFn, Registry, Rest};
use crate::registry::store::{ApplyRequest, DeleteResult, ListRequest};
use crate::registry::strategy::{DeleteStrategy, Strategy, Subresource};
use crate::registry::system::Clock;
use crate::registry::token_file::TokenFile;
use crate::registry::tokens::ServiceAccountTokens;
use crate::registry::user::UserInfo;
use crate::storage::{GetOptions, ObjectList, ResourceVersion, SharedObject, Watcher};

/// What a review may look at: the request (its namespace, user and dry run), the time, and the stores of
/// the built-in resources (a token review checks that the token's account still exists; a legacy
/// `Binding` writes its pod).
pub(crate) struct ReviewContext<'a> {
    /// The namespace of the path ("" for the cluster-scoped reviews).
    pub namespace: &'a str,
    pub user: &'a UserInfo,
    pub now_unix_s: i64,
    pub tokens: &'a ServiceAccountTokens,
    pub stores: &'a Registry,
    pub dry_run: &'a [String],
    /// The server's authorization chain, which the access reviews ask.
    pub authorization: &'a Modes,
    /// The server's static tokens (`--token-auth-file`), which a token review checks too.
    pub static_tokens: &'a TokenFile,
}

impl ReviewContext<'_> {
    /// The store of a resource, if it is served.
    pub(crate) fn store(&self, group: &str, version: &str, plural: &str) -> Option<&dyn Rest> {
        self.stores.get(&(group.to_string(), version.to_string(), plural.to_string())).map(|r| &**r)
    }
}

/// One unstored kind: the answer of a create (the reviews), or of a read (`componentstatuses`, which are
/// probed, not stored).
pub(crate) trait Review: Send + Sync {
    /// The answer to `obj` (already decoded and type-checked as the kind): the object with its status.
    fn review<'a>(&'a self, ctx: ReviewContext<'a>, obj: Value) -> BoxFuture<'a, Result<Value, RegistryError>> {
        let _ = (ctx, obj);
        Box::pin(async { Err(RegistryError::NoSuchPath) })
    }

    /// Every object there is now, for a list (and a get, which picks one by name).
    fn read<'a>(&'a self, ctx: ReviewContext<'a>) -> BoxFuture<'a, Result<Vec<Value>, RegistryError>> {
        let _ = ctx;
        Box::pin(async { Err(RegistryError::NoSuchPath) })
    }

    /// The group and resource a get's 404 names (`componentstatuses`).
    fn not_found(&self, name: &str) -> RegistryError {
        let _ = name;
        RegistryError::NoSuchPath
    }
}

/// The strategy of a kind nothing stores: only its scope matters (the router reads it).
pub(crate) struct Unstored {
    pub namespaced: bool,
}

impl Strategy for Unstored {
    fn namespace_scoped(&self) -> bool {
        self.namespaced
    }

    fn validate(&self, _obj: &Value) -> Vec<crate::registry::field_error::FieldError> {
        Vec::new()
    }

    fn validate_update(&self, _new: &Value, _old: &Value) -> Vec<crate::registry::field_error::FieldError> {
        Vec::new()
    }
}

impl DeleteStrategy for Unstored {}

/// A review kind in the registry's table.
pub(crate) struct ReviewRest {
    review: Arc<dyn Review>,
    strategy: Arc<dyn Strategy>,
    tokens: Arc<ServiceAccountTokens>,
    stores: Arc<Registry>,
    clock: Arc<dyn Clock>,
    authorization: Modes,
    static_tokens: Arc<TokenFile>,
}

impl ReviewRest {
    pub(crate) fn new(
        review: Arc<dyn Review>,
        strategy: Arc<dyn Strategy>,
        tokens: Arc<ServiceAccountTokens>,
        stores: Arc<Registry>,
        clock: Arc<dyn Clock>,
        authorization: Modes,
    ) -> ReviewRest {
        ReviewRest { review, strategy, tokens, stores, clock, authorization, static_tokens: Arc::default() }
    }

    /// This review with the server's static tokens (`--token-auth-file`).
    pub(crate) fn with_static_tokens(mut self, static_tokens: Arc<TokenFile>) -> ReviewRest {
        self.static_tokens = static_tokens;
        self
    }
}

impl ReviewRest {
    fn context<'a>(&'a self, ns: &'a str, user: &'a UserInfo, dry_run: &'a [String]) -> ReviewContext<'a> {
        ReviewContext {
            namespace: ns,
            user,
            now_unix_s: self.clock.now_unix_s(),
            tokens: &self.tokens,
            stores: &self.stores,
            dry_run,
            authorization: &self.authorization,
            static_tokens: &self.static_tokens,
        }
    }
}

/// Who reads an unstored kind: reads do not depend on the user.
static ANONYMOUS: std::sync::LazyLock<UserInfo> = std::sync::LazyLock::new(UserInfo::anonymous);

/// What every verb but create meets. The router never sends them here (discovery and the routes list
/// only `create`), so reaching this is the 404 of a path that is not served.
fn not_served<'a, T: Send + 'a>() -> BoxFuture<'a, Result<T, RegistryError>> {
    Box::pin(async { Err(RegistryError::NoSuchPath) })
}

impl Rest for ReviewRest {
    fn strategy(&self) -> &dyn Strategy {
        &*self.strategy
    }

    fn get<'a>(&'a self, ns: &'a str, name: &'a str, _: &'a GetOptions) -> BoxFuture<'a, Result<Value, RegistryError>> {
        Box::pin(async move {
            let all = self.review.read(self.context(ns, &ANONYMOUS, &[])).await?;
            all.into_iter().find(|o| meta::get_str(o, "name") == name).ok_or_else(|| self.review.not_found(name))
        })
    }

    fn list<'a>(&'a self, ns: &'a str, _: &'a ListRequest) -> BoxFuture<'a, Result<ObjectList, RegistryError>> {
        Box::pin(async move {
            let all = self.review.read(self.context(ns, &ANONYMOUS, &[])).await?;
            Ok(ObjectList {
                items: all.into_iter().map(SharedObject::new).collect(),
                resource_version: ResourceVersion(0),
                continue_token: None,
                remaining_item_count: None,
            })
        })
    }

    fn watch<'a>(&'a self, _: &'a str, _: &'a ListRequest) -> BoxFuture<'a, Result<Watcher, RegistryError>> {
        not_served()
    }

    fn create<'a>(
        &'a self,
        ns: &'a str,
        obj: Value,
        opts: &'a CreateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        let mut obj = obj;
        // The create handler's check, before any review sees the object.
        if self.strategy.namespace_scoped() {
            if let Err(err) = crate::registry::store::ensure_namespace(&mut obj, ns, true) {
                return Box::pin(async move { Err(err) });
            }
        }
        self.review.review(self.context(ns, &opts.user, &opts.dry_run), obj)
    }

    fn update<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Value,
        _: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>> {
        not_served()
    }

    fn update_subresource<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Subresource,
        _: Value,
        _: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        not_served()
    }

    fn patch<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Option<Subresource>,
        _: PatchFn<'a>,
        _: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<Value, RegistryError>> {
        not_served()
    }

    fn apply<'a>(
        &'a self,
        _: &'a str,
        _: Value,
        _: &'a ApplyRequest<'a>,
        _: &'a UpdateOptions,
    ) -> BoxFuture<'a, Result<(Value, bool), RegistryError>> {
        not_served()
    }

    fn delete<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<DeleteResult, RegistryError>> {
        not_served()
    }

    fn delete_collection<'a>(
        &'a self,
        _: &'a str,
        _: &'a ListRequest,
        _: &'a DeleteOptions,
    ) -> BoxFuture<'a, Result<ObjectList, RegistryError>> {
        not_served()
    }
}
