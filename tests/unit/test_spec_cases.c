/* spec_parse: focused good and bad configs. Every bad one must fail with a
 * message naming the JSON path of the mistake. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>

#include "config/spec.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strutil.h"

#define PROC "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"]}"
#define DOC(...) "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"rootfs\"}, " __VA_ARGS__ "}"
#define LINUX(...) DOC(PROC ", \"linux\": {" __VA_ARGS__ "}")
#define RES(...) LINUX("\"resources\": {" __VA_ARGS__ "}")
#define SCMP(...) LINUX("\"seccomp\": {" __VA_ARGS__ "}")
#define MPOL(...) LINUX("\"memoryPolicy\": {" __VA_ARGS__ "}")

static int parse(const char *json, struct brig_spec **s, struct brig_error **err)
{
    return spec_parse(json, strlen(json), "/b", s, err);
}

static struct brig_spec *parse_ok(const char *json)
{
    struct brig_spec *s = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(parse(json, &s, &err), 0, "%s\nfailed: %s", json, err ? err->msg : "");
    return s;
}

struct bad_case {
    const char *json;
    const char *expect;     /* substring of the message, starting with the path */
};

static const struct bad_case bad_cases[] = {
    /* top level */
    { "[]", "expected a JSON object at the top level, got an array" },
    { "{}", "ociVersion: required" },
    { "{\"ociVersion\": 1}", "ociVersion: expected a string, got 1" },
    { "{\"ociVersion\": \"2.0.0\"}", "ociVersion: unsupported major version in \"2.0.0\"" },
    { "{\"ociVersion\": \"1.0\"}", "ociVersion: \"1.0\" is not a SemVer version" },
    { "{\"ociVersion\": \"v1.0.0\"}", "ociVersion: \"v1.0.0\" is not a SemVer version" },
    { "{\"ociVersion\": \"1.0.0\", \"root\": {}}", "root.path: required" },
    { "{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": 3}}", "root.path: expected a string, got 3" },
    { "{\"ociVersion\": \"1.0.0\", \"root\": \"rootfs\"}", "root: expected an object, got \"rootfs\"" },
    { DOC("\"root\": {\"path\": \"r\", \"readonly\": \"yes\"}"), "invalid JSON: duplicate key \"root\"" },
    { "{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\", \"readonly\": \"yes\"}}",
      "root.readonly: expected a boolean, got \"yes\"" },
    { DOC("\"hostname\": 7"), "hostname: expected a string, got 7" },
    { DOC("\"annotations\": {\"a\": 1}"), "annotations.a: expected a string, got 1" },
    { DOC("\"annotations\": {\"\": \"x\"}"), "annotations: keys must not be empty" },
    /* process */
    { DOC("\"process\": []"), "process: expected an object, got an array" },
    { DOC("\"process\": {\"cwd\": \"/\"}"), "process.args: required, with at least one entry" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": []}"), "process.args: required" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\", 1]}"),
      "process.args[1]: expected a string, got 1" },
    { DOC("\"process\": {\"args\": [\"sh\"]}"), "process.cwd: required" },
    { DOC("\"process\": {\"cwd\": \"tmp\", \"args\": [\"sh\"]}"),
      "process.cwd: must be an absolute path" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"user\": {\"uid\": \"0\"}}"),
      "process.user.uid: expected an unsigned 32-bit integer, got \"0\"" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"user\": {\"gid\": -1}}"),
      "process.user.gid: expected an unsigned 32-bit integer, got -1" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"user\": {\"umask\": 4096}}"),
      "process.user.umask: must be at most 511" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"user\": {\"additionalGids\": [1, 2.5]}}"),
      "process.user.additionalGids[1]: expected an unsigned 32-bit integer, got 2.5" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"terminal\": 1}"),
      "process.terminal: expected a boolean, got 1" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"consoleSize\": {\"height\": 1}}"),
      "process.consoleSize.width: required" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"env\": \"A=b\"}"),
      "process.env: expected an array of strings, got \"A=b\"" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"capabilities\": {\"bounding\": [1]}}"),
      "process.capabilities.bounding[0]: expected a string, got 1" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"rlimits\": [{\"type\": \"RLIMIT_FOO\", "
          "\"soft\": 1, \"hard\": 1}]}"),
      "process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"rlimits\": ["
          "{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1, \"hard\": 1},"
          "{\"type\": \"RLIMIT_NOFILE\", \"soft\": 2, \"hard\": 2}]}"),
      "process.rlimits[1].type: duplicate rlimit RLIMIT_NOFILE" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"rlimits\": ["
          "{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1}]}"),
      "process.rlimits[0].hard: required" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"rlimits\": ["
          "{\"type\": \"RLIMIT_NOFILE\", \"soft\": 2, \"hard\": 1}]}"),
      "process.rlimits[0]: soft limit 2 exceeds hard limit 1" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"oomScoreAdj\": 1001}"),
      "process.oomScoreAdj: must be between -1000 and 1000" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"noNewPrivileges\": \"true\"}"),
      "process.noNewPrivileges: expected a boolean" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"ioPriority\": {\"class\": \"IOPRIO_CLASS_X\"}}"),
      "process.ioPriority.class: unknown I/O priority class \"IOPRIO_CLASS_X\"" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"ioPriority\": {\"class\": \"IOPRIO_CLASS_BE\", "
          "\"priority\": 8}}"),
      "process.ioPriority.priority: must be between 0 and 7" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"scheduler\": {}}"),
      "process.scheduler.policy: required" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"scheduler\": {\"policy\": \"SCHED_X\"}}"),
      "process.scheduler.policy: unknown scheduler policy \"SCHED_X\"" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"scheduler\": {\"policy\": \"SCHED_RR\", "
          "\"flags\": [\"SCHED_FLAG_X\"]}}"),
      "process.scheduler.flags[0]: unknown scheduler flag \"SCHED_FLAG_X\"" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"scheduler\": {\"policy\": \"SCHED_RR\", "
          "\"nice\": 2147483648}}"),
      "process.scheduler.nice: expected a signed 32-bit integer, got 2147483648" },
    { DOC("\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"execCPUAffinity\": {\"initial\": \"0-a\"}}"),
      "process.execCPUAffinity.initial: invalid CPU list \"0-a\"" },
    /* mounts */
    { DOC("\"mounts\": {}"), "mounts: expected an array, got an object" },
    { DOC("\"mounts\": [{\"type\": \"tmpfs\"}]"), "mounts[0].destination: required" },
    { DOC("\"mounts\": [{\"destination\": \"/a\"}, {\"destination\": \"/b\"}, {\"destination\": \"c\"}]"),
      "mounts[2].destination: must be an absolute path" },
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"options\": \"ro\"}]"),
      "mounts[0].options: expected an array of strings, got \"ro\"" },
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"source\": 1}]"),
      "mounts[0].source: expected a string, got 1" },
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1, "
          "\"size\": 1}]}]"),
      "mounts[0]: uidMappings and gidMappings must be given together" },
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"uidMappings\": [{\"containerID\": 0, \"hostID\": 1}]}]"),
      "mounts[0].uidMappings[0].size: required" },
    /* crun's idmap=uids=...;gids=...: read after linux (for "@") */
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"options\": [\"bind\", \"idmap=uids=0-1-1\"]}]"),
      "mounts[0].options[1]: idmap=: uids without gids" },
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"options\": [\"rbind\", \"ridmap=uids=0-1-1;gids=0--1-1\"]}]"),
      "mounts[0].options[1]: idmap gids=: range 1 is not [@]FROM-TO-SIZE" },
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"options\": [\"bind\", \"idmap=uids=@0-0-1;gids=0-0-1\"]}]"),
      "mounts[0].options[1]: idmap uids=@...: a relative mapping needs linux.uidMappings" },
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"options\": [\"idmap=uids=0-1-1;gids=0-1-1\", "
          "\"idmap=uids=0-2-1;gids=0-2-1\"]}]"),
      "mounts[0].options[1]: a second idmap option with mappings" },
    { DOC("\"mounts\": [{\"destination\": \"/a\", \"options\": [\"idmap=uids=0-1-1;gids=0-1-1\"], "
          "\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1, \"size\": 1}], "
          "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 1, \"size\": 1}]}]"),
      "mounts[0].options[0]: idmap=... and mounts[0].uidMappings/gidMappings both give mappings" },
    /* hooks */
    { DOC("\"hooks\": {\"prestart\": [{\"path\": \"hook\"}]}"),
      "hooks.prestart[0].path: must be an absolute path" },
    { DOC("\"hooks\": {\"poststop\": [{\"args\": []}]}"), "hooks.poststop[0].path: required" },
    { DOC("\"hooks\": {\"createRuntime\": [{\"path\": \"/h\", \"timeout\": 0}]}"),
      "hooks.createRuntime[0].timeout: must be greater than 0" },
    { DOC("\"hooks\": {\"startContainer\": [{\"path\": \"/h\", \"timeout\": 1.5}]}"),
      "hooks.startContainer[0].timeout: expected a signed 64-bit integer, got 1.5" },
    { DOC("\"hooks\": {\"createContainer\": {}}"),
      "hooks.createContainer: expected an array, got an object" },
    /* linux */
    { DOC("\"linux\": []"), "linux: expected an object, got an array" },
    { LINUX("\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"net\"}]"),
      "linux.namespaces[1].type: unknown namespace type \"net\"" },
    { LINUX("\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"mount\"}, {\"type\": \"pid\"}]"),
      "linux.namespaces[2].type: duplicate namespace \"pid\"" },
    { LINUX("\"namespaces\": [{\"type\": \"network\", \"path\": \"proc/1/ns/net\"}]"),
      "linux.namespaces[0].path: must be an absolute path" },
    { LINUX("\"namespaces\": [{}]"), "linux.namespaces[0].type: required" },
    { LINUX("\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 0}]"),
      "linux.uidMappings[0].size: must be greater than 0" },
    { LINUX("\"gidMappings\": [{\"containerID\": 0, \"hostID\": 4294967295, \"size\": 2}]"),
      "linux.gidMappings[0]: range goes past the 32-bit id space" },
    { LINUX("\"sysctl\": {\"net.ipv4.ip_forward\": 1}"),
      "linux.sysctl.net.ipv4.ip_forward: expected a string, got 1" },
    { LINUX("\"sysctl\": {\"net/../../etc\": \"1\"}"), "linux.sysctl: invalid sysctl name" },
    { LINUX("\"devices\": [{\"path\": \"/dev/x\", \"type\": \"q\", \"major\": 1, \"minor\": 1}]"),
      "linux.devices[0].type: must be one of c, b, u, p, got \"q\"" },
    { LINUX("\"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"major\": 1}]"),
      "linux.devices[0].minor: required" },
    { LINUX("\"devices\": [{\"path\": \"dev/x\", \"type\": \"p\"}]"),
      "linux.devices[0].path: must be an absolute path" },
    { LINUX("\"devices\": [{\"path\": \"/dev/x\", \"type\": \"c\", \"major\": 1, \"minor\": 3, "
            "\"fileMode\": 4095}]"),
      "linux.devices[0].fileMode: must be at most 511" },
    { LINUX("\"rootfsPropagation\": \"sideways\""),
      "linux.rootfsPropagation: unknown propagation \"sideways\"" },
    { LINUX("\"maskedPaths\": [\"/proc/kcore\", \"proc/x\"]"),
      "linux.maskedPaths[1]: must be an absolute path" },
    { LINUX("\"readonlyPaths\": [3]"), "linux.readonlyPaths[0]: expected a string, got 3" },
    { LINUX("\"personality\": {\"domain\": \"BSD\"}"),
      "linux.personality.domain: unknown domain \"BSD\"" },
    { LINUX("\"personality\": {}"), "linux.personality.domain: required" },
    { LINUX("\"timeOffsets\": {\"realtime\": {\"secs\": 1}}"),
      "linux.timeOffsets.realtime: unknown clock" },
    { LINUX("\"timeOffsets\": {\"boottime\": {\"nanosecs\": 1000000000}}"),
      "linux.timeOffsets.boottime.nanosecs: must be below 1000000000" },
    { LINUX("\"cgroupsPath\": false"), "linux.cgroupsPath: expected a string, got false" },
    { LINUX("\"intelRdt\": []"), "linux.intelRdt: expected an object, got an array" },
    /* resources */
    { RES("\"memory\": {\"limit\": \"1g\"}"),
      "linux.resources.memory.limit: expected a signed 64-bit integer, got \"1g\"" },
    { RES("\"memory\": {\"limit\": -2}"), "linux.resources.memory.limit: must be -1 (unlimited)" },
    { RES("\"memory\": {\"swappiness\": 101}"),
      "linux.resources.memory.swappiness: must be between 0 and 100" },
    { RES("\"memory\": {\"disableOOMKiller\": 0}"),
      "linux.resources.memory.disableOOMKiller: expected a boolean, got 0" },
    { RES("\"cpu\": {\"shares\": -1}"),
      "linux.resources.cpu.shares: expected an unsigned 64-bit integer, got -1" },
    { RES("\"cpu\": {\"cpus\": 3}"), "linux.resources.cpu.cpus: expected a string, got 3" },
    { RES("\"cpu\": {\"quota\": 1000, \"burst\": 2000}"),
      "linux.resources.cpu.burst: 2000 is larger than quota 1000" },
    { RES("\"pids\": {}"), "linux.resources.pids.limit: required" },
    { RES("\"pids\": {\"limit\": -5}"), "linux.resources.pids.limit: must be -1" },
    { RES("\"devices\": [{\"access\": \"rw\"}]"), "linux.resources.devices[0].allow: required" },
    { RES("\"devices\": [{\"allow\": true, \"type\": \"x\"}]"),
      "linux.resources.devices[0].type: must be one of a, c, b, got \"x\"" },
    { RES("\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]"),
      "linux.resources.devices[0].access: must be a subset of \"rwm\", got \"rwx\"" },
    { RES("\"devices\": [{\"allow\": true, \"access\": \"\"}]"),
      "linux.resources.devices[0].access: must not be empty" },
    { RES("\"devices\": [{\"allow\": true, \"major\": -2}]"),
      "linux.resources.devices[0]: invalid device number -2:-1" },
    { RES("\"blockIO\": {\"weight\": 65536}"),
      "linux.resources.blockIO.weight: expected an unsigned 16-bit integer, got 65536" },
    { RES("\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0}]}"),
      "linux.resources.blockIO.weightDevice[0]: weight or leafWeight is required" },
    { RES("\"blockIO\": {\"throttleWriteBpsDevice\": [{\"major\": 8, \"minor\": 0}]}"),
      "linux.resources.blockIO.throttleWriteBpsDevice[0].rate: required" },
    { RES("\"hugepageLimits\": [{\"pageSize\": \"2MB\"}]"),
      "linux.resources.hugepageLimits[0].limit: required" },
    { RES("\"hugepageLimits\": [{\"pageSize\": \"../2MB\", \"limit\": 1}]"),
      "linux.resources.hugepageLimits[0].pageSize: invalid page size" },
    { RES("\"network\": {\"priorities\": [{\"name\": \"eth0\"}]}"),
      "linux.resources.network.priorities[0].priority: required" },
    { RES("\"rdma\": {\"mlx\": {}}"), "linux.resources.rdma.mlx: hcaHandles or hcaObjects is required" },
    { RES("\"unified\": {\"memory.max\": 5}"),
      "linux.resources.unified.memory.max: expected a string, got 5" },
    { RES("\"unified\": {\"../../cgroup.procs\": \"1\"}"),
      "linux.resources.unified: invalid cgroup file name \"../../cgroup.procs\"" },
    /* seccomp */
    { SCMP("\"syscalls\": []"), "linux.seccomp.defaultAction: required" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_FOO\""),
      "linux.seccomp.defaultAction: unknown action \"SCMP_ACT_FOO\"" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": ["
           "{\"names\": [\"a\"], \"action\": \"SCMP_ACT_ERRNO\"},"
           "{\"names\": [\"b\"], \"action\": \"SCMP_ACT_ERRNO\"},"
           "{\"names\": [\"c\"], \"action\": \"SCMP_ACT_ERRNO\"},"
           "{\"names\": [\"d\"], \"action\": \"SCMP_ACT_FOO\"}]"),
      "linux.seccomp.syscalls[3].action: unknown action \"SCMP_ACT_FOO\"" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [], \"action\": \"SCMP_ACT_KILL\"}]"),
      "linux.seccomp.syscalls[0].names: must contain at least one name" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"\"], \"action\": \"SCMP_ACT_KILL\"}]"),
      "linux.seccomp.syscalls[0].names[0]: must not be empty" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"action\": \"SCMP_ACT_KILL\"}]"),
      "linux.seccomp.syscalls[0].names: required" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"x\"]}]"),
      "linux.seccomp.syscalls[0].action: required" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"x\"], "
           "\"action\": \"SCMP_ACT_KILL\", \"errnoRet\": 1}]"),
      "linux.seccomp.syscalls[0].errnoRet: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"defaultErrnoRet\": 1"),
      "linux.seccomp.defaultErrnoRet: only SCMP_ACT_ERRNO" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"x\"], "
           "\"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 6, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}]"),
      "linux.seccomp.syscalls[0].args[0].index: must be below 6, got 6" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"x\"], "
           "\"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_XX\"}]}]"),
      "linux.seccomp.syscalls[0].args[0].op: unknown operator \"SCMP_CMP_XX\"" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"x\"], "
           "\"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"op\": \"SCMP_CMP_EQ\"}]}]"),
      "linux.seccomp.syscalls[0].args[0].value: required" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [{\"names\": [\"x\"], "
           "\"action\": \"SCMP_ACT_ERRNO\", \"args\": [{\"index\": 0, \"value\": -1, \"op\": \"SCMP_CMP_EQ\"}]}]"),
      "linux.seccomp.syscalls[0].args[0].value: expected an unsigned 64-bit integer, got -1" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_NEW_LISTENER\"]"),
      "linux.seccomp.flags[0]: unknown flag \"SECCOMP_FILTER_FLAG_NEW_LISTENER\"" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"x86_64\"]"),
      "linux.seccomp.architectures[0]: unknown architecture \"x86_64\"" },
    { SCMP("\"defaultAction\": \"SCMP_ACT_ALLOW\", \"listenerMetadata\": \"m\""),
      "linux.seccomp.listenerMetadata: must not be set without listenerPath" },
    /* linux.memoryPolicy (spec 1.3) */
    { MPOL("\"mode\": \"MPOL_NOPE\""), "linux.memoryPolicy.mode: unknown mode \"MPOL_NOPE\"" },
    { MPOL("\"nodes\": \"0\""), "linux.memoryPolicy.mode: required" },
    { MPOL("\"mode\": \"MPOL_BIND\""), "linux.memoryPolicy.nodes: this mode needs at least one node" },
    { MPOL("\"mode\": \"MPOL_LOCAL\", \"nodes\": \"0\""),
      "linux.memoryPolicy.nodes: must be empty with mode MPOL_LOCAL" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \"3-1\""),
      "linux.memoryPolicy.nodes: \"3-1\" is not a node list" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \"0,\""),
      "linux.memoryPolicy.nodes: \"0,\" is not a node list" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \"-1\""),
      "linux.memoryPolicy.nodes: \"-1\" is not a node list" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \"99999999999999999999\""),
      "linux.memoryPolicy.nodes: \"99999999999999999999\" is not a node list" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \" 1\""),
      "linux.memoryPolicy.nodes: \" 1\" is not a node list" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \"0-+1\""),
      "linux.memoryPolicy.nodes: \"0-+1\" is not a node list" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \"1024\""),
      "linux.memoryPolicy.nodes: node 1024 is beyond the 1024 nodes" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \"0\", \"flags\": [\"MPOL_F_X\"]"),
      "linux.memoryPolicy.flags[0]: unknown flag \"MPOL_F_X\"" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": \"0\", \"flags\": [\"MPOL_F_STATIC_NODES\", \"MPOL_F_RELATIVE_NODES\"]"),
      "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and MPOL_F_RELATIVE_NODES exclude each other" },
    { MPOL("\"mode\": \"MPOL_DEFAULT\", \"flags\": [\"MPOL_F_NUMA_BALANCING\"]"),
      "linux.memoryPolicy.flags: MPOL_DEFAULT takes no flags" },
    { MPOL("\"mode\": \"MPOL_BIND\", \"nodes\": 0"), "linux.memoryPolicy.nodes: expected a string" },
};

