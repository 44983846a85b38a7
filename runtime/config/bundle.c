/* The bundle opened once (bundle.h). */
#include "bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strutil.h"

/* The directory, and the path of what was opened, not the one given:
 * relative paths of the config (root.path, bind sources) are joined to it. */
static int bundle_open_dir(const char *dir, struct brig_bundle *b, struct brig_error **err)
{
    *b = (struct brig_bundle){ .dirfd = -1 };
    autoclose int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "bundle %s", dir);
    char where[PATH_MAX];
    if (brig_fd_where(fd, where, sizeof(where), err) < 0) return brig_wrap(err, "bundle %s", dir);
    b->dirfd = steal_fd(&fd);
    b->path = brig_strdup(where);
    return 0;
}

int bundle_open(const char *dir, const char *config_name, struct brig_bundle *b,
                struct brig_error **err)
{
    TRY(bundle_open_dir(dir, b, err));
    if (brig_read_regular_at(b->dirfd, config_name, BUNDLE_CONFIG_MAX, &b->config, &b->config_len, err) < 0) {
        bundle_close(b);
        if (err != NULL && *err != NULL && (*err)->errnum == EFBIG)
            return brig_failx(err, "%s: larger than %u MiB", config_name, BUNDLE_CONFIG_MAX >> 20);
        return -1;
    }
    return 0;
}

int bundle_open_text(const char *dir, const char *config, struct brig_bundle *b,
                     struct brig_error **err)
{
    TRY(bundle_open_dir(dir, b, err));
    b->config = brig_strdup(config);
    b->config_len = strlen(config);
    return 0;
}

void bundle_close(struct brig_bundle *b)
{
    brig_closep(&b->dirfd);
    free(b->path);
    b->path = NULL;
    free(b->config);
    b->config = NULL;
}
