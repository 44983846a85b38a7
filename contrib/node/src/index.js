// brig-sandbox: agent-authored commands in brig sandboxes, from Node.
//
//   import { run, Sandbox } from 'brig-sandbox';
//   const r = await run(['sh', '-c', 'make test'], { workspace: '/srv/ws/t1', timeout: '10m' });
//   const sb = await Sandbox.create({ workspace: '/srv/ws/t1', policy: 'pygent' });
//   try { await sb.exec(['pip', 'list'], { signal }); } finally { await sb.remove({ force: true }); }
//
// Each brig exit status is one outcome: a SandboxResult for 0, N, 124 (a
// limit fired), 126/127 (not executable / not found), 128+N (a signal);
// SandboxRefused for 125 (brig failed); BadResult when brig printed no
// result; BrigNotFound, BrigTimeout. An aborted signal kills the sandbox
// (an exec's command) and rejects with the signal's reason.
// No runtime dependency: child_process only.

import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

import { BadResult, BrigError, BrigNotFound, BrigTimeout, SandboxEvent, SandboxInfo, SandboxRefused, SandboxResult, StreamResult } from './result.js';

export { BadResult, BrigError, BrigNotFound, BrigTimeout, SandboxEvent, SandboxInfo, SandboxRefused, SandboxResult, StreamResult };

/** Where an installed brig lies when PATH has no sbin (meson install and the .deb put it in sbin). */
export const BRIG_DIRS = Object.freeze(['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']);

const REFUSED = 125;
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

