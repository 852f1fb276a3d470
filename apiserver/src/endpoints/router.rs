//! The top of the request path, [`ApiServer::handle`]: resolve the request, serve the non-resource paths
//! (discovery, OpenAPI, version, health, metrics), and for resource requests negotiate the answer's
//! format, read the body (at most 3 MiB), call the verb's handler under the request timeout (watches are
//! long-running and have their own), record the metrics, and turn any failure into its `Status`.

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;

use crate::endpoints::codec;
use crate::endpoints::error::{ApiError, MAX_REQUEST_BODY_BYTES};
use crate::endpoints::handlers::{self, Call};
use crate::endpoints::metrics::RequestLabels;
use crate::endpoints::negotiate::{negotiate, Restrictions};
use crate::endpoints::query::Query;
use crate::endpoints::request_info::{Action, RequestInfo};
use crate::endpoints::response::{self, Responder};
use crate::endpoints::system::Probe;
use crate::endpoints::table::IncludeObject;
use crate::endpoints::{admit, authn, authz, discovery, openapi, system, ApiServer, Body};
use crate::registry::user::UserInfo;

impl ApiServer {
    /// Answers one request.
    pub async fn handle<B>(self: Arc<Self>, req: Request<B>) -> Response<Body>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = req.into_parts();
        let path = percent_encoding::percent_decode_str(parts.uri.path()).decode_utf8_lossy().into_owned();
        let query = Query::parse(parts.uri.query());
        let info = match RequestInfo::new(parts.method.as_str(), &path, &query.0) {
            Ok(info) => info,
            Err(_) => return response::error(&ApiError::Generic { code: 404 }, None),
        };
        let user = match self.identify(&parts).await {
            Ok(user) => user,
            Err(err) => return response::error(&err, None),
        };
        let method = parts.method.as_str().to_lowercase();
        if let Err(err) = authz::check(&self, &authz::attributes(&info, &user, &method)).await {
            return response::error(&err, None);
        }
        if !info.is_resource_request {
            return self.non_resource(&path, &parts.method, &query, &parts.headers).await;
        }
        let needs_body = matches!(parts.method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE);
        let admission = admit::hook(&self, &user);
        let call =
            Call { info, query, method: parts.method, headers: parts.headers, body: Bytes::new(), user, admission };
        // Reading the body counts against the request timeout, as in kube-apiserver, where the handler
        // reads it: a client that sends its body too slowly gets the 504 too.
        let body = async move {
            if needs_body {
                read_body(body).await
            } else {
                Ok(Bytes::new())
            }
        };
        self.resource_request(call, body).await
    }

    /// Who the request runs as: authentication (a 401 if it fails), then impersonation (a 400 for headers
    /// that make no sense, a 403 for an impersonation the real user may not do).
    async fn identify(&self, parts: &http::request::Parts) -> Result<UserInfo, ApiError> {
        let certificates = parts.extensions.get::<authn::ClientCertificates>().cloned().unwrap_or_default();
        let user = authn::authenticate(self, &parts.headers, &certificates).await.map_err(|why| {
            tracing::debug!(reason = %why.0, "unauthenticated request");
            ApiError::Unauthorized
        })?;
        let asked = authn::impersonation::Impersonation::from_headers(&parts.headers).map_err(ApiError::BadRequest)?;
        let Some(asked) = asked else { return Ok(user) };
        for check in asked.checks(&user) {
            authz::check(self, &check).await?;
        }
        Ok(asked.user())
    }

    async fn resource_request(
        self: Arc<Self>,
        mut call: Call,
        body: impl std::future::Future<Output = Result<Bytes, ApiError>>,
    ) -> Response<Body> {
        let started = tokio::time::Instant::now();
        let served = self.served();
        let (target, action) = match handlers::route(&served, &call) {
            Ok(routed) => routed,
            Err(err) => return response::error(&err, None),
        };
        let labels = RequestLabels::resource(
            action,
            &target.resource.resource.group,
            &target.resource.resource.version,
            &target.resource.resource.plural,
            target.sub.map_or("", |s| s.name),
            &target.namespace,
            &target.name,
            !call.query.all("dryRun").is_empty(),
        );
        // Built-in kinds speak protobuf; custom resources and CRDs do not (nor does the simulation).
        let protobuf = codec::PROTOBUF && target.resource.protobuf;
        let restrictions = Restrictions { conversions: true, stream: action == Action::Watch, protobuf };
        let user_agent = call.header("user-agent").unwrap_or("").to_string();
        let negotiated = match negotiate(call.header("accept"), restrictions, call.query.pretty(), &user_agent) {
            Ok(n) => n,
            Err(err) => return self.finish(&labels, started, response::error(&ApiError::from(err), None)),
        };
        let include = match IncludeObject::from_query(&call.query) {
            Ok(include) => include,
            Err(err) => return self.finish(&labels, started, response::error(&err, Some(&negotiated))),
        };
        if action == Action::Watch {
            let answer = handlers::watch::watch(self.clone(), &call, &target, &negotiated, include, &labels).await;
            let answer = answer.unwrap_or_else(|err| response::error(&err, Some(&negotiated)));
            return self.finish(&labels, started, answer);
        }
        let responder = Responder {
            negotiated: negotiated.clone(),
            gzip: call.header("accept-encoding").is_some_and(|e| e.split(',').any(|c| c.trim().starts_with("gzip"))),
            head: call.method == Method::HEAD,
            printer: Some(target.resource.printer.clone()),
            include,
            now_unix_s: self.clock.now_unix_s(),
            warnings: target.resource.deprecated.map(|w| vec![w.to_string()]).unwrap_or_default(),
        };
        let work = async {
            call.body = body.await?;
            let call = &call;
            match action {
                Action::Get => handlers::read::get(call, &target, &responder).await,
                Action::List => handlers::read::list(&self, call, &target, &responder).await,
                Action::Create => handlers::write::create(&self, call, &target, &responder).await,
                Action::Update => handlers::write::update(call, &target, &responder).await,
                Action::Patch => handlers::patch::patch(call, &target, &responder).await,
                Action::Delete => handlers::delete::delete(call, &target, &responder).await,
                Action::DeleteCollection => handlers::delete::delete_collection(&self, call, &target, &responder).await,
                Action::Watch => unreachable!("watches are served above"),
            }
        };
        let answer = match tokio::time::timeout(self.config.request_timeout, work).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(err)) => {
                let mut answer = response::error(&err, Some(&negotiated));
                // A deprecated resource's warning goes with its errors too (kube adds it before the handler).
                if let Some(warning) = target.resource.deprecated {
                    answer.headers_mut().append("Warning", response::warning_header(warning));
                }
                answer
            }
            Err(_) => response::status_response(&request_timeout(), Some(&negotiated)),
        };
        self.finish(&labels, started, answer)
    }

    fn finish(&self, labels: &RequestLabels, started: tokio::time::Instant, answer: Response<Body>) -> Response<Body> {
        self.metrics.observe(labels, answer.status().as_u16(), started.elapsed());
        answer
    }

    async fn non_resource(
        &self,
        path: &str,
        method: &Method,
        query: &Query,
        headers: &http::HeaderMap,
    ) -> Response<Body> {
        let segments: Vec<&str> = path.trim_matches('/').split('/').filter(|s| !s.is_empty()).collect();
        let probe = match segments.first() {
            Some(&"healthz") => Some(Probe::Healthz),
            Some(&"livez") => Some(Probe::Livez),
            Some(&"readyz") => Some(Probe::Readyz),
            _ => None,
        };
        if let Some(probe) = probe {
            if segments.len() <= 2 {
                if let Some(answer) = system::health(self, probe, segments.get(1).copied(), query).await {
                    return answer;
                }
            }
            return response::error(&ApiError::NoRoute, None);
        }
        if *method != Method::GET && *method != Method::HEAD {
            let known = matches!(
                segments.as_slice(),
                ["version"] | ["api"] | ["apis"] | ["api", _] | ["apis", ..] | ["openapi", ..] | ["metrics"]
            );
            let err = if known { ApiError::Generic { code: 405 } } else { ApiError::NoRoute };
            return response::error(&err, None);
        }
        let served = self.served();
        let catalog = &served.catalog;
        if let ["apis", group, version] = segments.as_slice() {
            let custom = catalog.in_group_version(group, version).any(|info| info.custom);
            if custom && self.failpoints.eval(crate::failpoint::Point::BeforeCustomDiscovery).await.is_err() {
                let message = "the server is currently unable to handle the request".to_string();
                return response::error(&ApiError::Unavailable(message), None);
            }
        }
        let answer = match segments.as_slice() {
            [] => Some(root(catalog)),
            ["version"] => Some(system::version(self)),
            ["metrics"] => Some(system::metrics(self)),
            ["api"] => Some(discovery::api(catalog, headers, &self.config.advertise_address)),
            ["apis"] => Some(discovery::apis(catalog, headers)),
            ["api", version] => discovery::resource_list(catalog, "", version),
            ["apis", group] => discovery::group(catalog, group),
            ["apis", group, version] => discovery::resource_list(catalog, group, version),
            ["openapi", "v3"] => Some(openapi::index(self)),
            ["openapi", "v3", rest @ ..] => Some(openapi::group_version(self, &rest.join("/"), query, headers)),
            _ => None,
        };
        answer.unwrap_or_else(|| response::error(&ApiError::NoRoute, None))
    }
}

