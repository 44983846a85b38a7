#!/usr/bin/env python3
"""check_schema.py SCHEMA PROFILE...: the built-in profiles validate against
policy.schema.json, and typos the C parser refuses are refused by the
schema too (the two must not drift apart). A profile with "extends" is
validated as brig reads it: merged (RFC 7386) over the profile it names,
one of the others given. Exit 77 (skip) without the jsonschema module."""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print('SKIP: python3 jsonschema is not installed')
    sys.exit(77)

schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
failed = 0


def merge_patch(target, patch):
    """RFC 7386, as policy/policy_extends.c applies it."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


profiles = {os.path.basename(p)[:-len('.json')]: json.load(open(p)) for p in sys.argv[2:]}


def resolved(doc, depth=0):
    if 'extends' not in doc:
        return doc
    if depth >= 7 or '/' in doc['extends'] or doc['extends'] not in profiles:
        raise ValueError('extends %s: not a built-in profile given here (or too deep)' % doc['extends'])
    base = dict(resolved(profiles[doc['extends']], depth + 1))
    base.pop('name', None)
    base.pop('description', None)
    return merge_patch(base, {k: v for k, v in doc.items() if k != 'extends'})


for path in sys.argv[2:]:
    try:
        doc = resolved(json.load(open(path)))
    except ValueError as e:
        print('%s: %s' % (path, e))
        failed += 1
        continue
    errors = list(validator.iter_errors(doc))
    for e in errors:
        print('%s: %s: %s' % (path, '.'.join(map(str, e.path)), e.message))
    failed += bool(errors)
for bad in ['{"capabilites": []}', '{"limits": {"memroy": "1G"}}', '{"limits": {"memory": "1 GB"}}',
            '{"mode": "lenient"}', '{"network": {"mode": "netns"}}', '{"tmpfs": [{"path": "/tmp"}]}',
            '{"rlimits": {"RLIMIT_NOFLIE": 1}}', '{"socket": []}', '{"sockets": ["a.sock"]}',
            '{"workspace": {"path": "/w", "maxsize": "4MiB"}}', '{"workspace": {"path": "/w", "maxSize": "4 MiB"}}', '{"env": {"denny": []}}', '{"timeouts": {"wall": "10 min"}}',
            '{"network": {"mode": "egress", "allow": ["api.example.com"]}}', '{"network": {"mode": "egress", "alow": []}}',
            '{"network": {"mode": "none", "allow": ["*:*"]}}', '{"network": {"mode": "egress", "allow": ["api.*.com:443"]}}',
            '{"network": {"mode": "egress", "maxConnections": 0}}', '{"extends": 5}', '{"extends": ""}',
            '{"extend": "pi"}',
            '{"network": {"mode": "egress", "credentials": [{"host": "a.example", "header": "x-api-key", "value": "sk-123"}]}}',
            '{"network": {"mode": "egress", "credentials": [{"host": "a.example", "header": "x api key", "value": "env:K"}]}}',
            '{"network": {"mode": "egress", "credentials": [{"host": "a.example", "header": "x", "value": "env:K", "port": 0}]}}',
            '{"env": {"set": {"A B": "x"}}}', '{"env": {"set": {"A": 1}}}']:
    if validator.is_valid(json.loads(bad)):
        print('schema accepts %s, which brig refuses' % bad)
        failed += 1
print('ok' if not failed else 'FAILED')
sys.exit(1 if failed else 0)
