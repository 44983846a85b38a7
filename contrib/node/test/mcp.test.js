// brig-mcp driven over stdio by the SDK's own client, against the real brig
// (BRIG, as root): initialize, list the tools, a one-shot run, a session
// whose state lasts between calls, a refusal (a tool error the model sees),
// bad arguments (a JSON-RPC error), and nothing left once the client goes.
// Attacks by the model: tool arguments shaped as brig flags, and reading the
// secrets in brig-mcp's own environment from inside the sandbox.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import * as bs from '../src/index.js';
import { realFixture, realSkip } from './fixture.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, '..', 'node_modules', '@modelcontextprotocol', 'sdk');
const skip = realSkip || (!existsSync(sdk) && 'no @modelcontextprotocol/sdk in contrib/node/node_modules (scripts/setup.sh runs npm ci there)');

describe('brig-mcp', { skip }, () => {
  let fx;
  let client;
  let McpError;
  const secret = `sk-brig-mcp-${process.pid}-${Date.now()}`;
  before(async () => {
    fx = realFixture();
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    ({ McpError } = await import('@modelcontextprotocol/sdk/types.js'));
    const o = fx.opts;
    client = new Client({ name: 'brig-mcp-test', version: '0' });
    await client.connect(new StdioClientTransport({
      command: process.execPath,
      args: [path.join(here, '..', 'bin', 'brig-mcp.js'), '--policy', 'agent', '--workspace', o.workspace, '--rootfs', o.rootfs,
        '--state-root', o.stateRoot, '--brig', o.brig, '--timeout', '30s'],
      stderr: 'inherit',
      // what an agent's environment holds: a key brig-mcp itself must never pass on
      env: { ...process.env, ANTHROPIC_API_KEY: secret, BRIG_MCP_MARK: secret },
    }));
  });
  after(() => fx.cleanup());

  test('initialize and list the tools', async () => {
    assert.equal(client.getServerVersion().name, 'brig-mcp');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['run', 'session_exec', 'session_reset']);
    const run = tools.find((t) => t.name === 'run');
    assert.deepEqual(run.inputSchema.required, ['command']);
  });

  test('run: a shell command, its exit code and previews', async () => {
    const r = await client.callTool({ name: 'run', arguments: { command: 'echo hi; echo oops >&2; exit 3' } });
    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.exit_code, 3);
    assert.equal(r.structuredContent.stdout.preview_head, 'hi\n');
    assert.equal(r.structuredContent.limit, null);
    assert.match(r.content[0].text, /^exit code 3\n[^]*--- stdout \(3 bytes\) ---\nhi\n[^]*--- stderr \(5 bytes\) ---\noops/);
    const t = await client.callTool({ name: 'run', arguments: { command: 'sleep 600', timeout: '1s' } });
    assert.equal(t.structuredContent.limit, 'wall');
    assert.match(t.content[0].text, /timed out \(wall limit\)/);
  });

  test('live output as progress notifications', async () => {
    // the command ends only once the test has seen both lines as progress:
    // they came while it ran (and not in one read with the response, which
    // the SDK client's handler may drop)
    const go = path.join(fx.opts.workspace, 'mcp-go');
    const progress = [];
    try {
      const r = await client.callTool({ name: 'run', arguments: { command: 'echo one; echo two >&2; while [ ! -e /workspace/mcp-go ]; do sleep 0.05; done' } },
        undefined, {
          onprogress: (p) => {
            progress.push(p.message);
            if (progress.includes('stdout: one\n') && progress.includes('stderr: two\n')) writeFileSync(go, '');
          },
        });
      assert.equal(r.structuredContent.exit_code, 0);
    } finally {
      rmSync(go, { force: true });
    }
  });

  test('session_exec: state lasts between calls; session_reset', async () => {
    const a = await client.callTool({ name: 'session_exec', arguments: { command: 'echo kept > /tmp/state' } });
    assert.equal(a.structuredContent.exit_code, 0);
    const b = await client.callTool({ name: 'session_exec', arguments: { command: 'cat /tmp/state' } });
    assert.equal(b.structuredContent.stdout.preview_head, 'kept\n');
    assert.match(b.structuredContent.sandbox, /^mcp-/);
    const other = await client.callTool({ name: 'session_exec', arguments: { command: 'cat /tmp/state', session: 'two' } });
    assert.notEqual(other.structuredContent.exit_code, 0);
    assert.equal((await bs.listSandboxes(fx.opts)).length, 2);
    const reset = await client.callTool({ name: 'session_reset', arguments: {} });
    assert.equal(reset.isError, false);
    const c = await client.callTool({ name: 'session_exec', arguments: { command: 'cat /tmp/state' } });
    assert.notEqual(c.structuredContent.exit_code, 0);
  });

  test('a refused call is a tool error with brig\'s reason', async () => {
    const r = await client.callTool({ name: 'run', arguments: { command: 'true', timeout: '999h' } });
    assert.equal(r.isError, true);
    assert.match(r.content[0].text, /brig refused: .*timeouts\.wall/);
    const s = await client.callTool({ name: 'session_exec', arguments: { command: 'true', timeout: '999h' } });
    assert.equal(s.isError, true);
  });

  test('attack: brig-mcp\'s own environment is not readable inside', async () => {
    const dump = 'env; for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done 2>/dev/null; echo end';
    for (const name of ['run', 'session_exec']) {
      const r = await client.callTool({ name, arguments: { command: dump } });
      assert.equal(r.isError, false);
      assert.match(r.structuredContent.stdout.preview_head, /end\n$/);
      assert.doesNotMatch(JSON.stringify(r), new RegExp(secret), `${name}: the secret reached the sandbox`);
    }
  });

  test('attack: arguments shaped as brig flags stay values', async () => {
    // each would widen the sandbox if it reached brig as a flag
    for (const a of [{ cwd: '--rootfs=/' }, { timeout: '--policy=/nonexistent/permissive.json' }, { timeout: '1s --rootfs /' },
      { cwd: '/workspace', timeout: '--' }]) {
      const r = await client.callTool({ name: 'run', arguments: { command: 'ls /usr/bin | head -n 3', ...a } });
      assert.equal(r.isError, true, `${JSON.stringify(a)} ran: ${JSON.stringify(r.structuredContent ?? r.content)}`);
    }
    const r = await client.callTool({ name: 'run', arguments: { command: '--rootfs=/' } });
    assert.notEqual(r.structuredContent?.exit_code ?? 1, 0);   // a command named so, in the sandbox's sh
  });

  test('bad arguments and unknown tools are MCP errors', async () => {
    await assert.rejects(client.callTool({ name: 'run', arguments: {} }), (e) => e instanceof McpError && /command/.test(e.message));
    await assert.rejects(client.callTool({ name: 'run', arguments: { command: 'true', bogus: '1' } }), McpError);
    await assert.rejects(client.callTool({ name: 'session_exec', arguments: { command: 'true', session: '../x' } }), McpError);
    await assert.rejects(client.callTool({ name: 'rm-rf', arguments: {} }), McpError);
  });

  test('the client gone, the server removes its sandboxes', async () => {
    await client.callTool({ name: 'session_exec', arguments: { command: 'true' } });
    assert.ok((await bs.listSandboxes(fx.opts)).length > 0);
    await client.close();
    let left = -1;
    for (const end = Date.now() + 20000; Date.now() < end && left !== 0; await new Promise((r) => setTimeout(r, 100))) {
      left = (await bs.listSandboxes(fx.opts)).length;
    }
    assert.equal(left, 0, 'session sandboxes left after the client went');
  });
});
