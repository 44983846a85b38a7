// The result, event and error types: sandbox/result.schema.json as
// classes with camelCase fields (the JSON itself in `raw`), brig's failures
// as errors. No dependency.

export class BrigError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** brig failed (exit 125): a bad flag, a policy refusal, a sandbox that
 * could not be made or is gone. `result` is brig's result when it printed
 * one (run, exec), else null (create, rm, a flag brig does not know). */
export class SandboxRefused extends BrigError {
  constructor(result, error) {
    const text = (result && result.error) || error || 'brig failed (exit 125)';
    super(text);
    this.result = result ?? null;
    this.error = text;
  }
}

/** The brig binary (or sudo) is not there. */
export class BrigNotFound extends BrigError {}

/** brig did not finish within processTimeout (it was killed). */
export class BrigTimeout extends BrigError {}

/** brig's stdout was not a result (a brig too old, or something else). */
export class BadResult extends BrigError {
  constructor(message, { stdout, stderr, exitStatus, signal, cause } = {}) {
    super(message, cause ? { cause } : undefined);
    this.stdout = stdout;
    this.stderr = stderr;
    this.exitStatus = exitStatus;
    this.signal = signal;
  }
}

function typed(d, key, type, { optional = false, what = 'result' } = {}) {
  if (!(key in d)) throw new TypeError(`${what}: ${key} missing`);
  const v = d[key];
  if (v === null && optional) return null;
  const ok = type === 'integer' ? Number.isInteger(v) : type === 'object' ? v !== null && typeof v === 'object' && !Array.isArray(v) : typeof v === type;
  if (!ok) throw new TypeError(`${what}: ${key}: expected ${type}, got ${v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v}`);
  return v;
}

function object(d, what) {
  if (d === null || typeof d !== 'object' || Array.isArray(d)) throw new TypeError(`${what}: expected an object`);
  return d;
}

/** One stream: previews of its head and tail, everything counted. */
export class StreamResult {
  constructor(d) {
    object(d, 'result stream');
    this.previewHead = typed(d, 'preview_head', 'string');
    this.previewTail = typed(d, 'preview_tail', 'string');
    this.bytes = typed(d, 'bytes', 'integer');
    this.truncated = typed(d, 'truncated', 'boolean');
    this.binary = typed(d, 'binary', 'boolean');
  }

  /** All of it when not truncated, else head + marker + tail. */
  get text() {
    if (!this.truncated) return this.previewHead;
    const cut = this.bytes - Buffer.byteLength(this.previewHead) - Buffer.byteLength(this.previewTail);
    return `${this.previewHead}\n[... ${cut} bytes not kept ...]\n${this.previewTail}`;
  }
}

/** sandbox/result.schema.json, field for field. */
export class SandboxResult {
  constructor(d) {
    object(d, 'result');
    const opt = (k, t) => typed(d, k, t, { optional: true });
    this.id = typed(d, 'id', 'string');
    this.sandbox = d.sandbox === undefined ? null : opt('sandbox', 'string');
    this.policy = opt('policy', 'string');
    this.exitCode = opt('exit_code', 'integer');
    this.signal = opt('signal', 'integer');
    this.timedOut = typed(d, 'timed_out', 'boolean');
    this.idleTimedOut = typed(d, 'idle_timed_out', 'boolean');
    this.oomKilled = typed(d, 'oom_killed', 'boolean');
    this.wallMs = typed(d, 'wall_ms', 'integer');
    this.cpuUserMs = opt('cpu_user_ms', 'integer');
    this.cpuSystemMs = opt('cpu_system_ms', 'integer');
    this.memoryPeakBytes = opt('memory_peak_bytes', 'integer');
    this.pidsPeak = opt('pids_peak', 'integer');
    this.stdout = new StreamResult(typed(d, 'stdout', 'object'));
    this.stderr = new StreamResult(typed(d, 'stderr', 'object'));
    this.error = opt('error', 'string');
    this.ran = typed(d, 'ran', 'boolean');
    this.exitStatus = typed(d, 'exit_status', 'integer');
    Object.defineProperty(this, 'raw', { value: d, enumerable: false });
  }

  /** The command ran and exited 0. */
  get ok() {
    return this.exitCode === 0 && this.error === null;
  }

  /** Which limit ended the command: 'wall', 'idle', 'oom', or null. */
  get limit() {
    if (this.timedOut) return 'wall';
    if (this.idleTimedOut) return 'idle';
    return this.oomKilled ? 'oom' : null;
  }

  toJSON() {
    return this.raw;
  }
}

/** One line of `brig sandbox ls --json`. */
export class SandboxInfo {
  constructor(d) {
    object(d, 'sandbox ls');
    const what = 'sandbox ls';
    const opt = (k, t) => (k in d ? typed(d, k, t, { optional: true, what }) : null);
    this.name = typed(d, 'name', 'string', { what });
    this.status = typed(d, 'status', 'string', { what });
    this.policy = opt('policy', 'string');
    this.pid = opt('pid', 'integer');
    this.execs = opt('execs', 'integer') ?? 0;
    this.created = opt('created', 'string');
  }
}

/** One line of `--events`: `event` is 'start' (id, policy), 'output'
 * (stream, data: for display; the result's previews and counts are
 * authoritative), 'limit' (limit), 'output_truncated' (stream), and last
 * 'result' (result). Kinds and members brig adds later are in `raw`. */
export class SandboxEvent {
  constructor(d) {
    object(d, 'event');
    const what = 'event';
    const opt = (k, t) => (k in d ? typed(d, k, t, { optional: true, what }) : null);
    this.event = typed(d, 'event', 'string', { what });
    this.timeMs = opt('time_ms', 'integer');
    this.stream = opt('stream', 'string');
    this.data = opt('data', 'string');
    this.limit = opt('limit', 'string');
    this.id = opt('id', 'string');
    this.policy = opt('policy', 'string');
    this.result = this.event === 'result' ? new SandboxResult(typed(d, 'result', 'object', { what })) : null;
    Object.defineProperty(this, 'raw', { value: d, enumerable: false });
  }
}