/* One test over the table (Criterion's parameterized tests copy the
 * parameters into another process, where pointers to literals dangle). */
Test(spec_bad, fails_with_path)
{
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(bad_cases); i++) {
        const struct bad_case *c = &bad_cases[i];
        struct brig_spec *s = NULL;
        autoerr struct brig_error *err = NULL;
        int r = parse(c->json, &s, &err);
        cr_expect_eq(r, -1, "accepted: %s", c->json);
        if (r == 0) {
            spec_free(s);
            continue;
        }
        cr_expect_null(s, "*out must stay NULL on failure");
        cr_expect(strstr(err->msg, c->expect) != NULL, "config: %s\n got: %s\nwant: %s", c->json,
                  err->msg, c->expect);
    }
}

Test(spec_good, minimal_without_process_or_root)
{
    autospec struct brig_spec *s = parse_ok("{\"ociVersion\": \"1.0.0\"}");
    cr_assert(!s->has_process);
    cr_assert(!s->has_linux);
    cr_assert_null(s->root.path);
    cr_assert_str_eq(s->oci_version, "1.0.0");
    cr_assert_str_eq(s->bundle, "/b");
}

Test(spec_good, unknown_fields_ignored)
{
    autospec struct brig_spec *s = parse_ok(
        "{\"ociVersion\": \"1.3.0+build.5\", \"future\": {\"x\": [1, {}]}, \"windows\": {\"y\": 1},"
        " \"root\": {\"path\": \"/abs//root/./fs/\", \"extra\": true},"
        " \"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"newThing\": 5,"
        "   \"user\": {\"uid\": 5, \"gid\": 6, \"sid\": \"x\"}},"
        " \"linux\": {\"newLinux\": [], \"resources\": {\"newCtrl\": {}, \"memory\": {\"fancy\": 1}}}}");
    cr_assert_str_eq(s->root.path, "/abs/root/fs");
    cr_assert_eq(s->process.user.uid, 5);
    cr_assert_eq(s->process.user.gid, 6);
    cr_assert(s->linux_cfg.resources.present);
    cr_assert(!s->linux_cfg.resources.memory.limit.set);
}

