/* Rendering a check report: text (one line per result), JSON, and the
 * list of failed rule ids the audit log records. */
#include "policy_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

char *policy_report_failed_ids(const struct policy_report *rep)
{
    autofree char *out = brig_strdup("");
    for (size_t i = 0; i < rep->n; i++) {
        if (rep->r[i].pass) continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !rep->r[j].pass && strcmp(rep->r[j].rule, rep->r[i].rule) == 0;
        if (seen) continue;
        char *next = brig_asprintf("%s%s%s", out, out[0] ? "," : "", rep->r[i].rule);
        free(out);
        out = next;
    }
    return steal_ptr(&out);
}

char *policy_report_text(const struct policy_report *rep, bool only_failed)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL) abort();
    for (size_t i = 0; i < rep->n; i++) {
        const struct policy_result *r = &rep->r[i];
        if (r->pass && only_failed) continue;
        if (r->pass) fprintf(f, "PASS %s\n", r->rule);
        else fprintf(f, "FAIL %s %s: %s\n", r->rule, r->path ? r->path : "-", r->value);
    }
    fclose(f);
    return buf;
}

char *policy_report_json(const struct brig_policy *p, const struct policy_report *rep)
{
    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "policy", p->name);
    jw_kstr(w, "mode", p->mode == POLICY_ENFORCE ? "enforce" : "audit");
    jw_kbool(w, "pass", rep->failed == 0);
    jw_ku64(w, "failed", rep->failed);
    jw_key(w, "results");
    jw_arr_open(w);
    for (size_t i = 0; i < rep->n; i++) {
        const struct policy_result *r = &rep->r[i];
        jw_obj_open(w);
        jw_kstr(w, "rule", r->rule);
        jw_kbool(w, "pass", r->pass);
        if (!r->pass) {
            jw_kstr(w, "path", r->path);
            jw_kstr(w, "value", r->value);
        }
        jw_obj_close(w);
    }
    jw_arr_close(w);
    jw_obj_close(w);
    const char *t = jw_text(w, NULL);
    return brig_asprintf("%s\n", t ? t : "{}");
}
