//! The `paths` of a group version's document: for each resource, every path and operation kube-apiserver's
//! installer publishes (`k8s.io/apiserver pkg/endpoints/installer.go`), in the shape kube-openapi's v3
//! builder gives them: the collection (list, create, deletecollection), the object (read, replace, patch,
//! delete), each subresource, the deprecated `/watch/` forms, and for namespaced resources the list and
//! watch across namespaces. Each operation carries kube's `operationId`, tag, `x-kubernetes-action` and
//! `x-kubernetes-group-version-kind`, its query parameters, its request body and its responses by media
//! type, each referring to a schema of [`super::schemas`].
//!
//! kubectl reads these: the `fieldValidation` parameter of a kind's PATCH operation tells it the server
//! validates fields itself (so `--validate` sends `fieldValidation=Strict` instead of validating on the
//! client), and `explain` finds a kind's schema from here. The parameters' descriptions are our own
//! short texts.

use serde_json::{json, Map, Value};

use super::schemas::{Definitions, Gvk, API_RESOURCE_LIST, DELETE_OPTIONS, PATCH, REF_PREFIX, STATUS, WATCH_EVENT};
use crate::apis::Verb;
use crate::apis::{Catalog, ResourceInfo};

/// A query or path parameter: name, JSON type, description.
struct Param(&'static str, &'static str, &'static str);

const ALLOW_WATCH_BOOKMARKS: Param =
    Param("allowWatchBookmarks", "boolean", "Asks a watch for BOOKMARK events; other requests ignore it.");
const CONTINUE: Param = Param("continue", "string", "The continue token of the previous page of a list.");
const DRY_RUN: Param =
    Param("dryRun", "string", "All: run every stage of the request but persist nothing. Any other value is refused.");
const FIELD_MANAGER: Param =
    Param("fieldManager", "string", "The name of the actor making the change (at most 128 printable characters).");
const FIELD_SELECTOR: Param = Param("fieldSelector", "string", "Restricts the objects to those whose fields match.");
const FIELD_VALIDATION: Param = Param(
    "fieldValidation",
    "string",
    "What the server does with unknown or duplicate fields in the body: Ignore, Warn (the default; a Warning \
     header each) or Strict (the request fails).",
);
const FORCE: Param = Param("force", "boolean", "Lets an apply patch take over fields other managers own.");
const GRACE_PERIOD_SECONDS: Param =
    Param("gracePeriodSeconds", "integer", "Seconds before the object is deleted; 0 deletes at once.");
const LABEL_SELECTOR: Param = Param("labelSelector", "string", "Restricts the objects to those whose labels match.");
const LIMIT: Param = Param("limit", "integer", "The most objects one page of a list holds.");
const ORPHAN_DEPENDENTS: Param =
    Param("orphanDependents", "boolean", "Deprecated in favour of propagationPolicy: whether dependents are orphaned.");
const PRETTY: Param = Param("pretty", "string", "If 'true', the output is indented.");
const PROPAGATION_POLICY: Param =
    Param("propagationPolicy", "string", "How dependents are garbage collected: Orphan, Background or Foreground.");
const RESOURCE_VERSION: Param = Param(
    "resourceVersion",
    "string",
    "Which resource versions the request may be served from (see resourceVersionMatch).",
);
const RESOURCE_VERSION_MATCH: Param =
    Param("resourceVersionMatch", "string", "How resourceVersion applies to a list: Exact or NotOlderThan.");
const SEND_INITIAL_EVENTS: Param = Param(
    "sendInitialEvents",
    "boolean",
    "Starts a watch with the current objects as ADDED events, then a BOOKMARK marking their end.",
);
const TIMEOUT_SECONDS: Param = Param("timeoutSeconds", "integer", "How long a list or watch call may last.");
const WATCH: Param = Param("watch", "boolean", "Streams changes to the listed objects instead of listing them.");

/// The options of a list or watch.
const LIST_PARAMS: &[Param] = &[
    ALLOW_WATCH_BOOKMARKS,
    CONTINUE,
    FIELD_SELECTOR,
    LABEL_SELECTOR,
    LIMIT,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
    WATCH,
];
/// A deletecollection's: the list options that choose the objects, and the delete options.
const DELETE_COLLECTION_PARAMS: &[Param] = &[
    CONTINUE,
    DRY_RUN,
    FIELD_SELECTOR,
    GRACE_PERIOD_SECONDS,
    LABEL_SELECTOR,
    LIMIT,
    ORPHAN_DEPENDENTS,
    PROPAGATION_POLICY,
    RESOURCE_VERSION,
    RESOURCE_VERSION_MATCH,
    SEND_INITIAL_EVENTS,
    TIMEOUT_SECONDS,
];
const WRITE_PARAMS: &[Param] = &[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION];
const PATCH_PARAMS: &[Param] = &[DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE];
const DELETE_PARAMS: &[Param] = &[DRY_RUN, GRACE_PERIOD_SECONDS, ORPHAN_DEPENDENTS, PROPAGATION_POLICY];

/// The patch types a built-in kind takes (a custom resource takes all but the strategic merge patch).
const PATCH_TYPES: &[&str] = &[
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

/// The paths of `group`/`version`: the discovery path and every resource's.
pub(crate) fn group_version_paths(
    catalog: &Catalog,
    defs: &Definitions,
    group: &str,
    version: &str,
) -> Map<String, Value> {
    let gv = GroupVersionNames::new(group, version);
    let mut paths = Map::new();
    let apis = json!({
        "get": {
            "description": "get available resources",
            "operationId": format!("get{}APIResources", gv.id),
            "responses": responses(&[("200", "OK")], &content(API_RESOURCE_LIST, &OBJECT_TYPES)),
            "tags": [gv.tag],
        }
    });
    paths.insert(format!("{}/", gv.prefix), apis);
    for info in catalog.in_group_version(group, version) {
        ResourcePaths { info, defs, gv: &gv }.add(&mut paths);
    }
    paths
}

/// How kube names a group version in paths, operation ids and tags.
struct GroupVersionNames {
    /// `/api/v1`, `/apis/apps/v1`.
    prefix: String,
    /// `CoreV1`, `AppsV1`, `RbacAuthorizationV1`: what operation ids carry after the verb.
    id: String,
    /// `core_v1`, `apps_v1`, `rbacAuthorization_v1`.
    tag: String,
}

impl GroupVersionNames {
    /// kube-apiserver's `GetOperationIDAndTags` (`k8s.io/apiserver pkg/endpoints/openapi`): the group
    /// without `.k8s.io`, each word after a dot capitalized.
    fn new(group: &str, version: &str) -> GroupVersionNames {
        let (prefix, name) = if group.is_empty() {
            (format!("/api/{version}"), "core")
        } else {
            (format!("/apis/{group}/{version}"), group.strip_suffix(".k8s.io").unwrap_or(group))
        };
        GroupVersionNames {
            prefix,
            id: format!("{}{}", valid_operation_id(name, true), valid_operation_id(version, true)),
            tag: format!("{}_{}", valid_operation_id(name, false), valid_operation_id(version, false)),
        }
    }
}

/// kube's `ToValidOperationID`: letters and underscores (and digits after the first), each run of other
/// characters dropped and the next letter capitalized.
fn valid_operation_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// The media types of an object answer and of a list or watch answer.
const OBJECT_TYPES: [&str; 3] = ["application/json", "application/vnd.kubernetes.protobuf", "application/yaml"];
const STREAM_TYPES: [&str; 5] = [
    "application/json",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/yaml",
];
/// A custom resource's (no protobuf).
const CUSTOM_OBJECT_TYPES: [&str; 2] = ["application/json", "application/yaml"];
const CUSTOM_STREAM_TYPES: [&str; 3] = ["application/json", "application/json;stream=watch", "application/yaml"];

fn reference(definition: &str) -> Value {
    json!({"$ref": format!("{REF_PREFIX}{definition}")})
}

/// `content` with `definition` under each media type.
fn content(definition: &str, types: &[&str]) -> Value {
    types.iter().map(|t| (t.to_string(), json!({"schema": reference(definition)}))).collect::<Map<_, _>>().into()
}

/// Responses with the given codes and descriptions, each with `content`, and kube's 401.
fn responses(codes: &[(&str, &str)], content: &Value) -> Value {
    let mut out: Map<String, Value> =
        codes.iter().map(|(code, text)| (code.to_string(), json!({"content": content, "description": text}))).collect();
    out.insert("401".into(), json!({"description": "Unauthorized"}));
    out.into()
}

/// An operation's query parameters, sorted by name.
fn params(list: &[Param]) -> Value {
    let mut sorted: Vec<&Param> = list.iter().collect();
    sorted.sort_by_key(|p| p.0);
    sorted.into_iter().map(query_param).collect()
}

/// kube's `GetArticleForNoun`: no article for a plural (`Endpoints`), else " a " or " an ".
fn article(noun: &str) -> &'static str {
    if noun.ends_with('s') && !noun.ends_with("ss") {
        " "
    } else if noun.starts_with(['A', 'E', 'I', 'O', 'U', 'a', 'e', 'i', 'o', 'u']) {
        " an "
    } else {
        " a "
    }
}

/// `status` → `Status`, as kube titles a subresource in operation ids.
fn title(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The methods of a collection's and an object's operations, by verb, in kube's order.
const COLLECTION_VERBS: &[(Verb, &str)] =
    &[(Verb::List, "get"), (Verb::Create, "post"), (Verb::DeleteCollection, "delete")];
const OBJECT_VERBS: &[(Verb, &str)] =
    &[(Verb::Get, "get"), (Verb::Update, "put"), (Verb::Patch, "patch"), (Verb::Delete, "delete")];
const SUBRESOURCE_VERBS: &[(Verb, &str)] =
    &[(Verb::Get, "get"), (Verb::Update, "put"), (Verb::Patch, "patch"), (Verb::Create, "post")];

/// The paths of one resource.
struct ResourcePaths<'a> {
    info: &'a ResourceInfo,
    defs: &'a Definitions,
    gv: &'a GroupVersionNames,
}

/// What the operations of one path act on: a resource, or one of its subresources.
struct Target<'a> {
    /// The kind of the bodies (`Pod`; `Scale` for `deployments/scale`).
    gvk: Gvk,
    /// Its definition, and its list's.
    object: &'a str,
    list: &'a str,
    /// The resource's kind, which descriptions and operation ids name.
    kind: &'a str,
    subresource: Option<&'a str>,
    /// `Namespaced` for a namespaced resource.
    namespaced: &'static str,
    custom: bool,
    /// Whether a delete answers with the object (the strategy's `ReturnDeletedObject`).
    delete_returns_object: bool,
}