Test(spec_good, nulls_read_as_absent)
{
    autospec struct brig_spec *s = parse_ok(DOC(PROC ", \"hostname\": null, \"mounts\": null,"
                                                " \"linux\": {\"seccomp\": null, \"resources\": null}"));
    cr_assert_null(s->hostname);
    cr_assert_eq(s->n_mounts, 0);
    cr_assert(!s->linux_cfg.seccomp.present);
    cr_assert(!s->linux_cfg.resources.present);
}

Test(spec_good, u64_values_from_text)
{
    autospec struct brig_spec *s = parse_ok(DOC(
        "\"process\": {\"cwd\": \"/\", \"args\": [\"sh\"], \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\","
        " \"soft\": 18446744073709551615, \"hard\": 18446744073709551615}]},"
        " \"linux\": {\"resources\": {\"hugepageLimits\": [{\"pageSize\": \"1GB\", \"limit\": 18446744073709551615}],"
        "   \"cpu\": {\"period\": 18446744073709551615, \"quota\": -1}},"
        "  \"seccomp\": {\"defaultAction\": \"SCMP_ACT_ERRNO\", \"defaultErrnoRet\": 1, \"syscalls\": [{\"names\": [\"x\"],"
        "   \"action\": \"SCMP_ACT_TRACE\", \"errnoRet\": 7, \"args\": [{\"index\": 5, \"value\": 18446744073709551615,"
        "   \"valueTwo\": 9223372036854775808, \"op\": \"SCMP_CMP_MASKED_EQ\"}]}]}}"));
    cr_assert_eq(s->process.rlimits[0].soft, UINT64_MAX);
    cr_assert_eq(s->process.rlimits[0].hard, UINT64_MAX);
    cr_assert_eq(s->process.rlimits[0].resource, RLIMIT_NOFILE);
    cr_assert_eq(s->linux_cfg.resources.hugepage_limits[0].limit, UINT64_MAX);
    cr_assert_eq(s->linux_cfg.resources.cpu.period.v, UINT64_MAX);
    cr_assert_eq(s->linux_cfg.resources.cpu.quota.v, -1);
    const struct brig_seccomp *sc = &s->linux_cfg.seccomp;
    cr_assert_eq(sc->default_action, BRIG_SCMP_ERRNO);
    cr_assert(sc->has_default_errno_ret);
    cr_assert_eq(sc->default_errno_ret, 1);
    cr_assert_eq(sc->syscalls[0].action, BRIG_SCMP_TRACE);
    cr_assert_eq(sc->syscalls[0].errno_ret, 7);
    cr_assert_eq(sc->syscalls[0].args[0].index, 5);
    cr_assert_eq(sc->syscalls[0].args[0].value, UINT64_MAX);
    cr_assert_eq(sc->syscalls[0].args[0].value_two, UINT64_C(9223372036854775808));
    cr_assert_eq(sc->syscalls[0].args[0].op, BRIG_SCMP_CMP_MASKED_EQ);
}