/// `/`: the paths the server serves, as kube-apiserver lists them.
fn root(catalog: &crate::apis::Catalog) -> Response<Body> {
    let mut paths: Vec<String> = vec!["/api".into(), "/api/v1".into(), "/apis".into()];
    for (group, versions) in catalog.groups() {
        paths.push(format!("/apis/{group}"));
        for version in versions {
            paths.push(format!("/apis/{group}/{version}"));
        }
    }
    for p in ["/healthz", "/livez", "/metrics", "/openapi/v3", "/readyz", "/version"] {
        paths.push(p.into());
    }
    paths.sort();
    let mut body = serde_json::to_vec_pretty(&serde_json::json!({ "paths": paths })).expect("paths serialize");
    body.push(b'\n');
    Response::builder()
        .status(StatusCode::OK)
        .header("Content-Type", "application/json")
        .body(response::full(Bytes::from(body)))
        .expect("valid headers")
}

/// The 504 of a request that ran past the request timeout (`NewTimeoutError`).
fn request_timeout() -> k8s_openapi::apimachinery::pkg::apis::meta::v1::Status {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Status, StatusDetails};
    Status {
        code: Some(504),
        message: Some("Timeout: request did not complete within requested timeout - context deadline exceeded".into()),
        reason: Some("Timeout".into()),
        status: Some("Failure".into()),
        details: Some(StatusDetails::default()),
        ..Status::default()
    }
}

/// Reads a request body of at most [`MAX_REQUEST_BODY_BYTES`].
async fn read_body<B>(body: B) -> Result<Bytes, ApiError>
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let limited = http_body_util::Limited::new(body, MAX_REQUEST_BODY_BYTES);
    match limited.collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => Err(ApiError::BodyTooLarge),
        Err(err) => Err(ApiError::BadRequest(format!("error reading the request body: {err}"))),
    }
}
