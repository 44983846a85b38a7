#!/usr/bin/env python3
"""The argument rules of seccomp-default.json say what docs/security.md says.

check_seccomp_default.py PROFILE.json

The filter is default-deny; ioctl and socket are allowed only by rules whose
conditions are all SCMP_CMP_MASKED_EQ, on distinct arguments (ANDed; several
rules for one syscall are ORed by every runtime). The kernel reads ioctl's
cmd and socket's family and protocol as 32-bit ints, so the masks must
ignore the high 32 bits: a cmd of 0x1_0000_5412 is TIOCSTI to the kernel.
This evaluates the rules as the BPF does, on 64-bit values, and checks:
  ioctl: allowed iff the low 32 bits are neither TIOCSTI nor TIOCLINUX;
  socket: allowed iff the family is AF_UNIX, AF_INET, AF_INET6, AF_PACKET,
  or AF_NETLINK with protocol NETLINK_ROUTE (0) only: the other netlink
  families (uevents, audit, connector...) are the host's;
  socketpair: allowed iff the family is AF_UNIX (it makes its sockets through
  the family's code and module autoload as socket does)."""
import json
import sys

TIOCSTI, TIOCLINUX = 0x5412, 0x541C
FAMILIES = {1, 2, 10, 16, 17}
AF_NETLINK = 16
NETLINK_PROTOCOLS = range(32)   # the kernel's MAX_LINKS
HIGH = [0, 1 << 32, 0xFFFFFFFF << 32, 0x8000000000000000]


def rules_for(profile, name):
    out = []
    for r in profile['syscalls']:
        if name not in r['names'] or r['action'] not in ('SCMP_ACT_ALLOW', 'SCMP_ACT_LOG'):
            continue
        args = r.get('args') or []
        if not args or any(a['op'] != 'SCMP_CMP_MASKED_EQ' for a in args) or \
                len({a['index'] for a in args}) != len(args):
            sys.exit('%s: allowed by a rule whose conditions are not SCMP_CMP_MASKED_EQ on '
                     'distinct arguments' % name)
        out.append(args)
    if not out:
        sys.exit('%s: no rule allows it' % name)
    return out


def allowed(rules, argv):
    """argv: {index: value}; an argument a rule names but argv does not is 0."""
    return any(all((argv.get(a['index'], 0) & a['value']) == a.get('valueTwo', 0) for a in r)
               for r in rules)


def main():
    profile = json.load(open(sys.argv[1], encoding='utf-8'))
    if profile['defaultAction'] not in ('SCMP_ACT_ERRNO', 'SCMP_ACT_KILL', 'SCMP_ACT_KILL_PROCESS'):
        sys.exit('the default action must deny')
    ioctl = rules_for(profile, 'ioctl')
    cmds = set(range(0x10000)) | {TIOCSTI ^ (1 << b) for b in range(32)} | \
        {TIOCLINUX ^ (1 << b) for b in range(32)} | {0x80086601, 0xC0045877, 0xFFFFFFFF}
    for low in cmds:
        for high in HIGH:
            want = low not in (TIOCSTI, TIOCLINUX)
            if allowed(ioctl, {1: high | low}) != want:
                sys.exit('ioctl cmd %#x: %s, should be %s' % (high | low, not want and 'allowed'
                         or 'denied', want and 'allowed' or 'denied'))
    sock = rules_for(profile, 'socket')
    for fam in range(64):
        for high in HIGH:
            for proto in NETLINK_PROTOCOLS:
                for phigh in HIGH:
                    want = fam in FAMILIES and (fam != AF_NETLINK or proto == 0)
                    if allowed(sock, {0: high | fam, 2: phigh | proto}) != want:
                        sys.exit('socket family %#x protocol %#x: wrong verdict'
                                 % (high | fam, phigh | proto))
    pair = rules_for(profile, 'socketpair')
    for fam in range(64):
        for high in HIGH:
            if allowed(pair, {0: high | fam}) != (fam == 1):
                sys.exit('socketpair family %#x: wrong verdict' % (high | fam))
    print('ok: ioctl denies exactly TIOCSTI and TIOCLINUX, socket allows exactly %s '
          '(AF_NETLINK only NETLINK_ROUTE), socketpair only AF_UNIX, high 32 bits ignored'
          % sorted(FAMILIES))


if __name__ == '__main__':
    main()
