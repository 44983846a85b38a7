// brig-sandbox against the real brig (BRIG, as root): run, Sandbox, a
// timeout, an output cap, a refusal, 20 concurrent runs, live output, and an
// AbortSignal that kills the sandbox (an exec's command, not the sandbox).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import * as bs from '../src/index.js';
import { realFixture, realSkip, taggedPids, waitFor } from './fixture.js';

describe('the real brig', { skip: realSkip }, () => {
  let fx;
  let o;
  before(() => {
    fx = realFixture();
    o = fx.opts;
  });
  after(() => fx.cleanup());

  test('run', async () => {
    const r = await bs.run(['sh', '-c', 'echo hi; echo oops >&2; exit 4'], o);
    assert.deepEqual([r.exitCode, r.stdout.text, r.stderr.text, r.policy, r.limit], [4, 'hi\n', 'oops\n', 'agent', null]);
    assert.match(r.id, /^sb-/);
  });

  test('stdin, env, the workspace', async () => {
    const r = await bs.run(['sh', '-c', 'cat > /workspace/js-in; cat /workspace/js-in; echo "$GREETING"'], { ...o, stdin: 'from node\n', env: { GREETING: 'hello' } });
    assert.equal(r.stdout.text, 'from node\nhello\n');
    assert.equal(readFileSync(path.join(o.workspace, 'js-in'), 'utf8'), 'from node\n');
  });

  test('a timeout', async () => {
    const r = await bs.run(['sleep', '600'], { ...o, timeout: '1s' });
    assert.deepEqual([r.timedOut, r.exitStatus, r.limit, r.signal], [true, 124, 'wall', 9]);
  });

  test('an output cap', async () => {
    const r = await bs.run(['sh', '-c', 'yes | head -c 100000'], { ...o, outputLimit: '1KiB' });
    assert.deepEqual([r.exitCode, r.stdout.bytes, r.stdout.truncated], [0, 100000, true]);
    assert.equal(r.stdout.previewHead.length + r.stdout.previewTail.length, 1024);
  });

  test('a refusal', async () => {
    const e = await bs.run(['true'], { ...o, env: { GITHUB_TOKEN: 'ghp_x' } }).catch((x) => x);
    assert.ok(e instanceof bs.SandboxRefused, String(e));
    assert.match(e.error, /GITHUB_TOKEN/);
    assert.doesNotMatch(e.error, /ghp_x/);
    await assert.rejects(bs.run(['true'], { ...o, timeout: '999h' }), /timeouts\.wall/);
  });

  test('127 and 126 are results, not refusals', async () => {
    const r = await bs.run(['no-such-command'], o);
    assert.deepEqual([r.exitCode, r.exitStatus, r.ran], [127, 127, false]);
    assert.match(r.error, /no-such-command/);
    const noexec = path.join(o.workspace, 'noexec');
    writeFileSync(noexec, 'x\n', { mode: 0o644 });
    try {
      const n = await bs.run(['/workspace/noexec'], o);
      assert.deepEqual([n.exitCode, n.ran], [126, false]);
    } finally {
      unlinkSync(noexec);
    }
  });

  test('attack: the caller\'s environment is not readable inside', async () => {
    const secret = `sk-brig-js-${process.pid}-${Date.now()}`;
    const dump = ['sh', '-c', 'env; for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f"; done 2>/dev/null; echo end'];
    Object.assign(process.env, { ANTHROPIC_API_KEY: secret, BRIG_JS_MARK: secret });
    try {
      const outs = [await bs.run(dump, o)];
      const sb = await bs.Sandbox.create(o);
      try {
        outs.push(await sb.exec(dump));
      } finally {
        await sb.remove({ force: true });
      }
      for (const r of outs) {
        assert.match(r.stdout.text, /end\n$/);
        assert.doesNotMatch(r.stdout.text + r.stderr.text, new RegExp(secret));
      }
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
      delete process.env.BRIG_JS_MARK;
    }
  });

  test('brig missing', async () => {
    await assert.rejects(bs.run(['true'], { ...o, brig: path.join(fx.dir, 'no-brig') }), bs.BrigNotFound);
  });

  test('20 at once', async () => {
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => bs.run(['sh', '-c', `echo token-${i}; exit ${i % 7}`], o)));
    assert.deepEqual(rs.map((r) => [r.stdout.text, r.exitCode]), rs.map((_, i) => [`token-${i}\n`, i % 7]));
    assert.equal(new Set(rs.map((r) => r.id)).size, 20);
  });

  test('a Sandbox: state kept between execs, a timeout kills the command only, removed', async () => {
    const sb = await bs.Sandbox.create(o);
    try {
      assert.ok((await bs.listSandboxes(o)).some((s) => s.name === sb.name));
      assert.equal((await sb.exec(['sh', '-c', 'echo kept > /tmp/f'])).exitCode, 0);
      const r = await sb.exec(['cat', '/tmp/f']);
      assert.deepEqual([r.stdout.text, r.sandbox], ['kept\n', sb.name]);
      const rs = await Promise.all([0, 1, 2, 3].map((i) => sb.exec(['sh', '-c', `echo ${i}`])));
      assert.deepEqual(rs.map((x) => x.stdout.text), ['0\n', '1\n', '2\n', '3\n']);
      assert.equal((await sb.exec(['sleep', '600'], { timeout: '1s' })).limit, 'wall');
      assert.equal((await sb.exec(['true'])).exitCode, 0);
      await assert.rejects(sb.exec(['true'], { env: { AWS_SECRET_ACCESS_KEY: 'x' } }), bs.SandboxRefused);
    } finally {
      await sb.remove({ force: true });
    }
    assert.ok(!(await bs.listSandboxes(o)).some((s) => s.name === sb.name));
    await assert.rejects(sb.exec(['true']), /no such sandbox/);
    await assert.rejects(bs.Sandbox.create({ ...o, rootfs: path.join(fx.dir, 'no-rootfs') }), (e) => e instanceof bs.SandboxRefused && /no-rootfs/.test(e.error));
  });

  test('an AbortSignal kills the sandbox; an exec\'s command, not the sandbox', async () => {
    const tag = `BRIG_JSABORT=${process.pid}-${Date.now()}`;
    const ac = new AbortController();
    const p = bs.run(['sleep', '600'], { ...o, env: { BRIG_JSABORT: tag }, signal: ac.signal });
    assert.ok(await waitFor(() => taggedPids(tag).length > 0), 'the command never started');
    ac.abort();
    await assert.rejects(p, { name: 'AbortError' });
    assert.ok(await waitFor(() => taggedPids(tag).length === 0), "the aborted run's command still runs");

    const sb = await bs.Sandbox.create(o);
    try {
      const ac2 = new AbortController();
      const q = sb.exec(['sleep', '600'], { env: { BRIG_JSABORT: tag }, signal: ac2.signal });
      assert.ok(await waitFor(() => taggedPids(tag).length > 0), 'the exec never started');
      ac2.abort();
      await assert.rejects(q, { name: 'AbortError' });
      assert.ok(await waitFor(() => taggedPids(tag).length === 0), "the aborted exec's command still runs");
      assert.equal((await sb.exec(['true'])).exitCode, 0);
    } finally {
      await sb.remove({ force: true });
    }
  });

  test('live output', async () => {
    const go = path.join(o.workspace, 'go');
    const seen = [];
    try {
      // the command waits for a file the test makes only after it has seen
      // the first line: the event came while the command ran
      const r = await bs.run(['sh', '-c', 'echo ready; while [ ! -e /workspace/go ]; do sleep 0.05; done; echo done'], {
        ...o,
        onOutput: (stream, data) => {
          seen.push([stream, data]);
          if (data.includes('ready')) writeFileSync(go, '');
        },
      });
      assert.equal(r.stdout.text, 'ready\ndone\n');
      assert.equal(seen.filter(([s]) => s === 'stdout').map(([, d]) => d).join(''), 'ready\ndone\n');
    } finally {
      if (existsSync(go)) unlinkSync(go);
    }
  });
});
