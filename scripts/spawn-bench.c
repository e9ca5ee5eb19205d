/* Whole-process timing of several command lines, alternating, against each other in one run.
 *
 *   cc -O2 -o /tmp/spawn-bench scripts/spawn-bench.c
 *   /tmp/spawn-bench RUNS STDIN_FILE /bin/true "target/release/mesh-guard hook" ...
 *
 * Each round spawns every command line once (posix_spawn, stdin from STDIN_FILE, stdout and
 * stderr to /dev/null, the caller's environment), timing from spawn to reaped; after RUNS
 * rounds it prints each line's median wall time and median CPU time (user + system, from
 * wait4), in microseconds. Alternating keeps a noisy machine fair to every line: compare
 * ratios within one run, not figures across runs. Words are split on spaces, no quoting. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s RUNS STDIN_FILE COMMAND...\n", argv[0]);
        return 2;
    }
    int runs = atoi(argv[1]), lines = argc - 3;
    if (runs < 1) {
        fprintf(stderr, "RUNS must be a positive number\n");
        return 2;
    }
    long long *wall = calloc((size_t)lines * runs, sizeof *wall);
    long long *cpu = calloc((size_t)lines * runs, sizeof *cpu);
    if (!wall || !cpu) return 2;
    for (int r = 0; r < runs; r++) {
        for (int i = 0; i < lines; i++) {
            char words[4096], *args[64];
            int n = 0;
            snprintf(words, sizeof words, "%s", argv[3 + i]);
            for (char *w = strtok(words, " "); w && n < 63; w = strtok(NULL, " ")) args[n++] = w;
            args[n] = NULL;
            posix_spawn_file_actions_t files;
            posix_spawn_file_actions_init(&files);
            posix_spawn_file_actions_addopen(&files, 0, argv[2], O_RDONLY, 0);
            posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
            posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0);
            pid_t pid;
            long long start = now_ns();
            if (posix_spawn(&pid, args[0], &files, NULL, args, environ) != 0) {
                fprintf(stderr, "cannot run %s\n", args[0]);
                return 2;
            }
            int status;
            struct rusage usage;
            wait4(pid, &status, 0, &usage);
            wall[i * runs + r] = now_ns() - start;
            cpu[i * runs + r] = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000LL +
                                usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
            posix_spawn_file_actions_destroy(&files);
        }
    }
    for (int i = 0; i < lines; i++) {
        qsort(wall + i * runs, runs, sizeof *wall, by_value);
        qsort(cpu + i * runs, runs, sizeof *cpu, by_value);
        printf("%-60s wall %6lld us  cpu %5lld us\n", argv[3 + i], wall[i * runs + runs / 2] / 1000,
               cpu[i * runs + runs / 2]);
    }
    return 0;
}