Test(spec_good, process_details)
{
    autospec struct brig_spec *s = parse_ok(DOC(
        "\"process\": {\"cwd\": \"/w\", \"args\": [\"a\", \"b\"], \"terminal\": true,"
        " \"consoleSize\": {\"height\": 25, \"width\": 80},"
        " \"user\": {\"uid\": 4294967295, \"gid\": 0, \"umask\": 63},"
        " \"oomScoreAdj\": -1000,"
        " \"capabilities\": {\"bounding\": [\"CAP_CHOWN\", \"CAP_NO_SUCH_THING\"], \"ambient\": []},"
        " \"ioPriority\": {\"class\": \"IOPRIO_CLASS_IDLE\", \"priority\": 7},"
        " \"scheduler\": {\"policy\": \"SCHED_DEADLINE\", \"flags\": [\"SCHED_FLAG_RESET_ON_FORK\","
        "   \"SCHED_FLAG_RECLAIM\"], \"runtime\": 10, \"deadline\": 20, \"period\": 30, \"nice\": -5},"
        " \"execCPUAffinity\": {\"initial\": \"0-3, 7\", \"final\": \"\"}}"));
    const struct brig_process *p = &s->process;
    cr_assert(p->terminal);
    cr_assert(p->has_console_size);
    cr_assert_eq(p->console_width, 80);
    cr_assert_eq(p->user.uid, UINT32_MAX);
    cr_assert(p->user.has_umask);
    cr_assert_eq(p->user.umask, 63);
    cr_assert(p->has_oom_score_adj);
    cr_assert_eq(p->oom_score_adj, -1000);
    cr_assert(p->caps.present[BRIG_CAP_BOUNDING]);
    cr_assert(p->caps.present[BRIG_CAP_AMBIENT]);
    cr_assert(!p->caps.present[BRIG_CAP_EFFECTIVE]);
    cr_assert_eq(p->caps.sets[BRIG_CAP_BOUNDING], UINT64_C(1) << 0, "CAP_CHOWN is 0, unknown dropped");
    cr_assert_eq(p->caps.sets[BRIG_CAP_AMBIENT], 0);
    cr_assert(p->has_io_priority);
    cr_assert_eq(p->io_priority.klass, 3);
    cr_assert_eq(p->io_priority.priority, 7);
    cr_assert(p->has_scheduler);
    cr_assert_eq(p->scheduler.policy, 6);
    cr_assert_eq(p->scheduler.flags, 0x3);
    cr_assert_eq(p->scheduler.period, 30);
    cr_assert_eq(p->scheduler.nice, -5);
    cr_assert_str_eq(p->exec_cpu_affinity_initial, "0-3, 7");
    cr_assert_str_eq(p->exec_cpu_affinity_final, "");
}

