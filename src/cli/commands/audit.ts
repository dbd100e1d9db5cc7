/** `gateway audit verify|list`: the audit log (docs/dashboard.md, "Audit log"). */
import { verifyAuditChain } from '../../people/audit.ts';
import type { AuditRecord } from '../../storage/people.ts';
import { text, type Command } from '../command.ts';

function auditView(record: AuditRecord) {
  return {
    seq: record.seq,
    at: new Date(record.at).toISOString(),
    actor: record.actor.label,
    action: record.action,
    target: record.target ? `${record.target.kind}:${record.target.id}` : null,
    changes: record.changes,
    source: record.source,
  };
}

export const auditCommands: readonly Command[] = [
  {
    name: 'audit verify',
    summary: 'Check the audit log hash chain from its first row: exit code 1 when a row was changed or removed',
    usage: '',
    async run(_command, context) {
      const check = await verifyAuditChain(await context.store());
      if (check.ok) {
        context.output.record({ ok: true, rows: check.rows });
        return 0;
      }
      context.output.record({ ok: false, rows_verified: check.rows, seq: check.seq, problem: check.problem });
      return 1;
    },
  },
  {
    name: 'audit list',
    summary: 'The latest audit rows, newest first',
    usage: '[--actor EMAIL] [--target ID] [--action NAME] [--limit N]',
    options: { actor: { type: 'string' }, target: { type: 'string' }, action: { type: 'string' }, limit: { type: 'string' } },
    async run(command, context) {
      const limit = Math.min(Math.max(Number(text(command, 'limit') ?? 50) || 50, 1), 1_000);
      const page = await (await context.store()).listAudit(
        { actor: text(command, 'actor'), targetId: text(command, 'target'), action: text(command, 'action') },
        { limit },
      );
      context.output.list(page.items.map(auditView), ['seq', 'at', 'actor', 'action', 'target', 'source']);
    },
  },
];
