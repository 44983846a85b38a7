// brig-sandbox against a stand-in brig: the command lines it builds, and
// each brig exit status mapped to its one outcome.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import * as bs from '../src/index.js';
import { SAMPLE, fakeBrig } from './fixture.js';

const f = fakeBrig();
after(() => f.cleanup());
const b = { brig: f.brig };

test('a result, typed', async () => {
  f.fake(SAMPLE, 3);
  const r = await bs.run(['sh', '-c', 'echo hi; exit 3'], b);
  assert.ok(r instanceof bs.SandboxResult);
  assert.deepEqual([r.exitCode, r.signal, r.stdout.text, r.stdout.bytes, r.ok, r.limit, r.pidsPeak], [3, null, 'hi\n', 3, false, null, null]);
  assert.deepEqual(JSON.parse(JSON.stringify(r)), SAMPLE);
});

test('flags and the command', async () => {
  f.fake(SAMPLE, 3);
  await bs.run(['ls', '-l', '--', 'x'], { ...b, policy: 'pi', workspace: '/w', timeout: '10s', idleTimeout: '5s', outputLimit: '1KiB', env: { A: 'b=c' }, cwd: '/w', tty: true });
  assert.deepEqual(f.argv(), ['sandbox', 'run', '--json', '--policy', 'pi', '--workspace', '/w', '--timeout', '10s', '--idle-timeout', '5s',
    '--output-limit', '1KiB', '--cwd', '/w', '--env', 'A=b=c', '--tty', '--', 'ls', '-l', '--', 'x']);
  await bs.run(['cat'], { ...b, stdin: 'some input' });
  assert.ok(f.argv().includes('--stdin'));
  assert.equal(f.stdin(), 'some input');
  await assert.rejects(bs.run('echo hi', b), TypeError);
  await assert.rejects(bs.run(['true'], { ...b, env: { 'A=B': 'c' } }), TypeError);
});

test('125 is SandboxRefused, with the result or with stderr', async () => {
  f.fake({ ...SAMPLE, exit_code: null, error: "--timeout 2h is above the policy's timeouts.wall (600s)", ran: false, exit_status: 125 }, 125);
  const e = await bs.run(['true'], b).catch((x) => x);
  assert.ok(e instanceof bs.SandboxRefused && e instanceof bs.BrigError);
  assert.match(e.message, /timeouts\.wall/);
  assert.equal(e.result.ran, false);
  f.fake('', 125, { err: 'brig sandbox run: flag provided but not defined: --bogus' });
  const e2 = await bs.run(['true'], b).catch((x) => x);
  assert.ok(e2 instanceof bs.SandboxRefused);
  assert.equal(e2.result, null);
  assert.match(e2.error, /--bogus/);
});

test('126, 127 and every other status are results', async () => {
  for (const code of [126, 127]) {
    f.fake({ ...SAMPLE, exit_code: code, ran: false, exit_status: code, error: 'brig-init: no-such: No such file or directory' }, code);
    const r = await bs.run(['no-such'], b);
    assert.deepEqual([r.exitCode, r.ran, r.ok], [code, false, false]);
  }
  for (const code of [0, 1, 124, 137, 255]) {
    f.fake({ ...SAMPLE, exit_code: code, exit_status: code }, code);
    assert.equal((await bs.run(['x'], b)).exitStatus, code);
  }
  f.fake({ ...SAMPLE, exit_code: null, signal: 9, timed_out: true, exit_status: 124 }, 124);
  assert.equal((await bs.run(['x'], b)).limit, 'wall');
});

test('not a result is BadResult', async () => {
  f.fake('Usage: brig ...', 1);
  const e = await bs.run(['true'], b).catch((x) => x);
  assert.ok(e instanceof bs.BadResult);
  assert.equal(e.exitStatus, 1);
  f.fake({ ...SAMPLE, exit_code: '3' }, 3);
  await assert.rejects(bs.run(['true'], b), /exit_code: expected integer/);
  f.fake({ ...SAMPLE, wall_ms: true }, 3);
  await assert.rejects(bs.run(['true'], b), /wall_ms: expected integer/);
});

