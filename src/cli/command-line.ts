/**
 * Parses a subcommand's arguments with node:util parseArgs (strict: an unknown flag is never
 * ignored). A first, lenient pass names the usual mistakes in plain words, because parseArgs' own
 * messages explain its rules for positionals instead ("Unknown option '-5'. To specify a positional
 * argument starting with a '-', place it at the end of the command after '--'…").
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError, type ParsedCommand } from './command.ts';

/** `-5`, `-0.5`: what a negative amount looks like on a command line. */
const NEGATIVE_NUMBER = /^-\d/;

export function parseCommandLine(args: readonly string[], options: ParseArgsOptionsConfig, maxPositionals: number): ParsedCommand {
  const { tokens } = parseArgs({ args: [...args], options, allowPositionals: true, strict: false, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const declared = options[token.name];
    if (declared === undefined) {
      throw new UsageError(
        NEGATIVE_NUMBER.test(token.rawName) ? `negative amounts are not accepted ('${args[token.index]}')` : `unknown option '${token.rawName}'`,
      );
    }
    if (declared.type === 'boolean' && token.value !== undefined) throw new UsageError(`${token.rawName} takes no value`);
    // Without '=', a value that starts with '-' is another option: the value was left out.
    if (declared.type === 'string' && (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))) {
      throw new UsageError(`${token.rawName} needs a value`);
    }
  }
  const parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  if (parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals[maxPositionals];
    throw new UsageError(maxPositionals === 0 ? `unexpected argument '${extra}' (options are written --name value)` : `unexpected argument '${extra}'`);
  }
  // No command declares a `multiple` option, so no value is an array.
  return { values: parsed.values as ParsedCommand['values'], positionals: parsed.positionals };
}
