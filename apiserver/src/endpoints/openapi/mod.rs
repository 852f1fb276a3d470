//! `/openapi/v3`: the index of group versions and one OpenAPI 3 document per served group version, which
//! kubectl reads before `create -f`, `apply`, `replace`, `edit` and `explain` (to learn that the server
//! validates fields itself, to compute strategic merge patches, and to explain a kind's fields).
//!
//! The documents are generated from the [`Catalog`](crate::apis::Catalog) and the Rust types' schemas
//! ([`schemas`], [`crate::registry::kinds`], the hand-kept facts of [`crate::registry::extensions`]) with every path and operation of each
//! resource ([`paths`]), built together and serialized once ([`build`]), then cached in [`OpenApiCache`]
//! until the catalog changes (a CRD established or removed: [`crate::endpoints::Served::generation`]).
//!
//! The answers follow kube-apiserver's handlers: the index as the aggregator serves it (no ETag, the
//! content type Go sniffs, `text/plain`), a document as k8s.io/kube-openapi's `handler3` serves it (ETag
//! the document's hash; with a `hash` query parameter that matches, `Cache-Control: public, immutable` and
//! a year's `Expires`; with one that does not, a 301 to the current hash; `If-None-Match` answered 304;
//! `Vary: Accept`; JSON only here, so a client that accepts nothing but the protobuf form gets 406), and
//! an unknown group version a bare 404. `/openapi/v2` is not served (404): kubectl 1.32 reads v3 and turns
//! to v2 only for what v3 lacks (and skips what v2 cannot tell it).

pub(crate) mod build;
pub(crate) mod paths;
pub(crate) mod schemas;

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};

use crate::endpoints::query::Query;
use crate::endpoints::response::full;
use crate::endpoints::{ApiServer, Body};
use crate::registry::system::{parse_rfc3339, rfc3339};
use build::Documents;

/// The documents of the current catalog, built on first use and kept until the catalog changes.
#[derive(Default)]
pub(crate) struct OpenApiCache {
    built: Mutex<Option<Built>>,
}

#[derive(Clone)]
struct Built {
    docs: Arc<Documents>,
    /// When they were built (seconds since the epoch): the documents' `Last-Modified`.
    at_unix_s: i64,
    /// The generation of the catalog they describe ([`crate::endpoints::Served`]).
    generation: u64,
}

impl OpenApiCache {
    /// The documents of `server`'s catalog, built now if they are not yet.
    fn get(&self, server: &ApiServer) -> Result<Built, String> {
        let served = server.served();
        let mut built = self.built.lock().expect("the OpenAPI cache lock is never poisoned");
        if let Some(b) = built.as_ref().filter(|b| b.generation == served.generation) {
            return Ok(b.clone());
        }
        let b = Built {
            docs: Arc::new(build::build(&served.catalog)?),
            at_unix_s: server.clock.now_unix_s(),
            generation: served.generation,
        };
        *built = Some(b.clone());
        Ok(b)
    }
}

/// `/openapi/v3`.
pub(crate) fn index(server: &ApiServer) -> Response<Body> {
    let built = match server.openapi.get(server) {
        Ok(built) => built,
        Err(err) => return failed(&err),
    };
    let body = built.docs.index.clone();
    Response::builder()
        .status(StatusCode::OK)
        .header("Accept-Ranges", "bytes")
        .header("Cache-Control", "no-cache, private")
        .header("Content-Length", body.len())
        .header("Content-Type", "text/plain; charset=utf-8")
        .header("Last-Modified", http_date(server.clock.now_unix_s(), "GMT"))
        .body(full(body))
        .expect("valid headers")
}

