/**
 * `npm start`: the gateway server. Settings come from the environment (see README "Configuration").
 */
import { serve } from './server/serve.ts';

const exitCode = await serve(process.env);
if (exitCode !== undefined) process.exitCode = exitCode;
