/* network.maxConnections and network.maxBytes, per sandbox (one proxy
 * process serves one sandbox): counters shared by the connection threads.
 * The byte budget is taken before each splice, so the bound holds exactly
 * however many connections race for the last bytes. */
#include "egress_internal.h"

#include <time.h>

#define BUDGET_NEAR_END (8u << 20)
#define BUDGET_STEP_NEAR_END (64u << 10)

uint64_t egress_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool egress_limit_admit(struct egress_ctx *x)
{
    uint_fast64_t n = atomic_load(&x->conns);
    do {
        if (n >= x->rules->max_conns) return false;
    } while (!atomic_compare_exchange_weak(&x->conns, &n, n + 1));
    return true;
}

void egress_limit_release(struct egress_ctx *x)
{
    atomic_fetch_sub(&x->conns, 1);
}

size_t egress_budget_take(struct egress_ctx *x, size_t want)
{
    uint64_t max = x->rules->max_bytes;
    if (max == 0) {
        atomic_fetch_add(&x->bytes, want);
        return want;
    }
    uint_fast64_t used = atomic_load(&x->bytes);
    size_t got;
    do {
        if (used >= max) return 0;
        got = max - used < want ? (size_t)(max - used) : want;
        /* What one connection holds for the length of a splice, another
         * sees as spent: near the end, hold little at a time so none is
         * closed as "spent" much before the budget really is. */
        if (max - used < BUDGET_NEAR_END && got > BUDGET_STEP_NEAR_END) got = BUDGET_STEP_NEAR_END;
    } while (!atomic_compare_exchange_weak(&x->bytes, &used, used + got));
    return got;
}

void egress_budget_refund(struct egress_ctx *x, size_t n)
{
    if (n > 0) atomic_fetch_sub(&x->bytes, n);
}

bool egress_budget_spent(struct egress_ctx *x)
{
    return x->rules->max_bytes != 0 && atomic_load(&x->bytes) >= x->rules->max_bytes;
}
