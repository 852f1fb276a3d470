//! Content negotiation: which serialization a response uses (the `Accept` header) and which a request
//! body is in (`Content-Type`), by kube-apiserver's rules (k8s.io/apiserver
//! `pkg/endpoints/handlers/negotiation`).
//!
//! The server speaks JSON, YAML and Kubernetes protobuf. An `Accept` header is a list of media ranges
//! ordered by preference (q-values, then specificity, as the goautoneg package kube uses sorts them); the
//! first range that one of the serializations satisfies, with parameters the endpoint accepts, wins. The
//! parameters `as`, `g` and `v` ask for a conversion (`as=Table;g=meta.k8s.io;v=v1`,
//! `as=PartialObjectMetadata`), `stream=watch` for the watch stream form, `pretty=1` for indented output.
//! No `Accept` at all means JSON; no acceptable range is a 406.

use std::cmp::Ordering;

/// A serialization the server reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Format {
    Json,
    Yaml,
    Protobuf,
}

impl Format {
    /// Every format, in kube-apiserver's order of preference (the first is the default).
    pub(crate) const ALL: [Format; 3] = [Format::Json, Format::Yaml, Format::Protobuf];

    /// The media type, as `Content-Type` headers and error messages name it.
    pub(crate) fn media_type(self) -> &'static str {
        match self {
            Format::Json => "application/json",
            Format::Yaml => "application/yaml",
            Format::Protobuf => "application/vnd.kubernetes.protobuf",
        }
    }

    /// Whether the format has a watch stream form (YAML has none).
    pub(crate) fn streams(self) -> bool {
        self != Format::Yaml
    }

    fn parts(self) -> (&'static str, &'static str) {
        let (t, s) = self.media_type().split_once('/').expect("media types have a slash");
        (t, s)
    }

    /// The format of a request body's `Content-Type`: JSON when there is none (the Python client sends
    /// none), `None` when the server does not read it.
    pub(crate) fn of_content_type(content_type: Option<&str>) -> Option<Format> {
        let Some(content_type) = content_type.filter(|c| !c.trim().is_empty()) else {
            return Some(Format::Json);
        };
        let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        Format::ALL.into_iter().find(|f| f.media_type() == essence)
    }
}

/// The media types a 406 or 415 lists: every format, or (for watch) every streaming format with
/// `;stream=watch`.
pub(crate) fn supported_media_types(stream: bool) -> Vec<String> {
    Format::ALL
        .into_iter()
        .filter(|f| !stream || f.streams())
        .map(|f| if stream { format!("{};stream=watch", f.media_type()) } else { f.media_type().to_string() })
        .collect()
}

/// The object form a client asks for instead of the resource's own (`as=`, with `g` and `v`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Conversion {
    /// `as=Table`: rows with the resource's printer columns.
    Table,
    /// `as=PartialObjectMetadata`: the object's metadata only.
    PartialObjectMetadata,
    /// `as=PartialObjectMetadataList`: a list of metadata only.
    PartialObjectMetadataList,
}

/// What the `Accept` header chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Negotiated {
    pub format: Format,
    pub conversion: Option<Conversion>,
    /// `pretty=1`: indented output.
    pub pretty: bool,
}

/// Why nothing in `Accept` can be served (406 `NotAcceptable`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotAcceptable {
    pub stream: bool,
}

impl NotAcceptable {
    /// kube's `errNotAcceptable` text.
    pub(crate) fn message(&self) -> String {
        format!("only the following media types are accepted: {}", supported_media_types(self.stream).join(", "))
    }
}

/// What an endpoint accepts beyond its plain objects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Restrictions {
    /// Resource endpoints convert to Table and metadata forms; discovery and errors do not.
    pub conversions: bool,
    /// The request is a watch: only streaming formats qualify.
    pub stream: bool,
    /// Whether the endpoint speaks protobuf (built-in kinds do; custom resources do not).
    pub protobuf: bool,
}

/// One media range of an `Accept` header.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Clause {
    pub(crate) kind: String,
    pub(crate) sub: String,
    pub(crate) q: f64,
    pub(crate) params: Vec<(String, String)>,
}

