/* network {"mode": "egress"} of a policy file (docs/egress.md): the
 * allow-list the proxy enforces, parsed as strictly as the rest of the
 * policy. Every rule is judged here, so `brig policy check` and every
 * create refuse a policy with a rule the proxy would read otherwise than
 * its author ("api.*.com", "10.0.0.1/8", "2130706433:80"). */
#include "policy.h"
#include "policy_internal.h"

#include <string.h>

#include "../egress/egress_rules.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

#define NETWORK_MAX_RULES 4096
#define NETWORK_DEFAULT_CONNS 64
#define NETWORK_MAX_CONNS 4096

static int network_rules(brig_json v, const char *key, struct egress_rule **out, size_t *n,
                         struct brig_error **err)
{
    brig_json list = json_get(v, key);
    if (list == NULL) return 0;
    char path[64];
    snprintf(path, sizeof(path), "network.%s", key);
    autostrv char **texts = NULL;
    size_t count = 0;
    TRY(json_as_strv(list, path, &texts, &count, err));
    if (count > NETWORK_MAX_RULES) return brig_failx(err, "%s: more than %d rules", path, NETWORK_MAX_RULES);
    *out = brig_calloc(count + 1, sizeof(**out));
    for (size_t i = 0; i < count; i++) {
        char why[256];
        if (egress_rule_parse(texts[i], &(*out)[i], why, sizeof(why)) < 0)
            return brig_failx(err, "%s[%zu]: \"%s\": %s", path, i, texts[i], why);
        *n = i + 1;
    }
    return 0;
}

static int network_size(brig_json v, const char *key, uint64_t *out, struct brig_error **err)
{
    brig_json s = json_get(v, key);
    if (s == NULL) return 0;
    char path[64];
    snprintf(path, sizeof(path), "network.%s", key);
    if (!json_is_string(s)) return json_as_u64(s, path, out, err);
    const char *text = NULL;
    TRY(json_as_string(s, path, &text, err));
    if (policy_parse_size(text, out) < 0)
        return brig_failx(err, "%s: \"%s\" is not a size (e.g. \"512MiB\", \"1G\")", path, text);
    return 0;
}

int policy_parse_egress(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    static const char *const keys[] = { "mode", "allow", "deny", "privateRanges", "maxConnections", "maxBytes",
                                        "credentials", "tlsCA", NULL };
    for (size_t i = 0; i < json_object_len(v); i++) {
        const char *k = json_object_key(v, i);
        bool known = false;
        for (size_t j = 0; keys[j] != NULL; j++) known = known || strcmp(keys[j], k) == 0;
        if (!known)
            return brig_failx(err, "network.%s: unknown key (a typo must not weaken a policy; see "
                              "docs/egress.md)", k);
    }
    egress_rules_free(p->network.egress);
    struct egress_rules *r = p->network.egress = brig_calloc(1, sizeof(*r));
    p->network.mode = POLICY_NET_EGRESS;
    r->max_conns = NETWORK_DEFAULT_CONNS;
    TRY(network_rules(v, "allow", &r->allow, &r->n_allow, err));
    TRY(network_rules(v, "deny", &r->deny, &r->n_deny, err));
    if (json_get_bool(v, "network", "privateRanges", false, &r->private_ranges, err) < 0 ||
        json_get_u64(v, "network", "maxConnections", false, &r->max_conns, err) < 0 ||
        network_size(v, "maxBytes", &r->max_bytes, err) < 0)
        return -1;
    if (r->max_conns == 0 || r->max_conns > NETWORK_MAX_CONNS)
        return brig_failx(err, "network.maxConnections: %llu: expected 1 to %d",
                          (unsigned long long)r->max_conns, NETWORK_MAX_CONNS);
    return policy_parse_credentials(r, v, err);     /* after the rules: judged by them */
}

char *policy_egress_sample(const struct brig_policy *p)
{
    const struct egress_rules *r = p->network.egress;
    for (size_t i = 0; r != NULL && i < r->n_allow; i++) {
        const struct egress_rule *a = &r->allow[i];
        char why[256];
        /* Not a credential's host: CONNECT to it is refused (docs/egress.md). */
        if (a->kind == EGRESS_NAME && a->port > 0 && egress_cred_at(r, a->name, (uint16_t)a->port) == NULL &&
            egress_check_name(r, a->name, (uint16_t)a->port, why, sizeof(why)) == 0)
            return brig_asprintf("%s:%d", a->name, a->port);
    }
    return NULL;
}
