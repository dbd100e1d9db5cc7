/** Usage analytics on PostgreSQL, read through the dashboard's reader thread (dashboard-reader.ts). */
import type { DashboardReader } from '../dashboard-thread.ts';
import { type UsageQuery, usageRowFrom, usageStatement, type UsageStore } from '../usage.ts';

export function postgresUsage(reader: DashboardReader): UsageStore {
  const statement = (query: UsageQuery) => usageStatement(query, (index) => `$${index}`);
  return {
    async usage(query) {
      const { text, values } = statement(query);
      return (await reader.all(text, values)).map(usageRowFrom);
    },
    usageText(query, format) {
      const { text, values } = statement(query);
      return reader.formatted(text, values, format);
    },
  };
}
