/** The served catalog's model names on SQLite: replaced as a whole, committed at once. */
import type { ServedModelsStore } from '../store.ts';
import type { SqliteDatabase } from './database.ts';

export function sqliteServedModels(database: SqliteDatabase): ServedModelsStore {
  const clear = database.prepare('DELETE FROM served_models');
  const insert = database.prepare('INSERT INTO served_models (name, model_id) VALUES (?, ?)');
  const all = database.prepare('SELECT name, model_id FROM served_models');
  return {
    async recordServedModels(names) {
      database.transaction(() => {
        clear.run();
        for (const [name, modelId] of names) insert.run(name, modelId);
      });
    },
    async servedModels() {
      const rows = all.all() as { name: string; model_id: string }[];
      return new Map(rows.map((row) => [row.name, row.model_id]));
    },
  };
}