test('brig missing; the default brig found off PATH', async () => {
  await assert.rejects(bs.run(['true'], { brig: path.join(f.dir, 'nonexistent') }), bs.BrigNotFound);
  f.fake(SAMPLE, 3);
  const saved = process.env.PATH;
  process.env.PATH = '/nonexistent';
  try {
    assert.equal((await bs.run(['true'], { brigDirs: ['/nonexistent-2', f.dir] })).exitCode, 3);
    const e = await bs.run(['true'], { brigDirs: ['/nonexistent-2'] }).catch((x) => x);
    assert.ok(e instanceof bs.BrigNotFound);
    assert.match(e.message, /nonexistent-2.*setup\.sh/);
  } finally {
    process.env.PATH = saved;
  }
});

test('a hung brig: BrigTimeout; an abort rejects with the reason', async () => {
  f.fake(SAMPLE, 0, { sleep: '10' });
  await assert.rejects(bs.run(['true'], { ...b, processTimeout: 300 }), bs.BrigTimeout);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  await assert.rejects(bs.run(['true'], { ...b, signal: ac.signal }), { name: 'AbortError' });
  await assert.rejects(bs.run(['true'], { ...b, signal: AbortSignal.abort(new Error('gone')) }), /gone/);
});

test('events: onOutput, onEvent, the result last', async () => {
  const lines = [{ event: 'start', id: 'sb-1', policy: 'agent', time_ms: 0 },
    { event: 'output', stream: 'stdout', data: 'hi\n', time_ms: 3 },
    { event: 'output', stream: 'stderr', data: 'oops\n', time_ms: 4 },
    { event: 'limit', limit: 'wall', time_ms: 1000 },
    { event: 'something-new', time_ms: 1001 },
    { event: 'result', result: { ...SAMPLE, timed_out: true, exit_code: null, signal: 9, exit_status: 124 } }];
  f.fake(lines.map((l) => JSON.stringify(l)).join('\n') + '\n', 124);
  const seen = [];
  const evs = [];
  const r = await bs.run(['x'], { ...b, onOutput: (s, d) => seen.push([s, d]), onEvent: (e) => evs.push(e) });
  assert.ok(f.argv().includes('--events') && !f.argv().includes('--json'));
  assert.deepEqual(seen, [['stdout', 'hi\n'], ['stderr', 'oops\n']]);
  assert.deepEqual(evs.map((e) => e.event), lines.map((l) => l.event));
  assert.equal(evs[3].limit, 'wall');
  assert.equal(r.limit, 'wall');
  f.fake(JSON.stringify({ event: 'result', result: { ...SAMPLE, exit_code: null, error: '--env GITHUB_TOKEN: refused', ran: false, exit_status: 125 } }) + '\n', 125);
  await assert.rejects(bs.run(['x'], { ...b, onOutput: () => {} }), bs.SandboxRefused);
});

test('session commands', async () => {
  f.fake('', 0);
  const sb = await bs.Sandbox.create({ ...b, name: 's1', policy: 'pygent', workspace: '/w', env: { A: '1' }, stateRoot: '/st' });
  assert.deepEqual(f.argv(), ['sandbox', 'create', '--policy', 'pygent', '--workspace', '/w', '--state-root', '/st', '--env', 'A=1', 's1']);
  f.fake(SAMPLE, 3);
  assert.equal((await sb.exec(['ls', '-l'], { timeout: '5s' })).exitCode, 3);
  assert.deepEqual(f.argv(), ['sandbox', 'exec', '--json', '--timeout', '5s', '--state-root', '/st', 's1', '--', 'ls', '-l']);
  f.fake('', 0);
  await sb.remove({ force: true });
  assert.deepEqual(f.argv(), ['sandbox', 'rm', '--force', '--state-root', '/st', 's1']);
  f.fake([{ name: 's1', status: 'running', policy: 'agent', pid: 7, execs: 1, created: '2026-01-01T00:00:00Z' }], 0);
  const ls = await bs.listSandboxes(b);
  assert.deepEqual({ ...ls[0] }, { name: 's1', status: 'running', policy: 'agent', pid: 7, execs: 1, created: '2026-01-01T00:00:00Z' });
  f.fake('', 125, { err: 'brig sandbox rm: sandbox s1: 1 command(s) still running (rm --force kills them)' });
  await assert.rejects(bs.remove('s1', b), /still running/);
  assert.match(new bs.Sandbox(b).name, /^js-/);
  for (const bad of ['../x', 'sb-1', 'a/b', '']) assert.throws(() => new bs.Sandbox({ name: bad }), TypeError);
});
