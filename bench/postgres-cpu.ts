/** The CPU of the PostgreSQL backends a benchmark's own connections use (the database runs on this machine). */
import { readFileSync } from 'node:fs';
import type pg from 'pg';

/** CPU seconds of the backends serving `applicationName`, from /proc. */
export async function backendCpu(admin: pg.Client, applicationName: string): Promise<number> {
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [applicationName]);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The backend ended meanwhile.
    }
  }
  return ticks / 100;
}
