/* The floor under a refusal: a static C program that does only what a refusal's record needs
 * of SQLite, built by scripts/bench-floor with the amalgamation and flags mesh-guard builds.
 *
 *   floor            does nothing: glibc's static start-up and exit
 *   floor DB         opens DB, sets WAL and synchronous=FULL, and in one BEGIN IMMEDIATE
 *                    reads the newest row's hash and appends a row linked to it, then empties
 *                    the log past 128 KiB, as the hook does; exits without closing
 *
 * No parse, no catalog, no use-time scan: the hook's time above this is its own. */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sqlite3.h"

static const char *const RECORD =
    "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
    "CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY AUTOINCREMENT, time_ms INTEGER,"
    " kind TEXT, command TEXT, prev_hash BLOB, hash BLOB);"
    "BEGIN IMMEDIATE;"
    "INSERT INTO floor (time_ms, kind, command, prev_hash, hash)"
    " SELECT 1764547200000, 'refusal', 'ssh m005000 journalctl -u mod00500.service -n 50',"
    " coalesce((SELECT hash FROM floor ORDER BY id DESC LIMIT 1), zeroblob(32)), randomblob(32);"
    "COMMIT;";

int main(int argc, char **argv) {
    if (argc < 2) return 0;
    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        fprintf(stderr, "floor: cannot open %s\n", argv[1]);
        return 1;
    }
    sqlite3_busy_timeout(db, 5000);
    char *error = NULL;
    if (sqlite3_exec(db, RECORD, NULL, NULL, &error) != SQLITE_OK) {
        fprintf(stderr, "floor: %s\n", error);
        return 1;
    }
    char wal[4096];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", argv[1]);
    if (stat(wal, &st) == 0 && st.st_size > 128 * 1024)
        sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
    _exit(0);
}
