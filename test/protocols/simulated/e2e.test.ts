/**
 * The official Anthropic SDK against the gateway's messages endpoint, served by the built-in
 * simulated provider: the messages scenarios that need no injected failure.
 */
import { messagesEndToEndSuite } from '../../simulators/messages-e2e.ts';

messagesEndToEndSuite({ kind: 'simulated' });