function executable(p) {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** NAME as given when it is a path; else the first on PATH, then in DIRS. */
export function findBrig(name = 'brig', dirs = BRIG_DIRS) {
  if (name.includes('/')) return name;
  const envPath = process.env.PATH ?? '';
  for (const d of envPath.split(':')) {
    if (d && executable(path.join(d, name))) return path.join(d, name);
  }
  for (const d of dirs) {
    if (executable(path.join(d, name))) return path.join(d, name);
  }
  const fix = name.includes('brig')
    ? "install brig (`bash scripts/setup.sh` in its clone, or its .deb), or pass { brig: '/path/to/brig' }" : `install ${name}`;
  throw new BrigNotFound(`${name}: not found on PATH (${envPath}) nor in ${dirs.join(', ')}: ${fix}`);
}

function prefix(o) {
  return o.sudo ? [findBrig('sudo'), '-n', findBrig(o.brig ?? 'brig', o.brigDirs)] : [findBrig(o.brig ?? 'brig', o.brigDirs)];
}

function checkArgv(argv) {
  if (!Array.isArray(argv) || argv.length === 0) {
    throw new TypeError("argv: a non-empty array of strings (use ['sh', '-c', CMD] for a shell line)");
  }
  return argv.map(String);
}

function checkName(name) {
  if (typeof name !== 'string' || !NAME_RE.test(name) || name.startsWith('sb-') || name.includes('..')) {
    throw new TypeError(`sandbox name ${JSON.stringify(name)}: 1-63 of [A-Za-z0-9_.-], starting with a letter or digit, not sb-...`);
  }
  return name;
}

function flags(pairs) {
  const out = [];
  for (const [flag, v] of pairs) if (v !== undefined && v !== null) out.push(flag, String(v));
  return out;
}

function envFlags(env) {
  const out = [];
  for (const [k, v] of Object.entries(env ?? {})) {
    if (!k || k.includes('=')) throw new TypeError(`env: bad name ${JSON.stringify(k)}`);
    out.push('--env', `${k}=${v}`);
  }
  return out;
}

const outputFlag = (events) => (events ? ['--events'] : ['--json']);

function runArgs(argv, o, events) {
  return ['sandbox', 'run', ...outputFlag(events),
    ...flags([['--policy', o.policy], ['--rootfs', o.rootfs], ['--workspace', o.workspace], ['--timeout', o.timeout],
      ['--idle-timeout', o.idleTimeout], ['--output-limit', o.outputLimit], ['--cwd', o.cwd], ['--state-root', o.stateRoot]]),
    ...envFlags(o.env), ...(o.tty ? ['--tty'] : []), ...(o.stdin != null ? ['--stdin', '-'] : []), '--', ...checkArgv(argv)];
}

function lastLine(buf) {
  const lines = buf.toString().split('\n').map((l) => l.trim()).filter(Boolean);
  return lines.length ? lines[lines.length - 1] : '';
}

function findResult(stdout, events) {
  if (!events) return new SandboxResult(JSON.parse(stdout.toString()));
  const lines = stdout.toString().split('\n').filter((l) => l.trim());
  if (!lines.length) throw new TypeError('no result event');
  const d = JSON.parse(lines[lines.length - 1]);
  // brig failing before the stream starts may print a bare result
  if (d && typeof d === 'object' && !('event' in d)) return new SandboxResult(d);
  const ev = new SandboxEvent(d);
  if (!ev.result) throw new TypeError(`the last event is ${JSON.stringify(ev.event)}, not the result`);
  return ev.result;
}

/** brig's exit status and output as one outcome: a result, or thrown. */
function outcome({ status, signal, stdout, stderr }, events, result = null) {
  let err = null;
  if (!result) {
    try {
      result = findResult(stdout, events);
    } catch (e) {
      err = e;
    }
  }
  if (status === REFUSED || (result && result.exitStatus === REFUSED)) {
    throw new SandboxRefused(result, lastLine(stderr) || null);
  }
  if (!result) {
    const how = signal ? `died of ${signal}` : `exited ${status}`;
    throw new BadResult(`brig ${how} without a result: ${err.message}; stderr: ${stderr.toString().trim().slice(0, 500)}`,
      { stdout, stderr, exitStatus: status, signal, cause: err });
  }
  return result;
}

/** A command without a result (create, rm, ls): its stdout, or thrown. */
function checked({ status, signal, stdout, stderr }) {
  if (status === 0) return stdout.toString();
  if (status === REFUSED) throw new SandboxRefused(null, lastLine(stderr) || null);
  throw new BadResult(`brig ${signal ? `died of ${signal}` : `exited ${status}`}: ${lastLine(stderr)}`,
    { stdout, stderr, exitStatus: status, signal });
}

function abortReason(signal) {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * Run brig with ARGS. With onEvent, each stdout line is an event handed over
 * as it arrives. An aborted `signal` or `processTimeout` (ms) kills brig
 * with SIGKILL: a run's sandbox dies with it (brig-init's parent-death
 * signal); `afterKill` then runs (an exec's reap).
 */
function call(cmd, { stdin = null, signal, processTimeout, onEvent, afterKill } = {}) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    let child;
    try {
      child = spawn(cmd[0], cmd.slice(1), { stdio: [stdin != null ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    } catch (e) {
      reject(e.code === 'ENOENT' ? new BrigNotFound(`${cmd[0]}: not found`, { cause: e }) : e);
      return;
    }
    const out = [];
    const err = [];
    let partial = Buffer.alloc(0);
    let result = null;
    let failure = null;       // why brig was killed: an Error to reject with
    let timer = null;

    const kill = (why) => {
      if (failure) return;
      failure = why;
      child.kill('SIGKILL');
    };
    const onAbort = () => kill(abortReason(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    if (processTimeout != null) {
      timer = setTimeout(() => kill(new BrigTimeout(`brig did not finish within ${processTimeout} ms (killed)`)), processTimeout);
    }
    const line = (buf) => {
      let ev;
      try {
        ev = new SandboxEvent(JSON.parse(buf.toString()));
      } catch {
        return;               // not an event: the outcome tells what it was
      }
      if (ev.result) result = ev.result;
      try {
        onEvent(ev);
      } catch (e) {
        kill(e);
      }
    };
    child.stdout.on('data', (chunk) => {
      out.push(chunk);
      if (!onEvent) return;
      let buf = Buffer.concat([partial, chunk]);
      for (let i; (i = buf.indexOf(10)) >= 0; buf = buf.subarray(i + 1)) line(buf.subarray(0, i));
      partial = Buffer.from(buf);
    });
    child.stderr.on('data', (chunk) => err.push(chunk));
    if (stdin != null) {
      child.stdin.on('error', () => {});   // the command did not read it all
      child.stdin.end(typeof stdin === 'string' ? Buffer.from(stdin) : stdin);
    }
    child.on('error', (e) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(e.code === 'ENOENT' ? new BrigNotFound(`${cmd[0]}: not found`, { cause: e }) : e);
    });
    child.on('close', async (status, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (onEvent && partial.length) line(partial);
      if (failure) {
        if (afterKill) await afterKill().catch(() => {});
        reject(failure);
        return;
      }
      resolve({ status, signal: sig, stdout: Buffer.concat(out), stderr: Buffer.concat(err), result });
    });
  });
}

function eventHandler(o) {
  if (!o.onOutput && !o.onEvent) return undefined;
  return (ev) => {
    if (o.onOutput && ev.event === 'output' && ev.stream !== null && ev.data !== null) o.onOutput(ev.stream, ev.data);
    if (o.onEvent) o.onEvent(ev);
  };
}

/**
 * Run argv in a fresh sandbox (`brig sandbox run`) and resolve to its result.
 * Durations are brig's ('30s', '10m'), sizes '64KiB'; processTimeout is in ms.
 */
export async function run(argv, options = {}) {
  const onEvent = eventHandler(options);
  const args = runArgs(argv, options, !!onEvent);
  const r = await call([...prefix(options), ...args], { ...options, onEvent, afterKill: undefined });
  return outcome(r, !!onEvent, r.result);
}

/** The long-lived sandboxes (`brig sandbox ls --json`). */
export async function listSandboxes(options = {}) {
  const r = await call([...prefix({ ...options, sudo: false }), 'sandbox', 'ls', '--json', ...flags([['--state-root', options.stateRoot]])],
    { processTimeout: options.processTimeout, signal: options.signal });
  const text = checked(r);
  let items;
  try {
    items = JSON.parse(text);
    if (!Array.isArray(items)) throw new TypeError('sandbox ls: expected an array');
    return items.map((d) => new SandboxInfo(d));
  } catch (e) {
    throw new BadResult(`brig sandbox ls --json: ${e.message}`, { stdout: r.stdout, stderr: r.stderr, exitStatus: 0, cause: e });
  }
}

/** Remove the sandbox NAME (`brig sandbox rm`); force kills what still runs in it. */
export async function remove(name, options = {}) {
  const r = await call([...prefix({ ...options, sudo: false }), 'sandbox', 'rm', ...(options.force ? ['--force'] : []),
    ...flags([['--state-root', options.stateRoot]]), checkName(name)], { processTimeout: options.processTimeout, signal: options.signal });
  checked(r);
}

/**
 * A long-lived sandbox for an agent session: `await Sandbox.create(opts)`
 * (or `new Sandbox(opts)` then `create()`), many `exec()`s, `remove()`.
 * With `await using sb = await Sandbox.create(...)` it is removed (force)
 * at the end of the block.
 */
export class Sandbox {
  constructor({ name, policy, rootfs, workspace, env, stateRoot, brig = 'brig', brigDirs, processTimeout } = {}) {
    this.name = name === undefined ? `js-${randomBytes(6).toString('hex')}` : checkName(name);
    Object.assign(this, { policy, rootfs, workspace, env, stateRoot, brig, brigDirs, processTimeout });
    this.created = false;
  }

  static async create(options = {}) {
    return new Sandbox(options).create(options.signal);
  }

  /** Make the sandbox (`brig sandbox create`); SandboxRefused if brig cannot. */
  async create(signal) {
    const r = await call([...prefix(this), 'sandbox', 'create',
      ...flags([['--policy', this.policy], ['--rootfs', this.rootfs], ['--workspace', this.workspace], ['--state-root', this.stateRoot]]),
      ...envFlags(this.env), this.name], { processTimeout: this.processTimeout, signal });
    checked(r);
    this.created = true;
    return this;
  }

  /** Run argv in this sandbox (`brig sandbox exec`): the result as run()'s.
   * A timeout kills this command and what it started, not the sandbox. */
  async exec(argv, options = {}) {
    const onEvent = eventHandler(options);
    const args = ['sandbox', 'exec', ...outputFlag(!!onEvent),
      ...flags([['--timeout', options.timeout], ['--idle-timeout', options.idleTimeout], ['--output-limit', options.outputLimit],
        ['--cwd', options.cwd], ['--state-root', this.stateRoot]]),
      ...envFlags(options.env), ...(options.stdin != null ? ['--stdin', '-'] : []), this.name, '--', ...checkArgv(argv)];
    const r = await call([...prefix(this), ...args], {
      stdin: options.stdin, signal: options.signal, processTimeout: options.processTimeout ?? this.processTimeout, onEvent,
      // a killed brig exec leaves its command to the next exec or ls: reap it now
      afterKill: () => listSandboxes({ stateRoot: this.stateRoot, brig: this.brig, brigDirs: this.brigDirs }),
    });
    return outcome(r, !!onEvent, r.result);
  }

  /** Remove the sandbox (`brig sandbox rm`); force kills what still runs. */
  async remove({ force = false } = {}) {
    await remove(this.name, { force, stateRoot: this.stateRoot, brig: this.brig, brigDirs: this.brigDirs, processTimeout: this.processTimeout });
    this.created = false;
  }

  async [Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]() {
    if (this.created) await this.remove({ force: true });
  }
}
