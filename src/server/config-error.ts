import type { ConfigError } from '../config/load.ts';

/** `config error at /models/2/endpoints/0/pricing/unit: …`: the path of the bad field first. */
export function configErrorLine(error: ConfigError): string {
  const at = error.path || '/';
  // ConfigError's message already starts with its path; print it once.
  const detail = error.message.startsWith(`${at}: `) ? error.message.slice(at.length + 2) : error.message;
  return `config error at ${at}: ${detail}`;
}
