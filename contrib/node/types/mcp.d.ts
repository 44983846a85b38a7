// Types of brig-sandbox/mcp (src/mcp.js): the server behind brig-mcp.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { SandboxResult } from './index.js';

export interface McpServerOptions {
  policy?: string;
  workspace?: string;
  rootfs?: string;
  stateRoot?: string;
  brig?: string;
  /** The default wall limit of a call that gives none ('30s', '10m'). */
  timeout?: string;
  outputLimit?: string;
  env?: Record<string, string>;
}

export declare const TOOLS: ReadonlyArray<{ name: string; description: string; inputSchema: Record<string, unknown> }>;
export declare function toolResult(r: SandboxResult): {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Record<string, unknown>;
  isError: boolean;
};
/** The server (connect it to a transport) and close(), which removes its session sandboxes. */
export declare function createServer(options?: McpServerOptions): { server: Server; close(): Promise<void> };
