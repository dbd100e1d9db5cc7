/**
 * Client-facing names of canonical fields, per dialect, for the rare 400s a translator raises itself
 * (a value the upstream format cannot express). The error must name the field the client sent.
 */
import type { DialectName } from '../canonical/index.ts';

/** Where the conversation lives in each dialect's body. */
export function conversationParam(dialect: DialectName): string {
  switch (dialect) {
    case 'chat':
    case 'messages':
      return 'messages';
    case 'responses':
      return 'input';
    default: {
      const unknown: never = dialect;
      return unknown;
    }
  }
}

/** The reasoning control of each dialect. */
export function reasoningParam(dialect: DialectName): string {
  switch (dialect) {
    case 'chat':
      return 'reasoning_effort';
    case 'messages':
      return 'thinking';
    case 'responses':
      return 'reasoning';
    default: {
      const unknown: never = dialect;
      return unknown;
    }
  }
}
