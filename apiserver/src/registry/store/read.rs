//! Reads: get, list and watch, with label and field selectors turned into the storage predicate.

use serde_json::Value;

use crate::registry::error::RegistryError;
use crate::registry::selector::Selector;
use crate::registry::store::Store;
use crate::storage::status::Operation;
use crate::storage::{GetOptions, ListOptions, ObjectList, ResourceVersionMatch, Storage, Watcher};

/// The query of a list or watch, as a client sends it.
#[derive(Clone, Debug, Default)]
pub struct ListRequest {
    pub label_selector: String,
    pub field_selector: String,
    pub resource_version: String,
    pub resource_version_match: Option<ResourceVersionMatch>,
    pub limit: i64,
    pub continue_token: String,
    /// Watch only: the client accepts BOOKMARK events (`allowWatchBookmarks`).
    pub allow_watch_bookmarks: bool,
    /// Watch only: `sendInitialEvents` (see [`ListOptions::send_initial_events`]).
    pub send_initial_events: Option<bool>,
}

impl<S: Storage + Clone> Store<S> {
    /// Reads one object (resourceVersion semantics of [`GetOptions`]).
    pub async fn get(&self, namespace: &str, name: &str, opts: &GetOptions) -> Result<Value, RegistryError> {
        self.storage
            .get(&self.key(namespace, name), opts)
            .await
            .map_err(|e| self.storage_error(e, Operation::Get, name))
    }

    /// Lists the objects of `namespace` ("" for all) that the selectors select.
    pub async fn list(&self, namespace: &str, request: &ListRequest) -> Result<ObjectList, RegistryError> {
        let opts = self.list_options(request)?;
        self.storage
            .get_list(&self.list_prefix(namespace), &opts)
            .await
            .map_err(|e| self.storage_error(e, Operation::List, ""))
    }

    /// Watches the objects of `namespace` ("" for all) that the selectors select.
    pub async fn watch(&self, namespace: &str, request: &ListRequest) -> Result<Watcher, RegistryError> {
        let opts = self.list_options(request)?;
        self.storage
            .watch(&self.list_prefix(namespace), &opts)
            .await
            .map_err(|e| self.storage_error(e, Operation::Watch, ""))
    }

    fn list_options(&self, request: &ListRequest) -> Result<ListOptions, RegistryError> {
        let selector = Selector::parse(&request.label_selector, &request.field_selector, self.strategy.as_ref())?;
        let mut predicate = selector.predicate(self.strategy.clone());
        predicate.limit = request.limit;
        predicate.continue_token = request.continue_token.clone();
        Ok(ListOptions {
            resource_version: request.resource_version.clone(),
            resource_version_match: request.resource_version_match,
            predicate,
            allow_watch_bookmarks: request.allow_watch_bookmarks,
            send_initial_events: request.send_initial_events,
            ..ListOptions::default()
        })
    }
}
