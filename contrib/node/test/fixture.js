// Shared by the tests: a stand-in brig, and for the real one (root, BRIG)
// a busybox rootfs, a workspace owned by uid 1000 and a private state root.
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const BRIG = process.env.BRIG ?? '';
export const realSkip = process.getuid() !== 0 || !BRIG ? "the real brig needs root and BRIG (meson's clients env)" : false;

export function realFixture() {
  const dir = mkdtempSync(path.join(tmpdir(), 'brig-jsclient.'));
  chmodSync(dir, 0o755);
  const rootfs = path.join(dir, 'rootfs');
  for (const d of ['bin', 'dev', 'proc', 'sys', 'tmp', 'var/tmp', 'workspace', 'etc']) mkdirSync(path.join(rootfs, d), { recursive: true });
  copyFileSync('/bin/busybox', path.join(rootfs, 'bin/busybox'));
  chmodSync(path.join(rootfs, 'bin/busybox'), 0o755);
  for (const a of ['sh', 'cat', 'echo', 'seq', 'sleep', 'true', 'head', 'yes', 'touch', 'ls', 'test', '[']) symlinkSync('busybox', path.join(rootfs, 'bin', a));
  const workspace = path.join(dir, 'ws');
  mkdirSync(workspace);
  chownSync(workspace, 1000, 1000);
  const stateRoot = path.join(dir, 'state');
  return {
    dir, opts: { brig: BRIG, rootfs, workspace, stateRoot, processTimeout: 120000 },
    cleanup() {
      // a killed run's leftovers (cgroup, state) are the next run's to remove
      try { execFileSync(BRIG, ['sandbox', 'run', '--json', '--rootfs', rootfs, '--workspace', workspace, '--state-root', stateRoot, '--', 'true'], { stdio: 'ignore' }); } catch { /* reported by the tests */ }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Host pids whose environment holds TAG (a sandbox's commands). */
export function taggedPids(tag) {
  const pids = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readFileSync(`/proc/${p}/environ`).includes(tag)) pids.push(Number(p));
    } catch { /* gone, or not ours to read */ }
  }
  return pids;
}

export async function waitFor(fn, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (fn()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

export function fakeBrig() {
  const dir = mkdtempSync(path.join(tmpdir(), 'brig-jsfake.'));
  const brig = path.join(dir, 'brig');
  writeFileSync(brig, '#!/bin/sh\nprintf "%s\\n" "$@" > "$FAKE_DIR/argv"\ncat > "$FAKE_DIR/stdin"\nprintf "%s" "$FAKE_OUT"\n' +
    'printf "%s" "$FAKE_ERR" >&2\n[ -n "$FAKE_SLEEP" ] && exec sleep "$FAKE_SLEEP"\nexit "$FAKE_RC"\n');
  chmodSync(brig, 0o755);
  return {
    dir, brig,
    fake(out, rc, { err = '', sleep = '' } = {}) {
      Object.assign(process.env, { FAKE_DIR: dir, FAKE_OUT: typeof out === 'string' ? out : JSON.stringify(out), FAKE_RC: String(rc), FAKE_ERR: err, FAKE_SLEEP: sleep });
    },
    argv: () => readFileSync(path.join(dir, 'argv'), 'utf8').split('\n').slice(0, -1),
    stdin: () => readFileSync(path.join(dir, 'stdin'), 'utf8'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export const SAMPLE = {
  id: 'sb-a4938fea258a', policy: 'agent', exit_code: 3, signal: null, timed_out: false, idle_timed_out: false, oom_killed: false,
  wall_ms: 13, cpu_user_ms: 1, cpu_system_ms: 4, memory_peak_bytes: 1122304, pids_peak: null,
  stdout: { preview_head: 'hi\n', preview_tail: '', bytes: 3, truncated: false, binary: false },
  stderr: { preview_head: '', preview_tail: '', bytes: 0, truncated: false, binary: false },
  error: null, ran: true, exit_status: 3,
};
