/** `gateway serve`: the same server as `npm start`; flags override PORT and HOST. */
import { text, type Command } from '../command.ts';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Run the gateway server (same as npm start)',
  usage: '[--port N] [--host H]',
  options: { port: { type: 'string' }, host: { type: 'string' } },
  async run(command, context) {
    const port = text(command, 'port');
    const host = text(command, 'host');
    // Loaded on demand: the other commands start faster without the server's modules.
    const { serve } = await import('../../server/serve.ts');
    return serve({ ...context.env, ...(port === undefined ? {} : { PORT: port }), ...(host === undefined ? {} : { HOST: host }) });
  },
};
