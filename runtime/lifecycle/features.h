/* `features` (runtime-spec features.md), probed on this host. */
#ifndef BRIG_FEATURES_H
#define BRIG_FEATURES_H

#include <stdbool.h>

/* The features document (features-schema.json) as JSON text ending in a
 * newline, malloc'd. */
char *features_json(bool pretty);

#endif
