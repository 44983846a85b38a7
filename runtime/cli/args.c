/* Flag parsing compatible with what runc (urfave/cli + Go's flag package)
 * accepts, since containerd, conmon and scripts call brig exactly as runc. */
#include "cli.h"

#include <ctype.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../util/strutil.h"

/* Who is parsing, for the usage line and the hint of a flag error. */
static const char *cli_program = "brig";
static char cli_command[64];

void cli_set_program(const char *prog)
{
    cli_program = prog;
}

void cli_set_command(const char *cmd)
{
    snprintf(cli_command, sizeof(cli_command), "%s", cmd ? cmd : "");
}

static const struct cli_flag *cli_find(const struct cli_flag *flags, size_t n, const char *name,
                                       size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (len == 1 && flags[i].short_name == name[0]) return &flags[i];
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0) return &flags[i];
    }
    return NULL;
}

static int cli_set(const struct cli_flag *f, const char *dashes, const char *value,
                   struct brig_error **err)
{
    switch (f->type) {
    case CLI_BOOL:
        if (value == NULL || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
            *(bool *)f->target = true;
        else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
            *(bool *)f->target = false;
        else
            return brig_failx(err, "invalid boolean value \"%s\" for flag %s%s", value, dashes, f->name);
        return 0;
    case CLI_STRING:
        *(const char **)f->target = value;
        return 0;
    case CLI_INT: {
        int64_t v;
        if (brig_parse_i64(value, &v) < 0 || v < INT_MIN || v > INT_MAX)
            return brig_failx(err, "invalid value \"%s\" for flag %s%s: expected an integer",
                              value, dashes, f->name);
        *(int *)f->target = (int)v;
        return 0;
    }
    }
    return brig_failx(err, "flag %s%s: bad type", dashes, f->name);
}

int cli_parse(const struct cli_flag *flags, size_t n_flags, int argc, char **argv,
              bool stop_at_positional, int *consumed, char **pos, int *n_pos,
              struct brig_error **err)
{
    int np = 0;
    int i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            if (stop_at_positional) break;
            for (; i < argc; i++) pos[np++] = argv[i];
            break;
        }
        if (a[0] != '-' || a[1] == '\0') {
            if (stop_at_positional) break;
            pos[np++] = argv[i];
            continue;
        }
        const char *dashes = a[1] == '-' ? "--" : "-";
        const char *name = a + strlen(dashes);
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const struct cli_flag *f = len > 0 ? cli_find(flags, n_flags, name, len) : NULL;
        /* runc's words first (scripts match them), then where to look */
        if (f == NULL)
            return brig_failx(err, "flag provided but not defined: %s%.*s (run '%s%s%s --help')", dashes,
                              (int)len, name, cli_program, cli_command[0] ? " " : "", cli_command);
        const char *value = eq ? eq + 1 : NULL;
        if (f->type != CLI_BOOL && value == NULL) {
            if (i + 1 >= argc) return brig_failx(err, "flag needs an argument: %s%s", dashes, f->name);
            value = argv[++i];
        }
        if (cli_set(f, dashes, value, err) < 0) return -1;
    }
    if (consumed != NULL) *consumed = i;
    if (n_pos != NULL) *n_pos = np;
    return 0;
}

void cli_usage(const char *cmd, const char *args, const char *summary,
               const struct cli_flag *flags, size_t n_flags)
{
    printf("Usage: %s %s%s%s\n\n%s\n", cli_program, cmd, args && *args ? " " : "", args ? args : "", summary);
    if (n_flags == 0) return;
    printf("\nOptions:\n");
    for (size_t i = 0; i < n_flags; i++) {
        char left[96];
        int n = 0;
        if (flags[i].short_name)
            n = snprintf(left, sizeof(left), "  -%c, --%s", flags[i].short_name, flags[i].name);
        else
            n = snprintf(left, sizeof(left), "      --%s", flags[i].name);
        if (flags[i].arg && n > 0 && (size_t)n < sizeof(left))
            snprintf(left + n, sizeof(left) - (size_t)n, " %s", flags[i].arg);
        printf("%-30s %s\n", left, flags[i].help ? flags[i].help : "");
    }
}

static const struct { const char *name; int sig; } cli_signals[] = {
    { "HUP", SIGHUP },     { "INT", SIGINT },       { "QUIT", SIGQUIT },   { "ILL", SIGILL },
    { "TRAP", SIGTRAP },   { "ABRT", SIGABRT },     { "IOT", SIGIOT },     { "BUS", SIGBUS },
    { "FPE", SIGFPE },     { "KILL", SIGKILL },     { "USR1", SIGUSR1 },   { "SEGV", SIGSEGV },
    { "USR2", SIGUSR2 },   { "PIPE", SIGPIPE },     { "ALRM", SIGALRM },   { "TERM", SIGTERM },
    { "STKFLT", SIGSTKFLT }, { "CHLD", SIGCHLD },   { "CLD", SIGCHLD },    { "CONT", SIGCONT },
    { "STOP", SIGSTOP },   { "TSTP", SIGTSTP },     { "TTIN", SIGTTIN },   { "TTOU", SIGTTOU },
    { "URG", SIGURG },     { "XCPU", SIGXCPU },     { "XFSZ", SIGXFSZ },   { "VTALRM", SIGVTALRM },
    { "PROF", SIGPROF },   { "WINCH", SIGWINCH },   { "IO", SIGIO },       { "POLL", SIGPOLL },
    { "PWR", SIGPWR },     { "SYS", SIGSYS },
};

/* "RTMIN", "RTMIN+3", "RTMAX-2" (already without "SIG", upper case). */
static int cli_parse_rt(const char *s, int *sig)
{
    int base;
    const char *rest;
    if (strncmp(s, "RTMIN", 5) == 0) {
        base = SIGRTMIN;
    } else if (strncmp(s, "RTMAX", 5) == 0) {
        base = SIGRTMAX;
    } else {
        return -1;
    }
    rest = s + 5;
    if (*rest == '\0') {
        *sig = base;
        return 0;
    }
    if ((*rest != '+' && *rest != '-') || !isdigit((unsigned char)rest[1])) return -1;
    uint64_t off;
    if (brig_parse_u64(rest + 1, &off) < 0 || off > 64) return -1;
    int v = *rest == '+' ? base + (int)off : base - (int)off;
    if (v < SIGRTMIN || v > SIGRTMAX) return -1;
    *sig = v;
    return 0;
}

int cli_parse_signal(const char *s, int *sig, struct brig_error **err)
{
    if (s == NULL || *s == '\0') return brig_failx(err, "empty signal");
    if (isdigit((unsigned char)s[0])) {
        uint64_t v;
        if (brig_parse_u64(s, &v) < 0 || v < 1 || v > (uint64_t)SIGRTMAX)
            return brig_failx(err, "invalid signal \"%s\": not in 1..%d", s, SIGRTMAX);
        *sig = (int)v;
        return 0;
    }
    char up[32];
    size_t n = strlen(s);
    if (n >= sizeof(up)) return brig_failx(err, "unknown signal \"%.32s\"", s);
    for (size_t i = 0; i <= n; i++) up[i] = (char)toupper((unsigned char)s[i]);
    const char *name = strncmp(up, "SIG", 3) == 0 ? up + 3 : up;
    for (size_t i = 0; i < sizeof(cli_signals) / sizeof(cli_signals[0]); i++) {
        if (strcmp(name, cli_signals[i].name) == 0) {
            *sig = cli_signals[i].sig;
            return 0;
        }
    }
    if (cli_parse_rt(name, sig) == 0) return 0;
    return brig_failx(err, "unknown signal \"%s\"", s);
}