/// One operation before it becomes JSON.
struct Operation {
    /// `read`, `list`, `replace`, `patch`, `create`, `delete`, `watch`: the start of the operation id.
    verb: &'static str,
    /// The rest of the operation id after the group version (`NamespacedPodStatus`).
    rest: String,
    description: String,
    action: &'static str,
    params: &'static [Param],
    body: Option<Value>,
    responses: Value,
    gvk: Value,
}

impl Target<'_> {
    fn object_types(&self) -> &'static [&'static str] {
        if self.custom {
            &CUSTOM_OBJECT_TYPES
        } else {
            &OBJECT_TYPES
        }
    }

    fn stream_types(&self) -> &'static [&'static str] {
        if self.custom {
            &CUSTOM_STREAM_TYPES
        } else {
            &STREAM_TYPES
        }
    }

    /// `NamespacedPodStatus`: what follows the verb and group version in an operation id.
    fn id(&self) -> String {
        format!("{}{}{}", self.namespaced, self.kind, self.subresource.map(title).unwrap_or_default())
    }

    /// `the specified Pod`, `status of the specified Pod`.
    fn specified(&self) -> String {
        match self.subresource {
            None => format!("the specified {}", self.kind),
            Some(sub) => format!("{sub} of the specified {}", self.kind),
        }
    }

    fn body(&self, definition: &str, required: bool) -> Value {
        let mut body = json!({"content": {"*/*": {"schema": reference(definition)}}});
        if required {
            body["required"] = true.into();
        }
        body
    }

    fn operation(&self, verb: &'static str, action: &'static str, description: String) -> Operation {
        Operation {
            verb,
            rest: self.id(),
            description,
            action,
            params: &[],
            body: None,
            responses: responses(&[("200", "OK")], &content(self.object, self.object_types())),
            gvk: self.gvk.extension(),
        }
    }

    /// The operation of `verb` on this target, as kube's installer describes it.
    fn for_verb(&self, verb: Verb) -> Option<Operation> {
        let kind = self.kind;
        let object = content(self.object, self.object_types());
        let op = match verb {
            Verb::Get => self.operation("read", "get", format!("read {}", self.specified())),
            Verb::List => Operation {
                params: LIST_PARAMS,
                responses: responses(&[("200", "OK")], &content(self.list, self.stream_types())),
                ..self.operation("list", "list", format!("list or watch objects of kind {kind}"))
            },
            Verb::Create => {
                let what = match self.subresource {
                    None => format!("create{}{kind}", article(kind)),
                    Some(sub) => format!("create {sub} of{}{kind}", article(kind)),
                };
                Operation {
                    params: WRITE_PARAMS,
                    body: Some(self.body(self.object, true)),
                    responses: responses(&[("200", "OK"), ("201", "Created"), ("202", "Accepted")], &object),
                    ..self.operation("create", "post", what)
                }
            }
            Verb::Update => Operation {
                params: WRITE_PARAMS,
                body: Some(self.body(self.object, true)),
                responses: responses(&[("200", "OK"), ("201", "Created")], &object),
                ..self.operation("replace", "put", format!("replace {}", self.specified()))
            },
            Verb::Patch => {
                let types = PATCH_TYPES.iter().filter(|t| !self.custom || !t.contains("strategic"));
                let body: Map<String, Value> =
                    types.map(|t| (t.to_string(), json!({"schema": reference(PATCH)}))).collect();
                Operation {
                    params: PATCH_PARAMS,
                    body: Some(json!({"content": body, "required": true})),
                    responses: responses(&[("200", "OK"), ("201", "Created")], &object),
                    ..self.operation("patch", "patch", format!("partially update {}", self.specified()))
                }
            }
            Verb::Delete => {
                let answer = if self.delete_returns_object { object } else { content(STATUS, self.object_types()) };
                Operation {
                    params: DELETE_PARAMS,
                    body: Some(self.body(DELETE_OPTIONS, false)),
                    responses: responses(&[("200", "OK"), ("202", "Accepted")], &answer),
                    ..self.operation("delete", "delete", format!("delete{}{kind}", article(kind)))
                }
            }
            Verb::DeleteCollection => Operation {
                rest: format!("Collection{}", self.id()),
                params: DELETE_COLLECTION_PARAMS,
                body: Some(self.body(DELETE_OPTIONS, false)),
                responses: responses(&[("200", "OK")], &content(STATUS, self.object_types())),
                ..self.operation("delete", "deletecollection", format!("delete collection of {kind}"))
            },
            Verb::Watch | Verb::Unknown => return None,
        };
        Some(op)
    }

    /// The list across namespaces (`listCoreV1PodForAllNamespaces`); its options are the path's.
    fn list_all_namespaces(&self) -> Operation {
        let list = self.for_verb(Verb::List).expect("lists have an operation");
        Operation { rest: format!("{}ForAllNamespaces", self.kind), params: &[], ..list }
    }

    /// A deprecated `/watch/` operation: of one object (`None`), or of a list, with the rest of its
    /// operation id (`NamespacedPodList`, `PodListForAllNamespaces`).
    fn watch(&self, list: Option<String>) -> Operation {
        let kind = self.kind;
        let (rest, action, description) = match list {
            None => (
                self.id(),
                "watch",
                format!(
                    "watch changes to an object of kind {kind}. deprecated: use the 'watch' parameter with a list \
                     operation instead, filtered to a single item with the 'fieldSelector' parameter."
                ),
            ),
            Some(rest) => (
                rest,
                "watchlist",
                format!(
                    "watch individual changes to a list of {kind}. deprecated: use the 'watch' parameter with a list \
                     operation instead."
                ),
            ),
        };
        Operation {
            rest,
            responses: responses(&[("200", "OK")], &content(WATCH_EVENT, self.stream_types())),
            ..self.operation("watch", action, description)
        }
    }
}

