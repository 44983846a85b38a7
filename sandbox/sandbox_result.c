/* The result of a one-shot sandbox: its JSON (sandbox/result.schema.json,
 * docs/sandbox.md; field names are stable), its exit status and the human
 * summary line. */
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

void sandbox_result_free(struct sandbox_result *r)
{
    free(r->policy);
    free(r->sandbox);
    free(r->error);
    free(r->limits_skipped);
    sandbox_stream_free(&r->out);
    sandbox_stream_free(&r->err);
    r->policy = r->error = r->sandbox = r->limits_skipped = NULL;
}

int sandbox_exit_status(const struct sandbox_result *r)
{
    if (r->error != NULL) return r->exec_status ? r->exec_status : 125;
    if (r->timed_out || r->idle_timed_out) return 124;
    if (r->signal > 0) return 128 + r->signal;
    return r->has_exit_code ? r->exit_code : 125;
}

static void result_opt_u64(struct brig_jw *w, const char *key, bool has, uint64_t v)
{
    jw_key(w, key);
    if (has) jw_u64(w, v);
    else jw_null(w);
}

static void result_stream(struct brig_jw *w, const char *key, const struct sandbox_stream *s)
{
    struct sandbox_preview pv;
    sandbox_stream_previews(s, &pv);
    jw_key(w, key);
    jw_obj_open(w);
    jw_kstrn(w, "preview_head", pv.head, pv.head_len);
    jw_kstrn(w, "preview_tail", pv.tail, pv.tail_len);
    jw_ku64(w, "bytes", s->bytes);
    jw_kbool(w, "truncated", pv.truncated);
    jw_kbool(w, "binary", pv.binary);
    jw_obj_close(w);
    free(pv.head);
    free(pv.tail);
}

char *sandbox_result_json(const struct sandbox_result *r)
{
    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "id", r->id);
    if (r->sandbox != NULL) jw_kstr(w, "sandbox", r->sandbox);
    jw_kstr(w, "policy", r->policy);
    jw_key(w, "exit_code");
    if (r->error != NULL && r->exec_status) jw_i64(w, r->exec_status);
    else if (r->has_exit_code && r->error == NULL) jw_i64(w, r->exit_code);
    else jw_null(w);
    jw_key(w, "signal");
    if (r->signal > 0) jw_i64(w, r->signal);
    else jw_null(w);
    jw_kbool(w, "timed_out", r->timed_out);
    jw_kbool(w, "idle_timed_out", r->idle_timed_out);
    jw_kbool(w, "oom_killed", r->oom_killed);
    /* every limit of the policy that stopped something, by its field */
    jw_key(w, "limits_hit");
    jw_arr_open(w);
    if (r->timed_out) jw_str(w, "timeouts.wall");
    if (r->idle_timed_out) jw_str(w, "timeouts.idle");
    if (r->oom_killed) jw_str(w, "limits.memory");
    if (r->workspace_full) jw_str(w, "workspace.maxSize");
    jw_arr_close(w);
    jw_ku64(w, "wall_ms", r->wall_ms);
    result_opt_u64(w, "cpu_user_ms", r->has_cpu, r->cpu_user_ms);
    result_opt_u64(w, "cpu_system_ms", r->has_cpu, r->cpu_system_ms);
    result_opt_u64(w, "memory_peak_bytes", r->has_memory_peak, r->memory_peak_bytes);
    result_opt_u64(w, "pids_peak", r->has_pids_peak, r->pids_peak);
    result_stream(w, "stdout", &r->out);
    result_stream(w, "stderr", &r->err);
    jw_kstr(w, "error", r->error);
    jw_kbool(w, "ran", r->ran);
    jw_ki64(w, "exit_status", sandbox_exit_status(r));
    jw_kbool(w, "limits_applied", r->limits_skipped == NULL);
    jw_kstr(w, "limits_skipped", r->limits_skipped);
    jw_obj_close(w);
    const char *t = jw_text(w, NULL);
    return brig_asprintf("%s\n", t ? t : "{\"error\":\"result JSON writer misuse (a bug)\"}");
}

char *sandbox_result_summary(const struct sandbox_result *r)
{
    char what[96];
    if (r->error != NULL && r->exec_status)
        snprintf(what, sizeof(what), "exit %d (%s)", r->exec_status,
                 r->exec_status == 127 ? "not found" : "not executable");
    else if (r->error != NULL) snprintf(what, sizeof(what), "failed");
    else if (r->timed_out) snprintf(what, sizeof(what), "killed at the wall timeout");
    else if (r->idle_timed_out) snprintf(what, sizeof(what), "killed at the idle timeout (no output)");
    else if (r->signal > 0) snprintf(what, sizeof(what), "killed by signal %d%s", r->signal,
                                     r->oom_killed ? " (out of memory)"
                                     : r->workspace_full ? " (the workspace passed workspace.maxSize)" : "");
    else snprintf(what, sizeof(what), "exit %d%s", r->exit_code,
                  r->workspace_full ? " (the workspace reached workspace.maxSize)" : "");
    return brig_asprintf("brig sandbox %s (%s): %s in %llu ms; stdout %llu B%s, stderr %llu B%s%s%s%s\n",
                         r->id, r->policy ? r->policy : "-", what, (unsigned long long)r->wall_ms,
                         (unsigned long long)r->out.bytes,
                         r->out.bytes > r->out.head_cap + r->out.tail_cap ? " (truncated)" : "",
                         (unsigned long long)r->err.bytes,
                         r->err.bytes > r->err.head_cap + r->err.tail_cap ? " (truncated)" : "",
                         r->error ? "; error: " : "", r->error ? r->error : "",
                         r->limits_skipped ? "; the policy's limits were not all applied (rootless)" : "");
}
