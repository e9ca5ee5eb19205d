//! The record's VFS: SQLite's own unix VFS, except that a write-ahead log that already exists is
//! opened without `SQLITE_OPEN_CREATE` (decision 0028).
//!
//! Why: the unix VFS marks every log it opens with `O_CREAT` for a sync of its directory at the
//! file's first sync, whether or not the open created it. With the log kept between hooks
//! (decision 0026) that is one `fsync` of the directory per refusal, for a name that is already
//! on disk. Opened without the flag, an existing log is the same file, read and synced the same
//! way, minus that `fsync`. A log that does not exist yet is opened exactly as SQLite asks (so
//! SQLite still syncs its directory at the first sync), and its directory is synced here at once
//! as well, before any row can be written to it: whoever opens the log later, a hook that skips
//! the directory's sync or a reader that never syncs at all, finds a name that is already durable.

use std::ffi::{CStr, c_int};
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, Ordering};

use rusqlite::ffi;

/// The name the record opens its database through.
const NAME: &CStr = c"mesh-guard-unix";

/// The unix VFS every call is passed on to; set once, before the shim is registered.
static BASE: AtomicPtr<ffi::sqlite3_vfs> = AtomicPtr::new(ptr::null_mut());

/// The VFS to open the record through, registered at the first call; `None` when SQLite has no
/// unix VFS to wrap, and the record then opens through the default one (a directory sync more
/// per hook, no less durable).
pub(crate) fn name() -> Option<&'static CStr> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    REGISTERED.get_or_init(register).then_some(NAME)
}

fn register() -> bool {
    super::memory::use_the_programs_allocator();
    no_lookaside();
    // SAFETY: `sqlite3_vfs_find` initialises SQLite if needed and takes a NUL-terminated name;
    // it returns null or a VFS that stays valid while registered, and nothing in this program
    // unregisters one.
    let base = unsafe { ffi::sqlite3_vfs_find(c"unix".as_ptr()) };
    if base.is_null() {
        return false;
    }
    // SAFETY: `base` is a live `sqlite3_vfs` (above); the copy is plain data and function
    // pointers. Its `pAppData` (the unix VFS's locking-style finder) is kept, so every copied
    // method behaves as the original's when handed the copy.
    let mut shim = unsafe { *base };
    if shim.xOpen.is_none() {
        return false;
    }
    shim.zName = NAME.as_ptr();
    shim.pNext = ptr::null_mut();
    shim.xOpen = Some(open);
    BASE.store(base, Ordering::Release);
    // SQLite keeps the pointer for the rest of the process: the copy is leaked, never freed nor
    // touched again here.
    let shim: &'static mut ffi::sqlite3_vfs = Box::leak(Box::new(shim));
    // SAFETY: `shim` is a complete VFS that lives forever (above); SQLite links it into its list
    // under its own mutex. `makeDflt = 0`: every other connection keeps the default VFS.
    unsafe { ffi::sqlite3_vfs_register(shim, 0) == ffi::SQLITE_OK }
}

/// `xOpen`: the unix VFS's, with `SQLITE_OPEN_CREATE` left out for a log that already exists.
unsafe extern "C" fn open(
    _shim: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let base = BASE.load(Ordering::Acquire);
    if base.is_null() {
        return ffi::SQLITE_CANTOPEN;
    }
    // SAFETY: `base` is the live unix VFS (stored before the shim was registered, and SQLite
    // calls this only through the shim), whose `xOpen` was checked to be there.
    let Some(base_open) = (unsafe { (*base).xOpen }) else {
        return ffi::SQLITE_CANTOPEN;
    };
    let creates_log = flags & ffi::SQLITE_OPEN_WAL != 0
        && flags & ffi::SQLITE_OPEN_CREATE != 0
        && !name.is_null();
    if creates_log {
        // Tried first as an existing file: no `stat` beforehand, one failed `open` when absent.
        // SAFETY: SQLite's own arguments, passed on to the VFS the shim copies, with one flag
        // less: the unix VFS opens any file without `SQLITE_OPEN_CREATE` (plain `O_RDWR`, the
        // same read-only fallback, the same owner and mode) and only skips the directory sync
        // it would otherwise schedule.
        let rc = unsafe {
            base_open(
                base,
                name,
                file,
                flags & !ffi::SQLITE_OPEN_CREATE,
                out_flags,
            )
        };
        if rc == ffi::SQLITE_OK {
            return rc;
        }
        // Absent (the first hook, or removed since): opened below exactly as SQLite asked. A
        // failed open leaves `file` without methods (the unix VFS clears it first), so it can be
        // opened again.
    }
    // SAFETY: SQLite's own call, passed on unchanged to the VFS the shim copies.
    let rc = unsafe { base_open(base, name, file, flags, out_flags) };
    if creates_log && rc == ffi::SQLITE_OK {
        // SAFETY: `name` is non-null (checked above) and, for a log, the NUL-terminated full
        // path SQLite built, valid for the duration of this call.
        sync_directory_of(unsafe { CStr::from_ptr(name) });
    }
    rc
}

/// Makes the name of a just-created log durable now, rather than at its first sync (which a
/// reader never reaches, and a hook killed before its commit neither). Errors are ignored, as
/// SQLite ignores them: some file systems cannot sync a directory.
fn sync_directory_of(path: &CStr) {
    use std::os::unix::ffi::OsStrExt;
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
}

/// Turns off SQLite's lookaside (decision 0038): a slab for small allocations, 120 KB by
/// default, that every connection allocates and links slot by slot at its open, touching all
/// its pages (about 60 page faults), for a hook whose one connection makes a few hundred small
/// allocations, which `malloc` serves as fast. Process-wide, so it must come before SQLite
/// initialises, which the `sqlite3_vfs_find` after it does: in the program every use of SQLite
/// is the record's and goes through here first. Where SQLite was already initialised (a test
/// that opened a database on its own), SQLite refuses it (`SQLITE_MISUSE`) and keeps its
/// lookaside: nothing else changes.
fn no_lookaside() {
    // SAFETY: `SQLITE_CONFIG_LOOKASIDE` takes two `int`s (slot size, slot count), both 0 here,
    // which disables it; `sqlite3_config` only records them when SQLite is not initialised yet
    // and returns an error otherwise. It runs once per process (`REGISTERED` above), and in the
    // program before any other use of SQLite, so no other thread is inside SQLite meanwhile.
    let _ = unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_LOOKASIDE, 0 as c_int, 0 as c_int) };
}