Test(spec_good, linux_details)
{
    autospec struct brig_spec *s = parse_ok(LINUX(
        "\"namespaces\": [{\"type\": \"network\", \"path\": \"/proc/1/ns/net\"}, {\"type\": \"user\"}],"
        " \"devices\": [{\"path\": \"/dev/p\", \"type\": \"p\"}],"
        " \"personality\": {\"domain\": \"LINUX32\"},"
        " \"timeOffsets\": {\"boottime\": {\"secs\": -5, \"nanosecs\": 999999999}},"
        " \"rootfsPropagation\": \"rprivate\","
        " \"resources\": {\"devices\": [{\"allow\": true, \"type\": \"b\", \"major\": 8, \"access\": \"mwr\"}],"
        "   \"unified\": {\"memory.max\": \"max\"}, \"pids\": {\"limit\": -1}},"
        " \"intelRdt\": {\"closID\": \"x\"}, \"memoryPolicy\": {\"mode\": \"MPOL_BIND\", \"nodes\": \"0-1,65\","
        "   \"flags\": [\"MPOL_F_STATIC_NODES\", \"MPOL_F_NUMA_BALANCING\"]}"));
    const struct brig_linux *l = &s->linux_cfg;
    cr_assert(l->namespaces[BRIG_NS_NETWORK].present);
    cr_assert_str_eq(l->namespaces[BRIG_NS_NETWORK].path, "/proc/1/ns/net");
    cr_assert(l->namespaces[BRIG_NS_USER].present);
    cr_assert(!l->namespaces[BRIG_NS_PID].present);
    cr_assert_eq(l->devices[0].type, 'p');
    cr_assert_eq(l->devices[0].major, 0);
    cr_assert(!l->devices[0].has_file_mode);
    cr_assert(l->personality.present);
    cr_assert_eq(l->personality.domain, PER_LINUX32);
    cr_assert(!l->time_offsets[0].set);
    cr_assert(l->time_offsets[1].set);
    cr_assert_eq(l->time_offsets[1].secs, -5);
    cr_assert_eq(l->time_offsets[1].nanosecs, 999999999);
    cr_assert_str_eq(l->resources.devices[0].access, "rwm", "access is kept in canonical order");
    cr_assert_eq(l->resources.devices[0].minor, -1);
    cr_assert_eq(l->resources.pids.limit.v, -1);
    cr_assert_str_eq(l->resources.unified[0].value, "max");
    cr_assert(l->has_intel_rdt);
    cr_assert(l->memory_policy.present);
    cr_assert_eq(l->memory_policy.mode, BRIG_MPOL_BIND);
    cr_assert_eq(l->memory_policy.flags, BRIG_MPOL_F_STATIC_NODES | BRIG_MPOL_F_NUMA_BALANCING);
    cr_assert_eq(l->memory_policy.nodes[0], 3);
    cr_assert_eq(l->memory_policy.nodes[1], 2);
    cr_assert(!l->has_net_devices);
}

