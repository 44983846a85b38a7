/* The bundle opened once (bundle.h). */
#include "bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strutil.h"

int bundle_open(const char *dir, const char *config_name, struct brig_bundle *b,
                struct brig_error **err)
{
    *b = (struct brig_bundle){ .dirfd = -1 };
    autoclose int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "bundle %s", dir);
    /* The path of what was opened, not the one given: relative paths of the
     * config (root.path, bind sources) are joined to it. */
    char where[PATH_MAX];
    if (brig_fd_where(fd, where, sizeof(where), err) < 0) return brig_wrap(err, "bundle %s", dir);
    autofree char *text = NULL;
    size_t len = 0;
    if (brig_read_regular_at(fd, config_name, BUNDLE_CONFIG_MAX, &text, &len, err) < 0) {
        if (err != NULL && *err != NULL && (*err)->errnum == EFBIG)
            return brig_failx(err, "%s: larger than %u MiB", config_name, BUNDLE_CONFIG_MAX >> 20);
        return -1;
    }
    b->dirfd = steal_fd(&fd);
    b->path = brig_strdup(where);
    b->config = steal_ptr(&text);
    b->config_len = len;
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
