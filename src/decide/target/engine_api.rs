//! A container engine's HTTP API as curl reaches it, over the engine's socket
//! (`--unix-socket /var/run/docker.sock http://localhost/v1.45/containers/NAME/logs`), on a
//! port, or through a proxy to it: the containers a path names, and what it does to them. The
//! URL is read as curl sends it: its `{a,b}` and `[a-z]` globs expanded, dot segments removed,
//! percent escapes decoded.

use super::{Resolved, first_mesh, host, resolve};
use crate::catalog::Catalog;
use crate::rule::Rule;
use crate::rules::Role;

/// At most this many URLs are expanded from one word's globs; past it the names are unknown.
const MAX_URLS: usize = 64;

/// A request to an engine's container endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// The container each expansion of the URL names; `None` where the globs expand to more
    /// URLs than are read.
    pub names: Option<Vec<String>>,
    /// What it does: the segment after the name (`logs`, `restart`, `json`), or `remove`
    /// for the bare `/containers/NAME` (`DELETE`).
    pub action: String,
}

/// The request `url` makes of an engine's containers; none when no expansion of its path
/// has a container.
pub(crate) fn request(url: &str) -> Option<Request> {
    let Some(urls) = expanded(url) else {
        // Too many to read: any of them may be an engine path.
        return Some(Request {
            names: None,
            action: String::new(),
        });
    };
    let mut found: Option<Request> = None;
    for (name, action) in urls.iter().filter_map(|u| container_of(u)) {
        let request = found.get_or_insert_with(|| Request {
            names: Some(Vec::new()),
            action,
        });
        if let Some(names) = &mut request.names {
            names.push(name);
        }
    }
    found
}

/// A curl URL against the catalog: an ssh URL's host; for an engine API path, the containers
/// it names and, over http, the host whose engine it reaches (`http://atlas:2375/containers/…`,
/// refused as `DOCKER_HOST=tcp://atlas:2375` is). A mesh one wins.
pub(super) fn resolve_url(catalog: &Catalog, value: &str, user: Option<&str>) -> Resolved {
    let over_ssh = resolve(catalog, Role::SshUrl, value, user);
    let Some(request) = request(value) else {
        return over_ssh;
    };
    let Some(names) = request.names else {
        return first_mesh(over_ssh, Resolved::Unknown);
    };
    let engine_host = match over_ssh {
        Resolved::Nothing => host(catalog, value, None, Rule::RemoteDaemon),
        over_ssh => over_ssh,
    };
    names
        .iter()
        .map(|name| resolve(catalog, Role::Container, name, user))
        .fold(engine_host, first_mesh)
}

/// The container one URL's path names, and the action after it.
fn container_of(url: &str) -> Option<(String, String)> {
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("", |at| &rest[at..]),
        // `http:/containers/x/logs` as some write it for a socket, or a bare path.
        None => url.trim_start_matches("http:").trim_start_matches("https:"),
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let mut segments: Vec<String> = Vec::new();
    for segment in path.split('/').map(percent_decoded) {
        match segment.as_str() {
            "." => {}
            ".." => {
                segments.pop();
            }
            _ => segments.push(segment),
        }
    }
    let at = segments.iter().position(|s| s == "containers")?;
    let name = segments.get(at + 1).filter(|n| !n.is_empty())?;
    let action = segments
        .get(at + 2)
        .filter(|a| !a.is_empty())
        .map_or("remove", String::as_str);
    Some((name.clone(), action.to_string()))
}

