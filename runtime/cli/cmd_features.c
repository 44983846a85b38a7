/* `brig features`: print the features document (lifecycle/features.c). */
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "../lifecycle/features.h"
#include "../util/cleanup.h"
#include "../util/strutil.h"

int cmd_features(const struct brig_globals *g, int argc, char **argv, int *status,
                 struct brig_error **err)
{
    bool help = false;
    const struct cli_flag flags[] = {
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int npos = 0;
    if (cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &npos, err) < 0)
        return brig_wrap(err, "features");
    if (help) {
        cli_usage("features", "", "Show what this build of brig supports on this host (JSON).", flags,
                  BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (npos != 0) return brig_failx(err, "\"features\" takes no arguments");
    autofree char *json = features_json(true);
    if (fputs(json, stdout) == EOF || fflush(stdout) == EOF) return brig_fail(err, errno, "write stdout");
    return 0;
}