/// Parses an `Accept` header as goautoneg's `ParseAccept` does and orders the ranges: higher q first,
/// then the more specific (`a/b` before `a/*` before `*/*`), then header order.
pub(crate) fn parse_accept(header: &str) -> Vec<Clause> {
    let mut clauses = Vec::new();
    for part in header.split(',') {
        let mut pieces = part.split(';');
        let media = pieces.next().unwrap_or("").trim();
        let (kind, sub) = match media.split_once('/') {
            Some((t, s)) => (t.trim().to_string(), s.trim().to_string()),
            None if media == "*" => ("*".to_string(), "*".to_string()),
            None => continue,
        };
        let mut clause = Clause { kind, sub, q: 1.0, params: Vec::new() };
        for param in pieces {
            let (k, v) = param.split_once('=').unwrap_or((param, ""));
            let (k, v) = (k.trim(), v.trim().trim_matches('"'));
            if k == "q" {
                clause.q = v.parse().unwrap_or(0.0);
            } else if !k.is_empty() {
                clause.params.push((k.to_string(), v.to_string()));
            }
        }
        clauses.push(clause);
    }
    let specificity = |c: &Clause| match (c.kind.as_str(), c.sub.as_str()) {
        ("*", _) => 0,
        (_, "*") => 1,
        _ => 2,
    };
    clauses.sort_by(|a, b| {
        b.q.partial_cmp(&a.q).unwrap_or(Ordering::Equal).then_with(|| specificity(b).cmp(&specificity(a)))
    });
    clauses
}

/// Chooses the response's serialization for `accept` (the header's value, if any). `pretty_query` is the
/// deprecated `?pretty=` parameter and `user_agent` the client's: curl, wget and browsers get indented
/// output, as kube's `isPrettyPrint` decides.
pub(crate) fn negotiate(
    accept: Option<&str>,
    restrictions: Restrictions,
    pretty_query: Option<bool>,
    user_agent: &str,
) -> Result<Negotiated, NotAcceptable> {
    let pretty_by_client = pretty_query
        .unwrap_or_else(|| ["curl", "Wget", "Mozilla/5.0"].iter().any(|prefix| user_agent.starts_with(prefix)));
    let accept = accept.map(str::trim).filter(|a| !a.is_empty());
    let Some(accept) = accept else {
        return Ok(Negotiated { format: Format::Json, conversion: None, pretty: pretty_by_client });
    };
    for clause in parse_accept(accept) {
        for format in Format::ALL {
            let (kind, sub) = format.parts();
            let matches = (clause.kind == kind && (clause.sub == sub || clause.sub == "*"))
                || (clause.kind == "*" && clause.sub == "*");
            if !matches
                || (restrictions.stream && !format.streams())
                || (format == Format::Protobuf && !restrictions.protobuf)
            {
                continue;
            }
            if let Some(mut negotiated) = accept_params(&clause.params, format, restrictions) {
                negotiated.pretty |= pretty_by_client;
                return Ok(negotiated);
            }
        }
    }
    Err(NotAcceptable { stream: restrictions.stream })
}