Test(spec_good, idmap_option_mappings)
{
    /* crun(1): uids=@1-3-10 with linux.uidMappings {0,0,1},{1,2,1000} is
     * uids=1-4-10; "idmap=" alone is "idmap" */
    autospec struct brig_spec *s = parse_ok(DOC(PROC ", \"mounts\": [{\"destination\": \"/a\", "
        "\"source\": \"/s\", \"options\": [\"bind\", \"idmap=uids=@1-3-10#0-0-1;gids=0-100-10\"]}, "
        "{\"destination\": \"/b\", \"source\": \"/s\", \"options\": [\"bind\", \"idmap=\"]}], "
        "\"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}, "
        "{\"containerID\": 1, \"hostID\": 2, \"size\": 1000}], "
        "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}]}"));
    const struct brig_mount *m = &s->mounts[0];
    cr_assert(m->opts.idmap && m->opts.idmap_inline);
    cr_assert_eq(m->n_uid_mappings, 2);
    cr_assert_eq(m->uid_mappings[0].container_id, 1);
    cr_assert_eq(m->uid_mappings[0].host_id, 4);
    cr_assert_eq(m->uid_mappings[0].size, 10);
    cr_assert_eq(m->uid_mappings[1].host_id, 0);
    cr_assert_eq(m->n_gid_mappings, 1);
    cr_assert_eq(m->gid_mappings[0].host_id, 100);
    cr_assert(s->mounts[1].opts.idmap && !s->mounts[1].opts.idmap_inline);
    cr_assert_eq(s->mounts[1].n_uid_mappings, 0);
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(spec_check_supported(s, &err), 0, "%s", err ? err->msg : "");
}

