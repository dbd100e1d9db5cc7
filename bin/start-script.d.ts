/** The types of start-script.js, for the benchmark's TypeScript. */
export interface StartScript {
  readonly env: Record<string, string>;
  readonly command: string;
  readonly args: string[];
}

export function parseStartScript(script: string): StartScript;
export function readStartScript(root: string): StartScript;
