/* Runs a libFuzzer target over files and directories given as arguments,
 * without libFuzzer: the normal build's regression test over the seed
 * corpus and the runtime-spec's schema test configs. Any crash or abort()
 * in the target fails the test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    struct brig_error *err = NULL;
    if (brig_read_file(path, 1 << 24, &text, &len, &err) < 0) {
        fprintf(stderr, "%s\n", err->msg);
        brig_error_free(err);
        return -1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)text, len);
    /* Prefixes too: truncation is the most common corruption. About 32
     * of them per input (every 7th byte of a short one), so that a corpus
     * grown by the fuzzers replays in seconds, also under ASan. */
    size_t step = len / 32 > 7 ? len / 32 : 7;
    for (size_t n = 0; n < len && len < 8192; n += step) LLVMFuzzerTestOneInput((const uint8_t *)text, n);
    free(text);
    return 0;
}

static int replay(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        perror(path);
        return -1;
    }
    int r = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char *p = brig_asprintf("%s/%s", path, e->d_name);
        if (replay(p, count) < 0) r = -1;
        free(p);
    }
    closedir(d);
    return r;
}

int main(int argc, char **argv)
{
    int count = 0, r = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        /* The runtime-spec reference is optional on a build machine. */
        if (stat(argv[i], &st) < 0 && strstr(argv[i], "runtime-spec") != NULL) {
            printf("skipping %s: not on this machine\n", argv[i]);
            continue;
        }
        if (replay(argv[i], &count) < 0) r = 1;
    }
    printf("replayed %d inputs\n", count);
    if (count == 0) return 77;
    return r;
}
