/* libFuzzer target over brig-rootfs import's layer extractor: the input is
 * a layer (tar, maybe gzip or zstd) unpacked into a fresh scratch root.
 * Whether it is refused or not, nothing may appear or change outside that
 * root: its parent must still hold exactly the root and an untouched decoy.
 * Limits are small so that a bomb is refused quickly. */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../rootfs-tools/import/import.h"
#include "util/fs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static char base[64];
static int basefd = -1;

static void fuzz_layer_cleanup(void)
{
    if (basefd >= 0) brig_rm_rf_at(AT_FDCWD, base, NULL);
}

static void fuzz_layer_init(void)
{
    snprintf(base, sizeof(base), "/tmp/brig-fuzz-layer.XXXXXX");
    CHECK(mkdtemp(base) != NULL);
    basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(basefd >= 0);
    int fd = openat(basefd, "decoy", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    CHECK(fd >= 0 && write(fd, "decoy\n", 6) == 6);
    close(fd);
    atexit(fuzz_layer_cleanup);
}

/* The parent holds "decoy" (6 bytes, one link) and "root", nothing else. */
static void fuzz_layer_check_outside(void)
{
    int fd = openat(basefd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(fd >= 0);
    DIR *d = fdopendir(fd);
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        CHECK(strcmp(de->d_name, "decoy") == 0 || strcmp(de->d_name, "root") == 0);
        n++;
    }
    closedir(d);
    CHECK(n == 2);
    struct stat st;
    CHECK(fstatat(basefd, "decoy", &st, AT_SYMLINK_NOFOLLOW) == 0);
    CHECK(S_ISREG(st.st_mode) && st.st_size == 6 && st.st_nlink == 1 && (st.st_mode & 07777) == 0644);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (basefd < 0) fuzz_layer_init();
    int in = memfd_create("layer", MFD_CLOEXEC);
    CHECK(in >= 0);
    CHECK(size == 0 || write(in, data, size) == (ssize_t)size);
    CHECK(lseek(in, 0, SEEK_SET) == 0);
    CHECK(mkdirat(basefd, "root", 0700) == 0);
    int rootfd = openat(basefd, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(rootfd >= 0);
    struct layer_limits lim = {.max_bytes = 4u << 20, .max_files = 2000};
    struct brig_error *err = NULL;
    layer_apply(rootfd, in, &lim, &err);
    brig_error_free(err);
    close(rootfd);
    close(in);
    fuzz_layer_check_outside();
    CHECK(brig_rm_rf_at(basefd, "root", NULL) == 0);
    return 0;
}
