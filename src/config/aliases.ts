/**
 * Public inbound names of a model (docs/catalog.md, "Aliases"): the configured aliases, the last
 * path segment of the id, and the version-spelling variant of the id and of that segment. A version
 * written with a hyphen between two short numbers (`atlas-4-5`, `orbit-3-1-8b`) also answers to
 * the dotted spelling (`atlas-4.5`, `orbit-3.1-8b`) and the other way round. Only numbers of one or
 * two digits that stand as their own hyphen-separated part count, so sizes (`2-7b`) and dates
 * (`2024-08-06`) are never rewritten. Aliases resolve to the id; they never become catalog rows.
 *
 * Every public name must lead to one model: an alias equal to another model's id, or shared by two
 * models, is a config error (reported by the loader with the path of the offending field).
 */
import type { ModelConfig } from './schema.ts';

/**
 * `4-5` → `4.5` where both numbers are whole hyphen-separated parts of one or two digits, not
 * preceded by another number part and not followed by a third one (`1-2-3` is left alone).
 */
const HYPHEN_VERSION = /(?<![\d.]|\d-)(\d{1,2})-(\d{1,2})(?=$|-(?!\d{1,2}(?:-|$)))/g;
/** `4.5` → `4-5` under the same conditions (a third dotted part, as in `1.2.3`, is left alone). */
const DOTTED_VERSION = /(?<![\d.])(\d{1,2})\.(\d{1,2})(?![\d.])/g;

type AliasSource = Pick<ModelConfig, 'id' | 'aliases'>;

/** The model's aliases in order: configured ones first, then derived ones; never its own id. */
export function publicAliases(model: AliasSource): string[] {
  const names = new Set([...(model.aliases ?? []), ...derivedAliases(model.id)]);
  names.delete(model.id);
  return [...names];
}

function derivedAliases(id: string): string[] {
  const lastSegment = id.slice(id.lastIndexOf('/') + 1);
  return [lastSegment, versionVariant(id), versionVariant(lastSegment)].filter((name): name is string => name !== undefined);
}

/** The other spelling of the version numbers in a name; undefined when it has none. */
export function versionVariant(name: string): string | undefined {
  const dotted = name.replace(HYPHEN_VERSION, '$1.$2');
  if (dotted !== name) return dotted;
  const hyphenated = name.replace(DOTTED_VERSION, '$1-$2');
  return hyphenated !== name ? hyphenated : undefined;
}

export interface AliasConflict {
  /** JSON path of the field that introduces the conflicting name. */
  readonly path: string;
  readonly message: string;
}

/** The first public name that would lead to two models, or undefined when every name is unique. */
export function findAliasConflict(models: readonly AliasSource[]): AliasConflict | undefined {
  const owners = new Map<string, string>();
  for (const model of models) owners.set(model.id, model.id);
  for (const [index, model] of models.entries()) {
    const configured = new Set(model.aliases ?? []);
    for (const alias of publicAliases(model)) {
      const owner = owners.get(alias);
      if (owner !== undefined && owner !== model.id) {
        const path = configured.has(alias) ? `/models/${index}/aliases/${(model.aliases ?? []).indexOf(alias)}` : `/models/${index}/id`;
        const origin = configured.has(alias) ? 'alias' : 'derived alias';
        const clash = alias === owner ? 'is the id of' : 'also names';
        return { path, message: `${origin} '${alias}' of '${model.id}' ${clash} model '${owner}'` };
      }
      owners.set(alias, model.id);
    }
  }
  return undefined;
}

/** Every public name (ids and aliases) → model id; assumes findAliasConflict found nothing. */
export function nameIndex(models: readonly AliasSource[]): ReadonlyMap<string, string> {
  const index = new Map<string, string>();
  for (const model of models) {
    index.set(model.id, model.id);
    for (const alias of publicAliases(model)) index.set(alias, model.id);
  }
  return index;
}
