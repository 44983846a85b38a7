/* libFuzzer target over `policy check --compose`: any compose text either
 * fails with an error or is judged (every rule reports), without a crash,
 * a leak, or a read outside the text. Relative paths resolve under a
 * directory that does not exist, so nothing on the host is read. */
#include <stdint.h>
#include <stdlib.h>

#include "../../policy/policy.h"
#include "util/error.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct brig_policy *p;
    if (p == NULL) {
        struct brig_error *err = NULL;
        brig_log_init("/dev/null", BRIG_LOG_TEXT, false);
        if (policy_load("pi", &p, &err) < 0) abort();
    }
    struct policy_report rep;
    struct brig_error *err = NULL;
    char *svc = NULL;
    if (policy_compose_check_text(p, (const char *)data, size, "/nonexistent-fuzz-dir", NULL, &rep, &svc,
                                  &err) < 0) {
        if (err == NULL) abort();
        brig_error_free(err);
        return 0;
    }
    if (rep.n < policy_rule_count() + 2) abort();
    policy_report_free(&rep);
    free(svc);
    return 0;
}
