// Types of brig-sandbox (src/index.js, src/result.js).

export declare class BrigError extends Error {}
/** brig failed (exit 125); `result` is brig's result when it printed one. */
export declare class SandboxRefused extends BrigError {
  constructor(result: SandboxResult | null, error?: string | null);
  readonly result: SandboxResult | null;
  readonly error: string;
}
export declare class BrigNotFound extends BrigError {}
export declare class BrigTimeout extends BrigError {}
export declare class BadResult extends BrigError {
  readonly stdout?: Buffer;
  readonly stderr?: Buffer;
  readonly exitStatus?: number | null;
  readonly signal?: NodeJS.Signals | null;
}

export declare class StreamResult {
  readonly previewHead: string;
  readonly previewTail: string;
  readonly bytes: number;
  readonly truncated: boolean;
  readonly binary: boolean;
  /** All of it when not truncated, else head + marker + tail. */
  readonly text: string;
}

/** sandbox/result.schema.json, field for field (camelCase; the JSON in `raw`). */
export declare class SandboxResult {
  readonly id: string;
  /** exec only: the long-lived sandbox's name */
  readonly sandbox: string | null;
  readonly policy: string | null;
  readonly exitCode: number | null;
  readonly signal: number | null;
  readonly timedOut: boolean;
  readonly idleTimedOut: boolean;
  readonly oomKilled: boolean;
  readonly wallMs: number;
  readonly cpuUserMs: number | null;
  readonly cpuSystemMs: number | null;
  readonly memoryPeakBytes: number | null;
  readonly pidsPeak: number | null;
  readonly stdout: StreamResult;
  readonly stderr: StreamResult;
  readonly error: string | null;
  readonly ran: boolean;
  readonly exitStatus: number;
  readonly raw: Record<string, unknown>;
  /** The command ran and exited 0. */
  readonly ok: boolean;
  /** Which limit ended the command. */
  readonly limit: 'wall' | 'idle' | 'oom' | null;
  toJSON(): Record<string, unknown>;
}

/** One line of `brig sandbox ls --json`. */
export declare class SandboxInfo {
  readonly name: string;
  readonly status: string;
  readonly policy: string | null;
  readonly pid: number | null;
  readonly execs: number;
  readonly created: string | null;
}

/** One line of `--events`. */
export declare class SandboxEvent {
  readonly event: 'start' | 'output' | 'limit' | 'output_truncated' | 'result' | (string & {});
  readonly timeMs: number | null;
  readonly stream: 'stdout' | 'stderr' | null;
  readonly data: string | null;
  readonly limit: string | null;
  readonly id: string | null;
  readonly policy: string | null;
  readonly result: SandboxResult | null;
  readonly raw: Record<string, unknown>;
}

export interface CallOptions {
  /** brig's path or name (default 'brig': PATH, then BRIG_DIRS). */
  brig?: string;
  brigDirs?: readonly string[];
  stateRoot?: string;
  /** Kills brig after this many milliseconds: BrigTimeout. */
  processTimeout?: number;
  /** Aborted: brig is killed with its sandbox (an exec: its command), and the call rejects with signal.reason. */
  signal?: AbortSignal;
}

export interface LiveOptions {
  /** Each chunk of the command's output as it comes (`--events`). */
  onOutput?: (stream: 'stdout' | 'stderr', data: string) => void;
  onEvent?: (event: SandboxEvent) => void;
}

export interface ExecOptions extends LiveOptions {
  /** brig durations: '30s', '10m', '1h' */
  timeout?: string;
  idleTimeout?: string;
  /** bytes kept per stream: '64KiB' */
  outputLimit?: string;
  env?: Record<string, string>;
  cwd?: string;
  stdin?: string | Uint8Array;
  processTimeout?: number;
  signal?: AbortSignal;
}

export interface RunOptions extends CallOptions, ExecOptions {
  policy?: string;
  rootfs?: string;
  workspace?: string;
  tty?: boolean;
  /** `sudo -n brig sandbox run` (docs/sandbox.md, "Through sudo"). */
  sudo?: boolean;
}

export interface SandboxOptions extends CallOptions {
  name?: string;
  policy?: string;
  rootfs?: string;
  workspace?: string;
  env?: Record<string, string>;
}

export declare const BRIG_DIRS: readonly string[];
export declare function findBrig(name?: string, dirs?: readonly string[]): string;
export declare function run(argv: readonly string[], options?: RunOptions): Promise<SandboxResult>;
export declare function listSandboxes(options?: CallOptions): Promise<SandboxInfo[]>;
export declare function remove(name: string, options?: CallOptions & { force?: boolean }): Promise<void>;

export declare class Sandbox {
  constructor(options?: SandboxOptions);
  static create(options?: SandboxOptions): Promise<Sandbox>;
  readonly name: string;
  readonly created: boolean;
  create(signal?: AbortSignal): Promise<this>;
  exec(argv: readonly string[], options?: ExecOptions): Promise<SandboxResult>;
  remove(options?: { force?: boolean }): Promise<void>;
}
