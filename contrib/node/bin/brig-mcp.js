#!/usr/bin/env node
// brig-mcp: an MCP server over stdio that gives an agent a sandboxed shell
// (tools run, session_exec, session_reset: src/mcp.js).
//
//   brig-mcp --policy agent --workspace DIR [--rootfs DIR] [--timeout DUR]
//            [--output-limit SIZE] [--state-root DIR] [--brig PATH] [--env K=V]...
import process from 'node:process';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

import { createServer } from '../src/mcp.js';

const usage = `Usage: brig-mcp [--policy NAME|FILE] [--workspace DIR] [--rootfs DIR] [--timeout DUR]
                [--output-limit SIZE] [--state-root DIR] [--brig PATH] [--env K=V]...
An MCP server on stdio: tools run (a shell command in a fresh brig sandbox),
session_exec (in a long-lived one, made on first use, removed at exit) and
session_reset. brig runs as this process's user: root, or see docs/clients.md.`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      policy: { type: 'string' }, workspace: { type: 'string' }, rootfs: { type: 'string' }, timeout: { type: 'string' },
      'output-limit': { type: 'string' }, 'state-root': { type: 'string' }, brig: { type: 'string' },
      env: { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' },
    },
  }));
} catch (e) {
  process.stderr.write(`brig-mcp: ${e.message}\n${usage}\n`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
if (values.version) {
  process.stdout.write('brig-mcp 0.1.0\n');
  process.exit(0);
}
const env = {};
for (const kv of values.env ?? []) {
  const i = kv.indexOf('=');
  if (i <= 0) {
    process.stderr.write(`brig-mcp: --env ${kv}: expected NAME=VALUE\n`);
    process.exit(2);
  }
  env[kv.slice(0, i)] = kv.slice(i + 1);
}

const { server, close } = createServer({
  policy: values.policy, workspace: values.workspace, rootfs: values.rootfs, timeout: values.timeout,
  outputLimit: values['output-limit'], stateRoot: values['state-root'], brig: values.brig ?? 'brig', env,
});

// The client closing our stdin, or a signal, ends the server: its session
// sandboxes go with it.
let closing = false;
const shutdown = async (code = 0) => {
  if (closing) return;
  closing = true;
  await close().catch(() => {});
  await server.close().catch(() => {});
  process.exit(code);
};
process.stdin.on('end', () => shutdown(0));
process.on('SIGINT', () => shutdown(130));
process.on('SIGTERM', () => shutdown(143));
await server.connect(new StdioServerTransport());
