// brig-mcp's server: an MCP server (the official SDK) whose tools run shell
// commands in brig sandboxes under one policy and workspace:
//   run             a command in a fresh sandbox (sh -c COMMAND)
//   session_exec    a command in a long-lived sandbox of this server's
//                   (made on first use, kept between calls: /tmp, processes'
//                   files; removed when the server exits)
//   session_reset   remove that sandbox: the next session_exec starts afresh
// A result (any exit code, a limit fired) is a tool result; brig refusing
// (a policy bound, a secret-looking env name, a sandbox that cannot be made)
// is a tool error (isError) with brig's text, which the model sees; bad
// arguments are JSON-RPC errors (InvalidParams).

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

import { BrigError, Sandbox, SandboxRefused, findBrig, run } from './index.js';

const VERSION = '0.1.0';
const SESSION_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,23}$/;
// Each stream's preview in the text content (the structured result has the previews as brig kept them).
const TEXT_MAX = 64 * 1024;

const commandProps = {
  command: { type: 'string', description: 'A shell command line, run as sh -c COMMAND in the sandbox (the workspace is /workspace, the root read-only, no network but loopback).' },
  timeout: { type: 'string', description: "Wall-clock limit, e.g. '30s', '10m' (at most the policy's)." },
  cwd: { type: 'string', description: 'Working directory inside the sandbox (default: /workspace).' },
  stdin: { type: 'string', description: "Text fed to the command's stdin (default: none)." },
};

export const TOOLS = [
  {
    name: 'run',
    description: 'Run a shell command in a fresh, isolated brig sandbox and return its exit code, output previews and which limit fired (if any). Nothing of the sandbox outlives the command except files written to /workspace.',
    inputSchema: { type: 'object', properties: commandProps, required: ['command'], additionalProperties: false },
  },
  {
    name: 'session_exec',
    description: "Run a shell command in this session's long-lived brig sandbox (made on first use): /tmp and other writable places persist between calls, unlike `run`. Returns exit code, output previews and which limit fired.",
    inputSchema: {
      type: 'object',
      properties: { ...commandProps, session: { type: 'string', description: "Which session sandbox (default 'default'): 1-24 of [A-Za-z0-9_.-]." } },
      required: ['command'],
      additionalProperties: false,
    },
  },
  {
    name: 'session_reset',
    description: "Remove this session's long-lived sandbox (killing what still runs in it); the next session_exec starts a fresh one. /workspace is kept.",
    inputSchema: { type: 'object', properties: { session: { type: 'string' } }, additionalProperties: false },
  },
];

function invalid(message) {
  return new McpError(ErrorCode.InvalidParams, message);
}

function args(a, names) {
  a = a ?? {};
  for (const k of Object.keys(a)) if (!names.includes(k)) throw invalid(`unknown argument ${JSON.stringify(k)}`);
  for (const [k, v] of Object.entries(a)) if (typeof v !== 'string') throw invalid(`${k}: expected a string`);
  return a;
}

function commandArgs(a, extra = []) {
  a = args(a, ['command', 'timeout', 'cwd', 'stdin', ...extra]);
  if (!a.command) throw invalid('command: a non-empty shell command line is required');
  return a;
}

function clip(s) {
  return s.length > TEXT_MAX ? `${s.slice(0, TEXT_MAX)}\n[... clipped ...]` : s;
}

/** A result as the model reads it (text) and as a program does (structuredContent). */
export function toolResult(r) {
  const how = r.limit === 'wall' ? 'timed out (wall limit), killed' : r.limit === 'idle' ? 'timed out (idle limit: no output), killed'
    : r.limit === 'oom' ? 'killed: out of memory' : r.signal !== null ? `killed by signal ${r.signal}` : `exit code ${r.exitCode}`;
  const lines = [how];
  if (r.error) lines.push(`error: ${r.error}`);
  for (const s of ['stdout', 'stderr']) {
    const st = r[s];
    if (st.bytes === 0) continue;
    lines.push(`--- ${s} (${st.bytes} bytes${st.truncated ? ', middle not kept' : ''}${st.binary ? ', binary' : ''}) ---`);
    lines.push(clip(st.text));
  }
  return {
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: { ...r.raw, limit: r.limit },
    isError: false,
  };
}

function toolError(e) {
  return { content: [{ type: 'text', text: `brig refused: ${e.error ?? e.message}` }], isError: true };
}

function hasEvents(brig) {
  try {
    return execFileSync(findBrig(brig), ['sandbox', 'run', '--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).includes('--events');
  } catch (e) {
    return String(e.stdout ?? '').includes('--events');
  }
}

/**
 * The server and what it owns. options: policy, workspace, rootfs, stateRoot,
 * brig, timeout (the default for calls that give none), outputLimit, env.
 * close() removes its session sandboxes.
 */
export function createServer(options = {}) {
  const { policy, workspace, rootfs, stateRoot, brig = 'brig', timeout, outputLimit, env } = options;
  const base = { policy, workspace, rootfs, stateRoot, brig, env };
  const server = new Server({ name: 'brig-mcp', version: VERSION },
    { capabilities: { tools: {} }, instructions: 'Shell commands in brig sandboxes: `run` for one-off commands, `session_exec` when state must persist between commands.' });
  const sessions = new Map();   // session name -> Promise<Sandbox>
  const tag = randomBytes(4).toString('hex');
  let events = null;

  const live = (extra, request) => {
    const token = request.params._meta?.progressToken;
    if (token === undefined) return {};
    if (events === null) events = hasEvents(brig);
    if (!events) return {};
    let n = 0;
    return {
      onOutput: (stream, data) => {
        extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++n, message: `${stream}: ${data.slice(0, 4096)}` } }).catch(() => {});
      },
    };
  };

  const session = (name) => {
    if (!sessions.has(name)) {
      const p = Sandbox.create({ ...base, name: `mcp-${tag}-${name}` });
      p.catch(() => sessions.delete(name));
      sessions.set(name, p);
    }
    return sessions.get(name);
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: a } = request.params;
    try {
      if (name === 'run') {
        const c = commandArgs(a);
        const r = await run(['sh', '-c', c.command], { ...base, timeout: c.timeout ?? timeout, outputLimit, cwd: c.cwd, stdin: c.stdin, signal: extra.signal, ...live(extra, request) });
        return toolResult(r);
      }
      if (name === 'session_exec') {
        const c = commandArgs(a, ['session']);
        const s = c.session ?? 'default';
        if (!SESSION_RE.test(s)) throw invalid('session: 1-24 of [A-Za-z0-9_.-], starting with a letter or digit');
        const sb = await session(s);
        const r = await sb.exec(['sh', '-c', c.command], { timeout: c.timeout ?? timeout, outputLimit, cwd: c.cwd, stdin: c.stdin, signal: extra.signal, ...live(extra, request) });
        return toolResult(r);
      }
      if (name === 'session_reset') {
        const s = args(a, ['session']).session ?? 'default';
        const p = sessions.get(s);
        sessions.delete(s);
        if (p) await (await p).remove({ force: true });
        return { content: [{ type: 'text', text: p ? `session ${s} removed` : `no session ${s}` }], isError: false };
      }
      throw invalid(`unknown tool ${JSON.stringify(name)}`);
    } catch (e) {
      if (e instanceof McpError) throw e;
      if (e instanceof SandboxRefused || e instanceof BrigError) return toolError(e);
      if (e instanceof TypeError) throw invalid(e.message);
      throw e;
    }
  });

  const close = async () => {
    const all = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(all.map(async (p) => (await p).remove({ force: true })));
  };
  return { server, close };
}
