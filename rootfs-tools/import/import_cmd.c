/* `brig-rootfs import`: flags in, import_run, one line out. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "brig-rootfs.h"
#include "import_run.h"

#define IMPORT_DEFAULT_MAX_SIZE (8ull << 30)
#define IMPORT_DEFAULT_MAX_FILES 1000000ull

static void import_usage(FILE *f)
{
    fprintf(f,
            "usage: brig-rootfs import [OPTION]... IMAGE DEST\n"
            "Unpack an OCI image layout (directory or tar), a docker/podman save archive, or a\n"
            "plain root filesystem tar (docker export, tar -C DIR -c .; plain, gzip, zstd, xz or\n"
            "bzip2) into a new rootfs DEST; an image's config goes to DEST" IMPORT_CONFIG_SUFFIX ".\n\n"
            "  --ref REF            the image to take (index ref name, or a docker RepoTag)\n"
            "  --platform OS/ARCH   default linux/amd64\n"
            "  --max-size SIZE      decompressed bytes, all layers (default 8G; K, M, G, T)\n"
            "  --max-files N        entries, all layers (default 1000000)\n"
            "  --allow-devices      create device nodes (refused by default)\n"
            "  --keep-setuid        keep setuid/setgid bits and file capabilities (stripped by default)\n");
}

int rootfs_cmd_import(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"ref", required_argument, NULL, 'r'},
        {"platform", required_argument, NULL, 'p'},
        {"max-size", required_argument, NULL, 's'},
        {"max-files", required_argument, NULL, 'n'},
        {"allow-devices", no_argument, NULL, 'd'},
        {"keep-setuid", no_argument, NULL, 'u'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct import_opts o = {.platform = "linux/amd64", .max_size = IMPORT_DEFAULT_MAX_SIZE,
                            .max_files = IMPORT_DEFAULT_MAX_FILES};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'r': o.ref = optarg; break;
        case 'p': o.platform = optarg; break;
        case 's':
            if (judge_size(optarg, &o.max_size) < 0 || o.max_size == 0) {
                fprintf(stderr, "brig-rootfs import: --max-size %s: expected a size such as 512M\n", optarg);
                return 2;
            }
            break;
        case 'n':
            if (judge_size(optarg, &o.max_files) < 0 || strpbrk(optarg, "KkMmGgTt") != NULL) {
                fprintf(stderr, "brig-rootfs import: --max-files %s: expected a number\n", optarg);
                return 2;
            }
            break;
        case 'd': o.flags |= JUDGE_ALLOW_DEVICES; break;
        case 'u': o.flags |= JUDGE_KEEP_SETUID; break;
        case 'h': import_usage(stdout); return 0;
        default: import_usage(stderr); return 2;
        }
    }
    if (argc - optind != 2) {
        import_usage(stderr);
        return 2;
    }
    o.image = argv[optind];
    o.dest = argv[optind + 1];
    struct import_result res = {0};
    autoerr struct brig_error *err = NULL;
    struct rootfs_bar bar;
    rootfs_bar_init(&bar, "import");
    o.progress = &bar.p;
    int rc = import_run(&o, &res, &err);
    rootfs_bar_end(&bar, NULL, 0, 0);
    if (rc < 0) {
        fprintf(stderr, "brig-rootfs import: %s\n", err != NULL ? err->msg : "failed");
        return 1;
    }
    if (res.stripped > 0)
        fprintf(stderr, "brig-rootfs import: %llu setuid/setgid bits or file capabilities stripped "
                        "(--keep-setuid keeps them)\n", (unsigned long long)res.stripped);
    if (res.layers == 0)
        printf("imported a root filesystem tar, %llu entries, %llu bytes into %s\n", (unsigned long long)res.files,
               (unsigned long long)res.bytes, o.dest);
    else
        printf("imported %zu layers, %llu entries, %llu bytes into %s\n", res.layers,
               (unsigned long long)res.files, (unsigned long long)res.bytes, o.dest);
    return 0;
}