/// The parameters of a matching range, or `None` if the endpoint cannot honour them
/// (`acceptMediaTypeOptions`).
fn accept_params(params: &[(String, String)], format: Format, restrictions: Restrictions) -> Option<Negotiated> {
    let mut negotiated = Negotiated { format, conversion: None, pretty: false };
    let (mut as_kind, mut group, mut version) = (None, None, None);
    for (key, value) in params {
        match key.as_str() {
            "as" => as_kind = Some(value.as_str()),
            "g" => group = Some(value.as_str()),
            "v" => version = Some(value.as_str()),
            "stream" if !value.is_empty() && (value != "watch" || !format.streams()) => {
                return None;
            }
            // Asking for the server's own version of the group is not supported by resource endpoints.
            "sv" if !value.is_empty() => {
                return None;
            }
            "pretty" => negotiated.pretty = value == "1",
            _ => {}
        }
    }
    if as_kind.is_none() && group.is_none() && version.is_none() {
        return Some(negotiated);
    }
    if !restrictions.conversions {
        return None;
    }
    // kube serves the meta.k8s.io forms in v1 (and Table in v1beta1, which kubesim does not serve).
    if group != Some("meta.k8s.io") || version != Some("v1") {
        return None;
    }
    negotiated.conversion = Some(match as_kind? {
        // A Table has no protobuf form (metav1.Table is `+protobuf=false`); the client's next choice wins.
        "Table" if format == Format::Protobuf => return None,
        "Table" => Conversion::Table,
        "PartialObjectMetadata" => Conversion::PartialObjectMetadata,
        "PartialObjectMetadataList" => Conversion::PartialObjectMetadataList,
        _ => return None,
    });
    Some(negotiated)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESOURCE: Restrictions = Restrictions { conversions: true, stream: false, protobuf: true };
    const WATCH: Restrictions = Restrictions { conversions: true, stream: true, protobuf: true };
    const PLAIN: Restrictions = Restrictions { conversions: false, stream: false, protobuf: true };
    const JSON_ONLY: Restrictions = Restrictions { conversions: true, stream: false, protobuf: false };

    fn chosen(accept: Option<&str>, restrictions: Restrictions) -> Option<(Format, Option<Conversion>)> {
        negotiate(accept, restrictions, None, "").ok().map(|n| (n.format, n.conversion))
    }

    #[test]
    fn picks_what_kube_apiserver_picks() {
        use Conversion::*;
        use Format::*;
        let table = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        let cases: &[(Option<&str>, Restrictions, Option<(Format, Option<Conversion>)>)] = &[
            (None, RESOURCE, Some((Json, None))),
            (Some(""), RESOURCE, Some((Json, None))),
            (Some("*/*"), RESOURCE, Some((Json, None))),
            (Some("application/*"), RESOURCE, Some((Json, None))),
            (Some("application/yaml"), RESOURCE, Some((Yaml, None))),
            (Some("application/vnd.kubernetes.protobuf,application/json"), RESOURCE, Some((Protobuf, None))),
            (Some("application/json;q=0.5,application/yaml"), RESOURCE, Some((Yaml, None))),
            (Some("text/html"), RESOURCE, None),
            (Some(table), RESOURCE, Some((Json, Some(Table)))),
            (Some(table), PLAIN, Some((Json, None))),
            (Some("application/json;as=Table;v=v1beta1;g=meta.k8s.io"), RESOURCE, None),
            (
                Some("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"),
                RESOURCE,
                Some((Json, Some(PartialObjectMetadataList))),
            ),
            (Some("application/json;as=Foo;v=v1;g=meta.k8s.io,application/json"), RESOURCE, Some((Json, None))),
            (Some("application/yaml"), WATCH, None),
            (Some("application/yaml,application/json"), WATCH, Some((Json, None))),
            (Some("application/json;stream=watch"), WATCH, Some((Json, None))),
            (Some("application/json;stream=other"), WATCH, None),
            (Some("application/vnd.kubernetes.protobuf,application/json"), JSON_ONLY, Some((Json, None))),
            (Some("application/vnd.kubernetes.protobuf"), JSON_ONLY, None),
        ];
        for (accept, restrictions, want) in cases {
            assert_eq!(chosen(*accept, *restrictions), *want, "{accept:?} {restrictions:?}");
        }
    }

    #[test]
    fn pretty_for_people() {
        assert!(negotiate(None, RESOURCE, None, "curl/8.5.0").unwrap().pretty);
        assert!(!negotiate(None, RESOURCE, Some(false), "curl/8.5.0").unwrap().pretty);
        assert!(!negotiate(None, RESOURCE, None, "kubectl/v1.32.4").unwrap().pretty);
        assert!(negotiate(Some("application/json;pretty=1"), RESOURCE, None, "").unwrap().pretty);
    }

    #[test]
    fn errors_list_the_supported_types() {
        assert_eq!(
            NotAcceptable { stream: false }.message(),
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
        assert_eq!(
            NotAcceptable { stream: true }.message(),
            "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
        );
    }

    #[test]
    fn request_bodies() {
        assert_eq!(Format::of_content_type(None), Some(Format::Json));
        assert_eq!(Format::of_content_type(Some("application/json; charset=utf-8")), Some(Format::Json));
        assert_eq!(Format::of_content_type(Some("application/yaml")), Some(Format::Yaml));
        assert_eq!(Format::of_content_type(Some("application/vnd.kubernetes.protobuf")), Some(Format::Protobuf));
        assert_eq!(Format::of_content_type(Some("text/plain")), None);
    }
}
