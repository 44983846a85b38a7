#!/usr/bin/env python3
"""check_schema.py SCHEMA PROFILE...: the built-in profiles validate against
policy.schema.json, and typos the C parser refuses are refused by the
schema too (the two must not drift apart). Exit 77 (skip) without the
jsonschema module."""
import json
import sys

try:
    import jsonschema
except ImportError:
    print('SKIP: python3 jsonschema is not installed')
    sys.exit(77)

schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
failed = 0
for path in sys.argv[2:]:
    errors = list(validator.iter_errors(json.load(open(path))))
    for e in errors:
        print('%s: %s: %s' % (path, '.'.join(map(str, e.path)), e.message))
    failed += bool(errors)
for bad in ['{"capabilites": []}', '{"limits": {"memroy": "1G"}}', '{"limits": {"memory": "1 GB"}}',
            '{"mode": "lenient"}', '{"network": {"mode": "netns"}}', '{"tmpfs": [{"path": "/tmp"}]}',
            '{"rlimits": {"RLIMIT_NOFLIE": 1}}', '{"socket": []}', '{"sockets": ["a.sock"]}',
            '{"workspace": {"path": "/w", "maxsize": "4MiB"}}', '{"workspace": {"path": "/w", "maxSize": "4 MiB"}}', '{"env": {"denny": []}}', '{"timeouts": {"wall": "10 min"}}',
            '{"network": {"mode": "egress", "allow": ["api.example.com"]}}', '{"network": {"mode": "egress", "alow": []}}',
            '{"network": {"mode": "none", "allow": ["*:*"]}}', '{"network": {"mode": "egress", "allow": ["api.*.com:443"]}}',
            '{"network": {"mode": "egress", "maxConnections": 0}}',
            '{"network": {"mode": "egress", "credentials": [{"host": "a.example", "header": "x-api-key", "value": "sk-123"}]}}',
            '{"network": {"mode": "egress", "credentials": [{"host": "a.example", "header": "x api key", "value": "env:K"}]}}',
            '{"network": {"mode": "egress", "credentials": [{"host": "a.example", "header": "x", "value": "env:K", "port": 0}]}}',
            '{"env": {"set": {"A B": "x"}}}', '{"env": {"set": {"A": 1}}}']:
    if validator.is_valid(json.loads(bad)):
        print('schema accepts %s, which brig refuses' % bad)
        failed += 1
print('ok' if not failed else 'FAILED')
sys.exit(1 if failed else 0)
