//! Request options from the query string, as kube's parameter codec reads them
//! (`metainternalversionscheme.ParameterCodec` over `url.Values`): the first value of each key wins,
//! integers parse as Go's `strconv.ParseInt` (its error text is the 400's message), booleans are true
//! unless `0` or `false` (any case), and list options are validated as `ValidateListOptions` does (422
//! on `ListOptions.meta.k8s.io`). Query strings such as `?&watch=true` or a bare `?` are fine.

use crate::endpoints::error::ApiError;
use crate::registry::admission::AdmissionHook;
use crate::registry::field_error::FieldError;
use crate::registry::options::{CreateOptions, UpdateOptions};
use crate::registry::user::UserInfo;
use crate::registry::ListRequest;
use crate::storage::{GetOptions, ResourceVersionMatch};

/// The decoded query pairs, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Query(pub Vec<(String, String)>);

impl Query {
    /// Decodes a raw query string (`a=1&b=x%20y`; `+` is a space).
    pub(crate) fn parse(raw: Option<&str>) -> Query {
        let raw = raw.unwrap_or("");
        Query(form_urlencoded::parse(raw.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
    }

    /// The first value of `key`.
    pub(crate) fn first(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order.
    pub(crate) fn all(&self, key: &str) -> Vec<String> {
        self.0.iter().filter(|(k, _)| k == key).map(|(_, v)| v.clone()).collect()
    }

    /// `Convert_Slice_string_To_bool`: present and neither `0` nor `false`.
    pub(crate) fn bool(&self, key: &str) -> bool {
        self.first(key).is_some_and(go_truthy)
    }

    /// `Convert_Slice_string_To_Pointer_bool`: absent is `None`.
    pub(crate) fn opt_bool(&self, key: &str) -> Option<bool> {
        self.first(key).map(go_truthy)
    }

    /// `Convert_Slice_string_To_int64` (absent is `None`), failing with Go's text.
    pub(crate) fn int(&self, key: &str) -> Result<Option<i64>, ApiError> {
        self.first(key).map(parse_go_int).transpose().map_err(ApiError::BadRequest)
    }

    /// The deprecated `pretty` parameter, as `isPrettyPrint` reads it (`strconv.ParseBool`, errors false).
    pub(crate) fn pretty(&self) -> Option<bool> {
        let value = self.first("pretty").filter(|v| !v.is_empty())?;
        Some(matches!(value, "1" | "t" | "T" | "TRUE" | "true" | "True"))
    }
}

/// How kube's query conversion reads a boolean.
pub(crate) fn go_truthy(value: &str) -> bool {
    !(value == "0" || value.eq_ignore_ascii_case("false"))
}

/// `strconv.ParseInt(text, 10, 64)`, with Go's error text.
pub(crate) fn parse_go_int(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.ParseInt: parsing {}: invalid syntax", crate::go_text::quote(text)));
    }
    text.parse::<i64>()
        .map_err(|_| format!("strconv.ParseInt: parsing {}: value out of range", crate::go_text::quote(text)))
}

/// A list or watch request as the query describes it.
#[derive(Clone, Debug, Default)]
pub(crate) struct ListQuery {
    pub request: ListRequest,
    /// `timeoutSeconds`, for watches.
    pub timeout_seconds: Option<i64>,
}

/// Reads and validates list options; `watch_by_path` is the deprecated `/watch/` form of the request.
pub(crate) fn list_query(query: &Query, watch_by_path: bool, watch_list_enabled: bool) -> Result<ListQuery, ApiError> {
    let mut request = ListRequest {
        label_selector: query.first("labelSelector").unwrap_or("").to_string(),
        field_selector: query.first("fieldSelector").unwrap_or("").to_string(),
        resource_version: query.first("resourceVersion").unwrap_or("").to_string(),
        ..ListRequest::default()
    };
    let watch = watch_by_path || query.bool("watch");
    request.allow_watch_bookmarks = query.bool("allowWatchBookmarks");
    let match_text = query.first("resourceVersionMatch").unwrap_or("").to_string();
    let timeout_seconds = query.int("timeoutSeconds")?;
    request.limit = query.int("limit")?.unwrap_or(0);
    request.continue_token = query.first("continue").unwrap_or("").to_string();
    request.send_initial_events = query.opt_bool("sendInitialEvents");

    let mut match_text = match_text;
    // `SetListOptionsDefaults`: with WatchList on, a legacy watch (from "" or "0") streams its initial
    // state as a watch-list does.
    if watch_list_enabled
        && watch
        && request.send_initial_events.is_none()
        && match_text.is_empty()
        && (request.resource_version.is_empty() || request.resource_version == "0")
    {
        request.send_initial_events = Some(true);
        match_text = "NotOlderThan".into();
    }
    let errors = if watch {
        validate_watch(&request, &match_text, watch_list_enabled)
    } else {
        validate_list(&request, &match_text)
    };
    if !errors.is_empty() {
        return Err(ApiError::InvalidOptions { kind: "ListOptions".into(), errors });
    }
    request.resource_version_match = match match_text.as_str() {
        "Exact" => Some(ResourceVersionMatch::Exact),
        "NotOlderThan" => Some(ResourceVersionMatch::NotOlderThan),
        _ => None,
    };
    Ok(ListQuery { request, timeout_seconds })
}

/// `ValidateListOptions` for a list.
fn validate_list(request: &ListRequest, match_text: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if !match_text.is_empty() {
        if request.resource_version.is_empty() {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !request.continue_token.is_empty() {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if match_text != "Exact" && match_text != "NotOlderThan" {
            errs.push(FieldError::not_supported("resourceVersionMatch", match_text, &["Exact", "NotOlderThan", ""]));
        }
        if match_text == "Exact" && request.resource_version == "0" {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if request.send_initial_events.is_some() {
        errs.push(FieldError::forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"));
    }
    errs
}

/// `validateWatchOptions`.
fn validate_watch(request: &ListRequest, match_text: &str, watch_list_enabled: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if request.send_initial_events.is_some() {
        if match_text != "NotOlderThan" {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !watch_list_enabled {
            errs.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            ));
        }
    }
    if !match_text.is_empty() {
        if request.send_initial_events.is_none() {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if match_text != "NotOlderThan" {
            errs.push(FieldError::not_supported("resourceVersionMatch", match_text, &["NotOlderThan"]));
        }
        if !request.continue_token.is_empty() {
            errs.push(FieldError::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    errs
}

/// `GetOptions` from the query.
pub(crate) fn get_options(query: &Query) -> GetOptions {
    GetOptions { resource_version: query.first("resourceVersion").unwrap_or("").to_string() }
}

/// The options every write shares: `dryRun` (repeated), `fieldManager`, `fieldValidation`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct WriteQuery {
    pub dry_run: Vec<String>,
    pub field_manager: String,
    pub field_validation: String,
}

/// Reads the write options.
pub(crate) fn write_query(query: &Query) -> WriteQuery {
    WriteQuery {
        dry_run: query.all("dryRun"),
        field_manager: query.first("fieldManager").unwrap_or("").to_string(),
        field_validation: query.first("fieldValidation").unwrap_or("").to_string(),
    }
}

impl WriteQuery {
    /// Who the write's fields go to: `fieldManager`, or else the client's user agent up to its first `/`
    /// (`managerOrUserAgent`: kubectl's `kubectl/v1.32.0 (linux/amd64) ...` is `kubectl`).
    pub(crate) fn manager(&self, user_agent: Option<&str>) -> String {
        if !self.field_manager.is_empty() {
            return self.field_manager.clone();
        }
        user_agent.unwrap_or("").split('/').next().unwrap_or("").to_string()
    }

    /// The options of a create whose fields go to `manager` (`None`: not tracked).
    pub(crate) fn create_options(
        &self,
        manager: Option<String>,
        user: UserInfo,
        admission: AdmissionHook,
    ) -> CreateOptions {
        CreateOptions { dry_run: self.dry_run.clone(), field_manager: manager, user, admission }
    }

    /// The options of an update whose fields go to `manager` (`None`: not tracked).
    pub(crate) fn update_options(&self, manager: Option<String>, admission: AdmissionHook) -> UpdateOptions {
        UpdateOptions { dry_run: self.dry_run.clone(), field_manager: manager, admission }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_query_strings_as_clients_send_them() {
        let q = Query::parse(Some("&watch=true&timeoutSeconds=290&allowWatchBookmarks=true&resourceVersion=100"));
        assert!(q.bool("watch"));
        assert_eq!(q.int("timeoutSeconds").unwrap(), Some(290));
        assert_eq!(q.first("resourceVersion"), Some("100"));
        assert_eq!(Query::parse(Some("")).0, vec![]);
        assert_eq!(Query::parse(None).0, vec![]);
        assert_eq!(Query::parse(Some("labelSelector=env%3Ddev&limit=500")).first("labelSelector"), Some("env=dev"));
    }

    #[test]
    fn booleans_and_integers_read_as_kube_reads_them() {
        for (text, want) in [("true", true), ("1", true), ("yes", true), ("", true), ("0", false), ("FALSE", false)] {
            assert_eq!(go_truthy(text), want, "{text:?}");
        }
        assert_eq!(parse_go_int("-12"), Ok(-12));
        assert_eq!(parse_go_int("abc"), Err(r#"strconv.ParseInt: parsing "abc": invalid syntax"#.to_string()));
        assert_eq!(parse_go_int(""), Err(r#"strconv.ParseInt: parsing "": invalid syntax"#.to_string()));
        assert_eq!(
            parse_go_int("99999999999999999999"),
            Err(r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#.to_string())
        );
    }

    fn list_error(query: &str, watch_list: bool) -> String {
        match list_query(&Query::parse(Some(query)), false, watch_list) {
            Err(err) => err.to_status().message.unwrap(),
            Ok(_) => "ok".into(),
        }
    }

    #[test]
    fn list_options_are_validated() {
        let cases = [
            (
                "resourceVersionMatch=Exact",
                r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"#,
            ),
            (
                "resourceVersion=0&resourceVersionMatch=Exact",
                r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0""#,
            ),
            (
                "resourceVersion=5&resourceVersionMatch=Newest",
                r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", """#,
            ),
            (
                "sendInitialEvents=true",
                r#"ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"#,
            ),
            (
                "watch=1&sendInitialEvents=true",
                r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"#,
            ),
            (
                "watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan",
                r#"ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"#,
            ),
            ("limit=ten", r#"strconv.ParseInt: parsing "ten": invalid syntax"#),
            ("watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "ok"),
            ("resourceVersion=5&resourceVersionMatch=NotOlderThan&limit=3", "ok"),
        ];
        for (query, want) in cases {
            assert_eq!(list_error(query, true), want, "{query}");
        }
    }

    #[test]
    fn a_legacy_watch_streams_its_initial_state_when_watch_list_is_on() {
        let q = list_query(&Query::parse(Some("watch=true")), false, true).unwrap();
        assert_eq!(q.request.send_initial_events, Some(true));
        assert_eq!(q.request.resource_version_match, Some(ResourceVersionMatch::NotOlderThan));
        let q = list_query(&Query::parse(Some("watch=true&resourceVersion=7")), false, true).unwrap();
        assert_eq!(q.request.send_initial_events, None);
        let q = list_query(&Query::parse(Some("watch=true")), false, false).unwrap();
        assert_eq!(q.request.send_initial_events, None);
    }
}