/// `/openapi/v3/<path>`: the document of the group version at `path` (`api/v1`, `apis/apps/v1`).
/// A HEAD gets the same answer, which hyper sends without the body.
pub(crate) fn group_version(server: &ApiServer, path: &str, query: &Query, headers: &HeaderMap) -> Response<Body> {
    let built = match server.openapi.get(server) {
        Ok(built) => built,
        Err(err) => return failed(&err),
    };
    let Some(doc) = built.docs.docs.get(path) else {
        return bare(StatusCode::NOT_FOUND).header("Cache-Control", "no-cache, private").body(empty()).expect("valid");
    };
    if !accepts_json(headers) {
        let answer =
            bare(StatusCode::NOT_ACCEPTABLE).header("Cache-Control", "no-cache, private").header("Vary", "Accept");
        return answer.body(empty()).expect("valid headers");
    }
    let etag = format!("\"{}\"", doc.hash);
    // With the current hash the document is immutable: handler3 replaces the server's default
    // `no-cache, private` and adds a year's `Expires`.
    let hash = query.first("hash").filter(|h| !h.is_empty());
    let immutable = hash == Some(doc.hash.as_str());
    let mut answer = bare(StatusCode::OK)
        .header("Cache-Control", if immutable { "public, immutable" } else { "no-cache, private" })
        .header("Content-Type", "application/json")
        .header("Etag", &etag)
        .header("Vary", "Accept");
    if hash.is_some() && !immutable {
        // Go's http.Redirect writes no body once the Content-Type is set, as handler3 has set it.
        let location = format!("/openapi/v3/{path}?hash={}", doc.hash);
        return answer.status(StatusCode::MOVED_PERMANENTLY).header("Location", location).body(empty()).expect("valid");
    }
    if immutable {
        answer = answer.header("Expires", http_date(one_year_later(server.clock.now_unix_s()), "UTC"));
    }
    if if_none_match(headers, &etag) {
        return answer.status(StatusCode::NOT_MODIFIED).body(empty()).expect("valid headers");
    }
    answer
        .header("Accept-Ranges", "bytes")
        .header("Content-Length", doc.bytes.len())
        .header("Last-Modified", http_date(built.at_unix_s, "GMT"))
        .body(full(doc.bytes.clone()))
        .expect("valid headers")
}

fn bare(status: StatusCode) -> http::response::Builder {
    Response::builder().status(status)
}

fn empty() -> Body {
    full(Bytes::new())
}

/// The documents could not be built (the extensions table no longer fits the types): handler3's 500.
fn failed(err: &str) -> Response<Body> {
    tracing::error!(error = err, "building the OpenAPI documents");
    bare(StatusCode::INTERNAL_SERVER_ERROR).body(empty()).expect("valid headers")
}

/// Whether `Accept` allows JSON (no `Accept` allows anything), as handler3 matches its clauses.
fn accepts_json(headers: &HeaderMap) -> bool {
    let accept =
        headers.get_all(http::header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).collect::<Vec<_>>().join(",");
    if accept.trim().is_empty() {
        return true;
    }
    accept.split(',').any(|clause| {
        let media = clause.split(';').next().unwrap_or("").trim();
        let (ty, sub) = media.split_once('/').unwrap_or((media, ""));
        (ty == "application" || ty == "*") && (sub == "json" || sub == "*")
    })
}

/// Whether `If-None-Match` names `etag` (or `*`): Go's `ServeContent` then answers 304.
fn if_none_match(headers: &HeaderMap, etag: &str) -> bool {
    let weak = |t: &str| t.trim().trim_start_matches("W/").to_string();
    headers
        .get_all(http::header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim() == "*" || weak(t) == weak(etag))
}

/// Seconds since the epoch as an HTTP date (`Mon, 02 Jan 2006 15:04:05 GMT`); kube writes `Expires` in
/// Go's RFC 1123 form, whose zone reads `UTC` on a server running in UTC.
fn http_date(unix_s: i64, zone: &str) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let text = rfc3339(unix_s);
    let month: usize = text[5..7].parse().expect("rfc3339 writes a month");
    let weekday = DAYS[usize::try_from(unix_s.div_euclid(86_400).rem_euclid(7)).expect("0..7")];
    format!("{weekday}, {} {} {} {} {zone}", &text[8..10], MONTHS[month - 1], &text[0..4], &text[11..19])
}

/// The same date and time a year later, as Go's `AddDate(1, 0, 0)` (29 February becomes 1 March).
fn one_year_later(unix_s: i64) -> i64 {
    let text = rfc3339(unix_s);
    let year: i64 = text[0..4].parse().expect("rfc3339 writes a year");
    parse_rfc3339(&format!("{:04}{}", year + 1, &text[4..])).unwrap_or(unix_s + 365 * 86_400)
}

#[cfg(test)]
mod tests;
