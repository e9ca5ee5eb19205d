//! A container engine's HTTP API, as curl reaches it over the engine's socket
//! (`--unix-socket /var/run/docker.sock http://localhost/v1.45/containers/NAME/logs`): the
//! container a path names, and what it does to it.

/// The container a container engine's API path names: the segment after `containers`
/// (`/containers/NAME/logs`, `/v1.45/containers/NAME/json`, libpod's
/// `/v4.0.0/libpod/containers/NAME/exec`), the query off.
pub(crate) fn engine_api_container(url: &str) -> Option<&str> {
    engine_api_path(url).next().filter(|name| !name.is_empty())
}

/// What an engine API path does to its container: the segment after the name (`logs`,
/// `restart`, `json`), or `DELETE`'s bare `/containers/NAME` as `remove`.
pub(crate) fn engine_api_action(url: &str) -> Option<&str> {
    let mut segments = engine_api_path(url);
    segments.next().filter(|name| !name.is_empty())?;
    Some(
        segments
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("remove"),
    )
}

/// The segments of a URL's path after `containers`; none when it has no such segment.
fn engine_api_path(url: &str) -> impl Iterator<Item = &str> {
    let path = match url.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("", |at| &rest[at..]),
        // `http:/containers/x/logs` as some write it for a socket, or a bare path.
        None => url.trim_start_matches("http:").trim_start_matches("https:"),
    };
    let path = path.split(['?', '#']).next().unwrap_or_default();
    let mut segments = path.split('/');
    let found = segments.by_ref().any(|s| s == "containers");
    segments.filter(move |_| found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_its_container_and_its_action() {
        for (url, name, action) in [
            ("http://localhost/containers/web/logs?tail=5", "web", "logs"),
            ("http://docker/v1.45/containers/db/restart", "db", "restart"),
            ("http://d/v4.0.0/libpod/containers/x/json", "x", "json"),
            ("http:/containers/web/stats", "web", "stats"),
            ("/containers/web", "web", "remove"),
        ] {
            assert_eq!(engine_api_container(url), Some(name), "{url}");
            assert_eq!(engine_api_action(url), Some(action), "{url}");
        }
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
            assert_eq!(engine_api_container(url), None, "{url}");
            assert_eq!(engine_api_action(url), None, "{url}");
        }
    }
}
