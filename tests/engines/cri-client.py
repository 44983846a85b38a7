#!/usr/bin/python3
"""A minimal CRI (runtime.v1) client: what the kubelet does to start a pod
with a RuntimeClass handler, nothing more. It lets the engines suite drive
containerd's CRI plugin without crictl (not packaged in Debian 12).

The few messages needed are encoded by hand (protobuf wire format; field
numbers from k8s.io/cri-api pkg/apis/runtime/v1/api.proto); grpcio carries
them. Usage (one RPC per call, results on stdout):

  cri-client.py SOCK version
  cri-client.py SOCK run-pod NAME UID NAMESPACE LOGDIR CGROUP_PARENT HANDLER   -> pod id
  cri-client.py SOCK create POD_ID POD_NAME POD_UID POD_NS LOGDIR CGROUP_PARENT NAME IMAGE LOGPATH CMD...
                                                                               -> container id
  cri-client.py SOCK start CONTAINER_ID
  cri-client.py SOCK status CONTAINER_ID          -> "STATE EXIT_CODE REASON"
  cri-client.py SOCK stop-pod POD_ID
  cri-client.py SOCK remove-pod POD_ID
"""
import sys

import grpc

SERVICE = "/runtime.v1.RuntimeService/"
NODE = 2            # NamespaceMode NODE: the host's network, no CNI needed
STATES = ["CREATED", "RUNNING", "EXITED", "UNKNOWN"]


# ---- protobuf wire format ----------------------------------------------------

def varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def f_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def f_str(num, s):
    return f_bytes(num, s.encode()) if s else b""


def f_int(num, n):
    return varint(num << 3 | 0) + varint(n) if n else b""


def decode(data):
    """Field number -> list of values (ints for varints, bytes otherwise)."""
    fields, i = {}, 0
    while i < len(data):
        key, i = read_varint(data, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            val, i = read_varint(data, i)
        elif wt == 2:
            ln, i = read_varint(data, i)
            val, i = data[i:i + ln], i + ln
        elif wt == 1:
            val, i = data[i:i + 8], i + 8
        elif wt == 5:
            val, i = data[i:i + 4], i + 4
        else:
            raise ValueError("unsupported wire type %d" % wt)
        fields.setdefault(num, []).append(val)
    return fields


def read_varint(data, i):
    n = shift = 0
    while True:
        b = data[i]
        i += 1
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return n, i


def first_str(fields, num):
    return fields.get(num, [b""])[0].decode()


# ---- CRI messages -------------------------------------------------------------

def pod_config(name, uid, namespace, logdir, cgroup_parent):
    metadata = f_str(1, name) + f_str(2, uid) + f_str(3, namespace)
    ns_options = f_int(1, NODE)                       # NamespaceOption.network
    security = f_bytes(1, ns_options)                 # LinuxSandboxSecurityContext
    linux = f_str(1, cgroup_parent) + f_bytes(2, security)
    return f_bytes(1, metadata) + f_str(3, logdir) + f_bytes(8, linux)


def container_config(name, image, logpath, cmd):
    cfg = f_bytes(1, f_str(1, name)) + f_bytes(2, f_str(1, image))
    cfg += f_str(3, cmd[0]) + b"".join(f_str(4, a) for a in cmd[1:])
    return cfg + f_str(11, logpath)


def call(channel, method, request):
    rpc = channel.unary_unary(SERVICE + method, request_serializer=lambda b: b,
                              response_deserializer=lambda b: b)
    return decode(rpc(request, timeout=120))


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    sock, op, args = argv[1], argv[2], argv[3:]
    channel = grpc.insecure_channel("unix://" + sock)
    try:
        if op == "version":
            r = call(channel, "Version", f_str(1, "v1"))
            print(first_str(r, 2), first_str(r, 3), first_str(r, 4))
        elif op == "run-pod":
            name, uid, ns, logdir, cgp, handler = args
            r = call(channel, "RunPodSandbox",
                     f_bytes(1, pod_config(name, uid, ns, logdir, cgp)) + f_str(2, handler))
            print(first_str(r, 1))
        elif op == "create":
            pod, pname, puid, pns, logdir, cgp, name, image, logpath = args[:9]
            req = f_str(1, pod) + f_bytes(2, container_config(name, image, logpath, args[9:]))
            req += f_bytes(3, pod_config(pname, puid, pns, logdir, cgp))
            print(first_str(call(channel, "CreateContainer", req), 1))
        elif op == "start":
            call(channel, "StartContainer", f_str(1, args[0]))
        elif op == "status":
            r = call(channel, "ContainerStatus", f_str(1, args[0]))
            st = decode(r.get(1, [b""])[0])
            exit_code = st.get(7, [0])[0]
            if exit_code >= 1 << 31:
                exit_code -= 1 << 64 if exit_code >= 1 << 32 else 1 << 32
            print(STATES[st.get(3, [3])[0]], exit_code, first_str(st, 10) or "-")
        elif op == "stop-pod":
            call(channel, "StopPodSandbox", f_str(1, args[0]))
        elif op == "remove-pod":
            call(channel, "RemovePodSandbox", f_str(1, args[0]))
        else:
            print("unknown operation " + op, file=sys.stderr)
            return 2
    except grpc.RpcError as e:
        print("cri-client %s: %s: %s" % (op, e.code().name, e.details()), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
