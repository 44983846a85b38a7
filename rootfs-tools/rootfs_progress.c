/* Progress of from-host and import on stderr (brig-rootfs.h). A terminal
 * gets a bar redrawn in place; anything else only the summary line, so a
 * log is not filled with carriage returns. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "brig-rootfs.h"

#define BAR_WIDTH 30
#define BAR_EVERY_MS 100

static uint64_t bar_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* "12.3 MiB" */
static void bar_size(char *buf, size_t len, uint64_t b)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

static void bar_draw(void *arg, uint64_t done, uint64_t total, uint64_t entries, uint64_t bytes)
{
    struct rootfs_bar *b = arg;
    uint64_t now = bar_now_ms();
    if (!b->tty || (b->drawn && now - b->last_ms < BAR_EVERY_MS && !(total && done >= total))) return;
    b->last_ms = now;
    b->drawn = true;
    char size[32], line[160];
    bar_size(size, sizeof(size), bytes);
    if (total > 0) {
        unsigned pct = done >= total ? 100 : (unsigned)(done * 100 / total);
        char bar[BAR_WIDTH + 1];
        memset(bar, '.', BAR_WIDTH);
        memset(bar, '#', (size_t)pct * BAR_WIDTH / 100);
        bar[BAR_WIDTH] = '\0';
        snprintf(line, sizeof(line), "\r[%s] %3u%%  %llu entries  %s ", bar, pct, (unsigned long long)entries, size);
    } else {
        snprintf(line, sizeof(line), "\r%llu entries  %s ", (unsigned long long)entries, size);
    }
    fputs(line, stderr);
    fflush(stderr);
}

void rootfs_bar_init(struct rootfs_bar *b, const char *cmd)
{
    *b = (struct rootfs_bar){ .p = { .fn = bar_draw }, .cmd = cmd, .tty = isatty(2) == 1, .start_ms = bar_now_ms() };
    b->p.arg = b;
}

void rootfs_bar_end(struct rootfs_bar *b, const char *what, uint64_t entries, uint64_t bytes)
{
    if (b->drawn) fputs("\r\033[K", stderr);      /* the bar's line, cleared */
    b->drawn = false;
    if (what == NULL) return;
    char size[32];
    bar_size(size, sizeof(size), bytes);
    uint64_t ms = bar_now_ms() - b->start_ms;
    fprintf(stderr, "brig-rootfs %s: %s: %llu entries, %s in %llu.%02llu s\n", b->cmd, what,
            (unsigned long long)entries, size, (unsigned long long)(ms / 1000), (unsigned long long)(ms % 1000 / 10));
}
