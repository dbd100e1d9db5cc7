/** The served catalog's model names on PostgreSQL: replaced as a whole in one transaction. */
import type { ServedModelsStore } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';

const ALL: Statement = { name: 'gateway_served_models_all', text: 'SELECT name, model_id FROM served_models' };

export function postgresServedModels(database: PostgresDatabase): ServedModelsStore {
  return {
    async recordServedModels(names) {
      await database.transaction(async (client) => {
        await client.query('DELETE FROM served_models');
        await client.query('INSERT INTO served_models (name, model_id) SELECT * FROM unnest($1::text[], $2::text[])', [[...names.keys()], [...names.values()]]);
      });
    },
    async servedModels() {
      const { rows } = await database.query(ALL, []);
      return new Map(rows.map((row) => [row.name as string, row.model_id as string]));
    },
  };
}
