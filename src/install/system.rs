//! The hardened install's root-owned system files: the catalog, rules, compiled index and
//! `allowed_signers` copied where the agent's user cannot write.

use super::InstallError;
use std::path::{Path, PathBuf};

/// Copies the catalog and the rules in force into `system` (root-owned, read-only to
/// others) and compiles the index beside the catalog. Returns the installed paths.
pub(crate) fn install_system_files(
    paths: &crate::config::Paths,
    system: &Path,
    said: &mut Vec<String>,
) -> Result<(PathBuf, PathBuf), InstallError> {
    crate::catalog::load(&paths.catalog).map_err(InstallError::InvalidCatalog)?;
    crate::rules::Rules::load(paths.rules.as_deref()).map_err(InstallError::InvalidRules)?;
    create_root_dir(system)?;
    let catalog = if paths.catalog.is_dir() {
        let target = system.join("catalog");
        replace_tree(&paths.catalog, &target)?;
        target
    } else {
        let target = system.join("catalog.toml");
        copy_root_file(&paths.catalog, &target)?;
        target
    };
    let rules = system.join("rules");
    match &paths.rules {
        Some(dir) => replace_tree(dir, &rules)?,
        None => {
            // An empty directory, so that the hook's command line always names its rules.
            create_root_dir(&rules)?;
        }
    }
    let index = crate::catalog::compiled_index_for(&catalog);
    crate::catalog::compile(&catalog, &index).map_err(InstallError::Uncompiled)?;
    set_mode(&index, 0o644)?;
    // Who may sign an override grant lives beside the catalog, kept as it is (decision 0058).
    let signers = crate::grant::allowed_signers_for(&catalog);
    let given = crate::grant::allowed_signers_for(&paths.catalog);
    if given.is_file() {
        copy_root_file(&given, &signers)?;
        said.push(format!("allowed_signers: {}", signers.display()));
    } else if !signers.exists() {
        said.push(format!(
            "no allowed_signers: no override grant is honoured until the operators' keys are listed in {}",
            signers.display()
        ));
    }
    said.push(format!("catalog: {}", catalog.display()));
    said.push(format!("rules: {}", rules.display()));
    said.push(format!("compiled index: {}", index.display()));
    Ok((catalog, rules))
}

pub(crate) fn create_root_dir(dir: &Path) -> Result<(), InstallError> {
    std::fs::create_dir_all(dir).map_err(InstallError::file(dir))?;
    set_mode(dir, 0o755)
}

pub(crate) fn set_mode(path: &Path, mode: u32) -> Result<(), InstallError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(InstallError::file(path))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

pub(crate) fn copy_root_file(from: &Path, to: &Path) -> Result<(), InstallError> {
    let bytes = std::fs::read(from).map_err(InstallError::file(from))?;
    let temp = to.with_extension("mesh-guard-tmp");
    std::fs::write(&temp, bytes)
        .and_then(|()| std::fs::rename(&temp, to))
        .map_err(InstallError::file(to))?;
    set_mode(to, 0o644)
}

/// Replaces the directory `to` with a copy of the `*.toml` files under `from`.
pub(crate) fn replace_tree(from: &Path, to: &Path) -> Result<(), InstallError> {
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(InstallError::file(to))?;
    }
    create_root_dir(to)?;
    let entries = std::fs::read_dir(from).map_err(InstallError::file(from))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            replace_tree(&path, &target)?;
        } else if path.extension().is_some_and(|e| e == "toml") {
            copy_root_file(&path, &target)?;
        }
    }
    Ok(())
}
