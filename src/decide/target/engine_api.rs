//! A container engine's HTTP API, as curl reaches it over the engine's socket
//! (`--unix-socket /var/run/docker.sock http://localhost/v1.45/containers/NAME/logs`) or on
//! this machine's port: the containers a path names, and what it does to them. The path is
//! read as curl sends it: dot segments removed, percent escapes decoded, and curl's own
//! `{a,b}` alternatives expanded.

/// At most this many names are expanded from one path's `{a,b}` alternatives.
const MAX_NAMES: usize = 64;

/// A request to an engine's container endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// The container the path names, each expansion of it.
    pub names: Vec<String>,
    /// What it does: the segment after the name (`logs`, `restart`, `json`), or `remove`
    /// for the bare `/containers/NAME` (`DELETE`).
    pub action: String,
}

/// The request `url` makes of an engine's containers; none when its path has no container.
pub(crate) fn request(url: &str) -> Option<Request> {
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
    Some(Request {
        names: alternatives(name),
        action: action.to_string(),
    })
}

/// Whether `url` is this machine's: an engine on a local port (`http://localhost:2375/…`).
pub(crate) fn is_local(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return true;
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    matches!(host, "" | "localhost" | "127.0.0.1" | "::1")
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

/// curl's `{a,b}` sets expanded, each set once, left to right (curl does not nest them).
fn alternatives(text: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (text.find('{'), text.find('}')) else {
        return vec![text.to_string()];
    };
    if close < open {
        return vec![text.to_string()];
    }
    let (head, set, tail) = (&text[..open], &text[open + 1..close], &text[close + 1..]);
    let mut out = Vec::new();
    for choice in set.split(',') {
        for rest in alternatives(tail) {
            if out.len() == MAX_NAMES {
                return out;
            }
            out.push(format!("{head}{choice}{rest}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names_and_action(url: &str) -> Option<(Vec<String>, String)> {
        request(url).map(|r| (r.names, r.action))
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
            assert_eq!(
                names_and_action(url),
                Some((vec![name.to_string()], action.to_string())),
                "{url}"
            );
        }
    }

    #[test]
    fn the_path_is_read_as_curl_sends_it() {
        let web = Some((vec!["web".to_string()], "logs".to_string()));
        assert_eq!(names_and_action("http://l/containers/./web/logs"), web);
        assert_eq!(names_and_action("http://l/containers/x/../web/logs"), web);
        assert_eq!(names_and_action("http://l/containers/w%65b/logs"), web);
        assert_eq!(
            names_and_action("http://l/containers/mesh-{gateway,postgres}/logs"),
            Some((
                vec!["mesh-gateway".to_string(), "mesh-postgres".to_string()],
                "logs".to_string()
            ))
        );
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

    #[test]
    fn only_this_machines_addresses_are_local() {
        for url in [
            "http://localhost/x",
            "http://127.0.0.1:2375/x",
            "http://[::1]:2375/",
            "http:/x",
        ] {
            assert!(is_local(url), "{url}");
        }
        for url in [
            "https://example.com/containers/x/logs",
            "http://atlas:2375/x",
        ] {
            assert!(!is_local(url), "{url}");
        }
    }
}