fn percent_decoded(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = segment.get(at + 1..at + 3).filter(|_| bytes[at] == b'%');
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(byte) => {
                out.push(byte);
                at += 3;
            }
            None => {
                out.push(bytes[at]);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Every URL curl's globs make of `url`: `{a,b}` sets and `[a-z]`/`[1-9]` ranges, left to
/// right; `None` past [`MAX_URLS`]. Each set or range multiplies the URLs built so far, so
/// the work is bounded by the cap, never by the number of sets.
fn expanded(url: &str) -> Option<Vec<String>> {
    let mut urls = vec![String::new()];
    let mut rest = url;
    while !rest.is_empty() {
        let (choices, after): (Vec<String>, &str) = match rest.as_bytes()[0] {
            b'{' => match rest.find('}') {
                Some(close) => (
                    rest[1..close].split(',').map(String::from).collect(),
                    &rest[close + 1..],
                ),
                None => (vec![rest.to_string()], ""),
            },
            b'[' => match rest
                .find(']')
                .and_then(|close| Some((range(&rest[1..close])?, close)))
            {
                Some((choices, close)) => (choices, &rest[close + 1..]),
                None => (vec!["[".to_string()], &rest[1..]),
            },
            _ => {
                let end = rest.find(['{', '[']).unwrap_or(rest.len()).max(1);
                (vec![rest[..end].to_string()], &rest[end..])
            }
        };
        if urls.len().checked_mul(choices.len())? > MAX_URLS {
            return None;
        }
        urls = urls
            .iter()
            .flat_map(|u| choices.iter().map(move |c| format!("{u}{c}")))
            .collect();
        rest = after;
    }
    Some(urls)
}

/// A curl range's values: `a-z`, `0-9`, `001-100` (zero-padded), with a `:STEP`. `None` for
/// text that is no range, or one longer than [`MAX_URLS`].
fn range(spec: &str) -> Option<Vec<String>> {
    let (span, step) = match spec.split_once(':') {
        Some((span, step)) => (span, step.parse::<usize>().ok().filter(|s| *s > 0)?),
        None => (spec, 1),
    };
    let (from, to) = span.split_once('-')?;
    if let (Ok(a), Ok(b)) = (from.parse::<u64>(), to.parse::<u64>()) {
        let width = if from.starts_with('0') { from.len() } else { 0 };
        let count = b.checked_sub(a)? / step as u64 + 1;
        if count > MAX_URLS as u64 {
            return None;
        }
        return Some(
            (a..=b)
                .step_by(step)
                .map(|n| format!("{n:0width$}"))
                .collect(),
        );
    }
    let (mut a, mut b) = (from.chars(), to.chars());
    let (Some(a), None, Some(b), None) = (a.next(), a.next(), b.next(), b.next()) else {
        return None;
    };
    let values: Vec<String> = (a..=b).step_by(step).map(String::from).collect();
    (!values.is_empty() && values.len() <= MAX_URLS).then_some(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_and_action(url: &str) -> Option<(Vec<String>, String)> {
        request(url).map(|r| (r.names.unwrap_or_default(), r.action))
    }

    fn one(name: &str, action: &str) -> Option<(Vec<String>, String)> {
        Some((vec![name.to_string()], action.to_string()))
    }

    #[test]
    fn a_path_names_its_container_and_its_action() {
        for (url, name, action) in [
            ("http://localhost/containers/web/logs?tail=5", "web", "logs"),
            ("http://docker/v1.45/containers/db/restart", "db", "restart"),
            ("http://d/v4.0.0/libpod/containers/x/json", "x", "json"),
            ("http:/containers/web/stats", "web", "stats"),
            ("/containers/web", "web", "remove"),
        ] {
            assert_eq!(names_and_action(url), one(name, action), "{url}");
        }
    }

    #[test]
    fn the_url_is_read_as_curl_sends_it() {
        let web = one("web", "logs");
        assert_eq!(names_and_action("http://l/containers/./web/logs"), web);
        assert_eq!(names_and_action("http://l/containers/x/../web/logs"), web);
        assert_eq!(names_and_action("http://l/containers/w%65b/logs"), web);
        assert_eq!(names_and_action("http://l/{containers,x}/web/logs"), web);
        assert_eq!(names_and_action("http://l/containe[r-s]s/web/logs"), web);
        assert_eq!(
            names_and_action("http://l/containers/mesh-{gateway,postgres}/logs"),
            Some((
                vec!["mesh-gateway".to_string(), "mesh-postgres".to_string()],
                "logs".to_string()
            ))
        );
        assert_eq!(
            names_and_action("http://l/containers/db[08-10:2]/json").map(|r| r.0),
            Some(vec!["db08".to_string(), "db10".to_string()])
        );
    }

    #[test]
    fn globs_past_the_cap_are_unknown_and_quick() {
        let many = format!("http://l/containers/{}/logs", "{a,b}".repeat(40));
        let started = std::time::Instant::now();
        let request = request(&many).unwrap();
        assert_eq!(request.names, None);
        // 2^40 URLs if expanded: the cap stops it at once (a generous bound, not a benchmark).
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        let sixty_six = format!(
            "http://l/containers/{{{}mesh-gateway}}/logs",
            (0..65).map(|i| format!("c{i},")).collect::<String>()
        );
        assert_eq!(request_names(&sixty_six), None);
    }

    fn request_names(url: &str) -> Option<Vec<String>> {
        request(url).and_then(|r| r.names)
    }

    #[test]
    fn a_path_without_a_container_names_none() {
        for url in [
            "http://localhost/containers/",
            "http://localhost/images/json",
            "https://example.com/",
            "https://example.com",
            "RestartUnit",
        ] {
            assert_eq!(request(url), None, "{url}");
        }
    }
}