Test(spec_good, names)
{
    cr_assert_str_eq(spec_ns_name(BRIG_NS_NETWORK), "network");
    cr_assert_str_eq(spec_ns_name(BRIG_NS_TIME), "time");
    cr_assert_str_eq(spec_hook_name(BRIG_HOOK_CREATE_RUNTIME), "createRuntime");
    cr_assert_str_eq(spec_hook_name(BRIG_HOOK_POSTSTOP), "poststop");
}

Test(spec_good, old_version_accepted_future_refused)
{
    autospec struct brig_spec *s = parse_ok("{\"ociVersion\": \"0.5.0-dev\"}");
    cr_assert_str_eq(s->oci_version, "0.5.0-dev");
    autospec struct brig_spec *s2 = parse_ok("{\"ociVersion\": \"1.3.0-rc.1\"}");
    cr_assert_not_null(s2);
}

Test(spec_good, truncated_input_never_parses)
{
    /* Every strict prefix of a valid config is invalid JSON: none may parse,
     * and none may crash or leak (run under valgrind/ASan to see leaks). */
    const char *full = DOC(PROC ", \"mounts\": [{\"destination\": \"/p\", \"type\": \"proc\"}]");
    for (size_t n = 0; n < strlen(full); n++) {
        struct brig_spec *s = NULL;
        autoerr struct brig_error *err = NULL;
        cr_assert_eq(spec_parse(full, n, "/b", &s, &err), -1, "prefix of %zu parsed", n);
    }
}