impl ResourcePaths<'_> {
    fn add(&self, paths: &mut Map<String, Value>) {
        let info = self.info;
        let r = &info.resource;
        let Some(target) = self.target(Gvk::new(&r.group, &r.version, &r.kind), None) else { return };
        let scope = if info.namespaced { "/namespaces/{namespace}" } else { "" };
        let prefix = &self.gv.prefix;
        let collection = format!("{prefix}{scope}/{}", r.plural);
        let item = format!("{collection}/{{name}}");
        // The operations of `verbs` that `serves` allows, each under its method.
        let ops = |verbs: &[(Verb, &'static str)], target: &Target, serves: &dyn Fn(Verb) -> bool| {
            let served = verbs.iter().filter(|(verb, _)| serves(*verb));
            served.filter_map(|(verb, method)| Some((*method, target.for_verb(*verb)?))).collect::<Vec<_>>()
        };
        let ns = info.namespaced;
        let serves = |verb| info.serves(verb);
        self.insert(paths, &collection, ops(COLLECTION_VERBS, &target, &serves), self.path_params(false, ns, &[]));
        self.insert(paths, &item, ops(OBJECT_VERBS, &target, &serves), self.path_params(true, ns, &[]));

        for sub in &info.subresources {
            let (group, version) = sub.kind_group_version.unwrap_or((&r.group, &r.version));
            let Some(target) = self.target(Gvk::new(group, version, sub.kind), Some(sub.name)) else { continue };
            let sub_ops = ops(SUBRESOURCE_VERBS, &target, &|verb| sub.verbs.contains(&verb));
            self.insert(paths, &format!("{item}/{}", sub.name), sub_ops, self.path_params(true, ns, &[]));
        }

        if info.serves(Verb::List) && ns {
            let all = vec![("get", target.list_all_namespaces())];
            self.insert(paths, &format!("{prefix}/{}", r.plural), all, self.path_params(false, false, LIST_PARAMS));
        }
        if info.serves(Verb::Watch) {
            let watch_collection = format!("{prefix}/watch{scope}/{}", r.plural);
            let list = vec![("get", target.watch(Some(format!("{}{}List", target.namespaced, r.kind))))];
            self.insert(paths, &watch_collection, list, self.path_params(false, ns, LIST_PARAMS));
            let one = vec![("get", target.watch(None))];
            self.insert(paths, &format!("{watch_collection}/{{name}}"), one, self.path_params(true, ns, LIST_PARAMS));
            if ns {
                let all = vec![("get", target.watch(Some(format!("{}ListForAllNamespaces", r.kind))))];
                let path = format!("{prefix}/watch/{}", r.plural);
                self.insert(paths, &path, all, self.path_params(false, false, LIST_PARAMS));
            }
        }
    }

    /// The target whose bodies are of kind `gvk`, if the documents have its schema.
    fn target(&self, gvk: Gvk, subresource: Option<&'static str>) -> Option<Target<'_>> {
        let object = self.defs.name_of(&gvk)?;
        let list_kind = Gvk::new(&gvk.group, &gvk.version, &format!("{}List", gvk.kind));
        let list = self.defs.name_of(&list_kind).unwrap_or(object);
        Some(Target {
            gvk,
            object,
            list,
            kind: &self.info.resource.kind,
            subresource,
            namespaced: if self.info.namespaced { "Namespaced" } else { "" },
            custom: self.info.custom,
            delete_returns_object: self.info.strategy.return_deleted_object(),
        })
    }

    /// The parameters every operation of a path shares: the name (for an object's paths), the
    /// namespace, `pretty`, and the `query` options of a path whose operation takes them (the watch and
    /// all-namespaces lists), sorted by name as kube sorts them.
    fn path_params(&self, with_name: bool, with_namespace: bool, query: &[Param]) -> Value {
        let mut all = Vec::new();
        if with_name {
            let text = format!("name of the {}", self.info.resource.kind);
            all.push(json!({"description": text, "in": "path", "name": "name", "required": true, "schema": {"type": "string", "uniqueItems": true}}));
        }
        if with_namespace {
            let text = "the namespace of the object";
            all.push(json!({"description": text, "in": "path", "name": "namespace", "required": true, "schema": {"type": "string", "uniqueItems": true}}));
        }
        all.extend(query.iter().chain([&PRETTY]).map(query_param));
        all.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        all.into()
    }

    /// Adds a path with `ops` (none: no path, as kube publishes no path without an operation).
    fn insert(
        &self,
        paths: &mut Map<String, Value>,
        path: &str,
        ops: Vec<(&'static str, Operation)>,
        path_params: Value,
    ) {
        if ops.is_empty() {
            return;
        }
        let mut item = Map::new();
        for (method, op) in ops {
            let mut value = json!({
                "description": op.description,
                "operationId": format!("{}{}{}", op.verb, self.gv.id, op.rest),
                "responses": op.responses,
                "tags": [self.gv.tag],
                "x-kubernetes-action": op.action,
                "x-kubernetes-group-version-kind": op.gvk,
            });
            if !op.params.is_empty() {
                value["parameters"] = params(op.params);
            }
            if let Some(body) = op.body {
                value["requestBody"] = body;
            }
            item.insert(method.to_string(), value);
        }
        item.insert("parameters".into(), path_params);
        paths.insert(path.to_string(), item.into());
    }
}

fn query_param(p: &Param) -> Value {
    json!({"description": p.2, "in": "query", "name": p.0, "schema": {"type": p.1, "uniqueItems": true}})
}
