/** `gateway webhooks add|list|remove`. */
import { deletedWebhookEndpointView, webhookEndpointView } from '../../admin/views.ts';
import { flagList, flagOwner, OWNER_OPTIONS, requiredText, type Command } from '../command.ts';

export const webhookCommands: readonly Command[] = [
  {
    name: 'webhooks add',
    summary: 'Register a webhook endpoint for the jobs of an account or organization (the secret is printed once)',
    usage: '--account ID | --organization ID <url> [--event-types response.completed,response.failed,…]',
    options: { ...OWNER_OPTIONS, url: { type: 'string' }, 'event-types': { type: 'string' } },
    positionals: 1,
    async run(command, context) {
      const owner = flagOwner(command, true);
      const endpoint = await (await context.operations()).createWebhookEndpoint({
        owner,
        url: requiredText(command, 'url', 0),
        eventTypes: flagList(command, 'event-types') ?? null,
      });
      context.output.record(webhookEndpointView(endpoint, true));
      context.output.note('\nThe secret is shown only this once; give it to the receiver, which verifies each delivery with it.');
    },
  },
  {
    name: 'webhooks list',
    summary: 'List webhook endpoints (of one owner, or all); never their secrets',
    usage: '[--account ID | --organization ID]',
    options: OWNER_OPTIONS,
    async run(command, context) {
      const endpoints = await (await context.operations()).listWebhookEndpoints(flagOwner(command, false));
      context.output.list(
        endpoints.map((endpoint) => webhookEndpointView(endpoint)),
        ['id', 'account_id', 'organization_id', 'url', 'event_types', 'created_at'],
      );
    },
  },
  {
    name: 'webhooks remove',
    summary: 'Remove a webhook endpoint (its pending deliveries are dropped)',
    usage: '<webhook-id>',
    positionals: 1,
    async run(command, context) {
      const endpoint = await (await context.operations()).removeWebhookEndpoint(requiredText(command, 'id', 0));
      context.output.record(deletedWebhookEndpointView(endpoint));
    },
  },
];
