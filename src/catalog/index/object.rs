//! A mesh object a word names, and how names compare (case, trailing dot, unit suffix).

use super::{HostBy, HostMatch};
/// A word that names something of the mesh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeshObject {
    Machine(HostMatch),
    Container { name: String, module: String },
    Unit { name: String, module: String },
    Module { name: String },
}

impl MeshObject {
    /// "mesh machine `atlas`", "container `mesh-controller` of mesh module `controller`".
    pub fn describe(&self) -> String {
        match self {
            MeshObject::Machine(m) => match m.by {
                HostBy::Name => format!("mesh machine `{}`", m.machine),
                HostBy::Domain => format!("`{}`, a host in a mesh domain", m.machine),
                HostBy::Network => format!("`{}`, an address in a mesh network", m.machine),
                HostBy::Pattern => format!("mesh machine `{}`", m.machine),
            },
            MeshObject::Container { name, module } => {
                format!("container `{name}` of mesh module `{module}`")
            }
            MeshObject::Unit { name, module } => format!("unit `{name}` of mesh module `{module}`"),
            MeshObject::Module { name } => format!("mesh module `{name}`"),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            MeshObject::Machine(m) => &m.machine,
            MeshObject::Container { name, .. } | MeshObject::Unit { name, .. } => name,
            MeshObject::Module { name } => name,
        }
    }

    pub fn module(&self) -> Option<&str> {
        match self {
            MeshObject::Container { module, .. } | MeshObject::Unit { module, .. } => Some(module),
            MeshObject::Module { name } => Some(name),
            MeshObject::Machine(_) => None,
        }
    }
}

/// A host as the catalog keys it: lower case, no brackets or trailing dot, and an address
/// in one canonical form whatever way it was written (`2887516426`, `0xac1c010a`,
/// `172.28.266`, `fd00:20:0::13`, `fe80::1%eth0`, `::ffff:10.20.0.11`), as the resolver
/// would read it.
pub(crate) fn normalize_host(host: &str) -> String {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.');
    let without_zone = host.split('%').next().unwrap_or(host);
    if let Ok(v6) = without_zone.parse::<std::net::Ipv6Addr>() {
        return match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6.to_string(),
        };
    }
    if let Some(v4) = crate::catalog::net::parse_ipv4_loose(host) {
        return v4.to_string();
    }
    host.to_ascii_lowercase()
}

pub(crate) fn unit_key(unit: &str) -> &str {
    unit.strip_suffix(".service").unwrap_or(unit)
}
